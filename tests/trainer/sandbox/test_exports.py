import importlib

import pytest

import trainer.sandbox


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(trainer.sandbox) if not name.startswith("_")}
    assert sorted(trainer.sandbox.__all__) == sorted(public)


@pytest.mark.parametrize("module", ["_cgroup", "_harbor", "_local", "_select"])
def test_private_modules_export_what_they_define(module: str) -> None:
    loaded = importlib.import_module(f"trainer.sandbox.{module}")
    assert loaded.__all__ == sorted(loaded.__all__, key=lambda name: (not name.isupper(), name))
    assert all(hasattr(loaded, name) for name in loaded.__all__)
