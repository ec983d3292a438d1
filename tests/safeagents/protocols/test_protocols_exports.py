import importlib

import pytest

import safeagents.protocols


def test_the_translation_api_is_exported() -> None:
    exported = set(safeagents.protocols.__all__)
    translation = {"ChatBridge", "MessagesBridge", "ResponsesBridge", "chat_bridge"}
    assert translation | {"Sampling", "SamplingError", "TOKENS_KEY"} <= exported
    for name in exported:
        assert getattr(safeagents.protocols, name) is not None, name


@pytest.mark.parametrize(
    "module", ["_bridge", "_bridge_messages", "_bridge_responses", "_bridge_stream", "_sampling"]
)
def test_each_translation_module_exports_what_it_defines(module: str) -> None:
    loaded = importlib.import_module(f"safeagents.protocols.{module}")
    for name in loaded.__all__:
        value = getattr(loaded, name)
        assert name.isupper() or value.__module__ == loaded.__name__, name
