"""The vLLM launcher without vLLM: flags, environment, interpreter choice, admin errors, startup."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from trainer._config import TrainerConfig
from trainer._vllm import (
    VLLM_PYTHON_ENV,
    VLLMAdmin,
    VLLMError,
    VLLMServer,
    vllm_args,
    vllm_env,
    vllm_python,
)


def _config(**overrides: Any) -> TrainerConfig:
    data: dict[str, Any] = {"base_model": "tiny", "harnesses": ["pi", "opencode"], **overrides}
    return TrainerConfig.model_validate(data)


def _flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_args_size_lora_slots_from_the_config() -> None:
    config = _config(lora={"rank": 32}, grpo={"max_staleness": 3})
    args = vllm_args(config, Path("/models/tiny"), host="127.0.0.1", port=8123)
    assert _flag(args, "--model") == "/models/tiny"
    assert (_flag(args, "--host"), _flag(args, "--port")) == ("127.0.0.1", "8123")
    assert "--enable-lora" in args
    assert _flag(args, "--max-lora-rank") == "32"
    assert _flag(args, "--max-loras") == str(2 * (3 + 2))
    assert _flag(args, "--logprobs-mode") == "processed_logprobs"
    assert _flag(args, "--max-logprobs") == "-1"
    for absent in (
        "--enable-auto-tool-choice",
        "--max-model-len",
        "--dtype",
        "--served-model-name",
    ):
        assert absent not in args


@pytest.mark.parametrize(
    ("rank", "flag"), [(1, "1"), (4, "8"), (16, "16"), (24, "32"), (300, "320")]
)
def test_the_rank_is_rounded_up_to_one_vllm_accepts(rank: int, flag: str) -> None:
    args = vllm_args(_config(lora={"rank": rank}), "m", host="h", port=1)
    assert _flag(args, "--max-lora-rank") == flag


def test_a_rank_beyond_vllms_largest_is_refused() -> None:
    with pytest.raises(ValueError, match="513"):
        vllm_args(_config(lora={"rank": 513}), "m", host="h", port=1)


def test_optional_flags_are_added_only_when_asked() -> None:
    args = vllm_args(
        _config(),
        "m",
        host="0.0.0.0",
        port=9,
        max_model_len=1024,
        served_model_name="base",
        dtype="float32",
        tool_parser="hermes",
        extra=["--seed", "7"],
    )
    assert _flag(args, "--max-model-len") == "1024"
    assert _flag(args, "--served-model-name") == "base"
    assert _flag(args, "--dtype") == "float32"
    assert _flag(args, "--tool-call-parser") == "hermes"
    assert "--enable-auto-tool-choice" in args
    assert args[-2:] == ["--seed", "7"]


def test_the_served_name_defaults_to_the_configs() -> None:
    args = vllm_args(_config(vllm={"served_model": "qwen"}), "/m", host="h", port=1)
    assert _flag(args, "--served-model-name") == "qwen"


def test_env_allows_runtime_lora_and_sizes_the_cpu_cache() -> None:
    base = {"PATH": "/bin", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "False"}
    gpu = vllm_env(base, cpu=False)
    assert gpu == {"PATH": "/bin", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"}
    assert vllm_env(base, cpu=True)["VLLM_CPU_KVCACHE_SPACE"] == "1"
    assert vllm_env({"VLLM_CPU_KVCACHE_SPACE": "4"}, cpu=True)["VLLM_CPU_KVCACHE_SPACE"] == "4"
    assert base["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "False"


def test_the_interpreter_comes_from_the_argument_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(VLLM_PYTHON_ENV, "/opt/vllm/bin/python")
    assert vllm_python("/x/python") == "/x/python"
    assert vllm_python() == "/opt/vllm/bin/python"
    monkeypatch.delenv(VLLM_PYTHON_ENV)
    assert vllm_python() == sys.executable


class _FakeVLLM(BaseHTTPRequestHandler):
    """vLLM's adapter endpoints, answering as vLLM 0.32 does (404s carry an OpenAI error)."""

    adapters: ClassVar[list[str]] = []

    def _reply(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        names = ["base", *self.adapters]
        self._reply(200, {"object": "list", "data": [{"id": name} for name in names]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        name = body["lora_name"]
        if self.path == "/v1/load_lora_adapter" and Path(body["lora_path"]).is_dir():
            self.adapters.append(name)
            self._reply(200, "ok")
        elif self.path == "/v1/unload_lora_adapter" and name in self.adapters:
            self.adapters.remove(name)
            self._reply(200, "ok")
        else:
            message = f"The lora adapter '{name}' cannot be found."
            self._reply(404, {"error": {"message": message, "type": "NotFoundError"}})

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def fake_vllm() -> Iterator[str]:
    _FakeVLLM.adapters = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeVLLM)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_admin_loads_lists_and_unloads(fake_vllm: str, tmp_path: Path) -> None:
    with VLLMAdmin(fake_vllm + "/v1/") as admin:
        admin.load_adapter("pi-v1", tmp_path)
        assert admin.models() == ["base", "pi-v1"]
        admin.unload_adapter("pi-v1")
        assert admin.models() == ["base"]
        with pytest.raises(VLLMError, match="'pi-v1' cannot be found") as raised:
            admin.unload_adapter("pi-v1")
        assert raised.value.status == 404
        with pytest.raises(VLLMError, match="cannot be found"):
            admin.load_adapter("pi-v2", tmp_path / "missing")


def test_admin_reports_an_unreachable_server() -> None:
    with VLLMAdmin("http://127.0.0.1:1", timeout=2) as admin, pytest.raises(VLLMError) as raised:
        admin.models()
    assert "cannot reach vLLM" in str(raised.value) and raised.value.status is None


def _script(tmp_path: Path, body: str) -> Path:
    """A stand-in interpreter: ``python -m vllm...`` runs ``body`` instead of vLLM."""
    path = tmp_path / "fake-python"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_a_server_that_dies_reports_its_exit_code_and_log(tmp_path: Path) -> None:
    python = _script(tmp_path, 'echo "ValueError: head_dim 16 is not supported"; exit 3')
    server = VLLMServer(_config(), "m", python=python, log_path=tmp_path / "vllm.log")
    with pytest.raises(VLLMError, match="exited with code 3") as raised, server:
        pass
    assert "head_dim 16 is not supported" in str(raised.value)
    assert not server.running


def test_a_server_that_never_answers_times_out_and_is_stopped(tmp_path: Path) -> None:
    python = _script(tmp_path, 'echo "loading"; exec sleep 60')
    server = VLLMServer(_config(), "m", python=python, startup_timeout=1.0)
    with pytest.raises(VLLMError, match="did not answer within 1s") as raised:
        server.start()
    assert "loading" in str(raised.value)
    assert not server.running


def test_the_server_runs_the_vllm_module_with_its_flags_and_env(tmp_path: Path) -> None:
    record = tmp_path / "argv"
    python = _script(tmp_path, f'echo "$@" > {record}; echo "$VLLM_CPU_KVCACHE_SPACE" >> {record}')
    server = VLLMServer(_config(), "/m", python=python, cpu=True, env={}, max_model_len=512)
    with pytest.raises(VLLMError):
        server.start()
    argv, cache = record.read_text().splitlines()
    assert argv.startswith("-m vllm.entrypoints.openai.api_server --model /m --host 127.0.0.1")
    assert f"--port {server.port}" in argv and "--max-model-len 512" in argv
    assert cache == "1"
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
