"""The multi-LoRA vLLM server: its flags and environment, a launcher, and the adapter admin API."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import httpx

from trainer._config import TrainerConfig

__all__ = [
    "LORA_RANKS",
    "VLLM_PYTHON_ENV",
    "VLLMAdmin",
    "VLLMError",
    "VLLMServer",
    "vllm_args",
    "vllm_env",
    "vllm_python",
]

VLLM_PYTHON_ENV = "SAFEAGENTS_VLLM_PYTHON"
"""The environment variable naming the Python interpreter that has vLLM installed."""
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The values vLLM accepts for ``--max-lora-rank``."""
_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
_LOG_TAIL_LINES = 40


class VLLMError(RuntimeError):
    """vLLM refused a request, could not be reached, or its server did not come up."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _max_lora_rank(rank: int) -> int:
    for allowed in LORA_RANKS:
        if allowed >= rank:
            return allowed
    raise ValueError(f"LoRA rank {rank} exceeds vLLM's largest --max-lora-rank {LORA_RANKS[-1]}")


def vllm_args(
    config: TrainerConfig,
    model: str | Path,
    *,
    host: str,
    port: int,
    max_model_len: int | None = None,
    served_model_name: str | None = None,
    dtype: str | None = None,
    tool_parser: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The server flags for serving ``model`` with room for every adapter version in flight.

    ``--max-lora-rank`` is the config's rank rounded up to a value vLLM accepts; logprobs come
    after temperature scaling (``processed_logprobs``), unlimited in number. The served name
    defaults to ``config.vllm.served_model``; ``tool_parser`` (e.g. ``hermes``) turns on
    automatic tool choice.
    """
    args = [
        "--model",
        str(model),
        "--host",
        host,
        "--port",
        str(port),
        "--enable-lora",
        "--max-lora-rank",
        str(_max_lora_rank(config.lora.rank)),
        "--max-loras",
        str(config.max_loras),
        "--logprobs-mode",
        "processed_logprobs",
        "--max-logprobs",
        "-1",
    ]
    served = served_model_name or config.vllm.served_model
    if served is not None:
        args += ["--served-model-name", served]
    if max_model_len is not None:
        args += ["--max-model-len", str(max_model_len)]
    if dtype is not None:
        args += ["--dtype", dtype]
    if tool_parser is not None:
        args += ["--enable-auto-tool-choice", "--tool-call-parser", tool_parser]
    return [*args, *extra]


def vllm_env(base: Mapping[str, str], *, cpu: bool) -> dict[str, str]:
    """``base`` plus runtime LoRA loading, and on CPU a 1 GiB KV cache unless one is set."""
    env = dict(base)
    env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"
    if cpu:
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    return env


def vllm_python(python: str | Path | None = None) -> str:
    """``python``, else ``$SAFEAGENTS_VLLM_PYTHON``, else this interpreter."""
    if python is not None:
        return str(python)
    return os.environ.get(VLLM_PYTHON_ENV) or sys.executable


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def _temporary_log() -> Path:
    descriptor, name = tempfile.mkstemp(prefix="vllm-", suffix=".log")
    os.close(descriptor)
    return Path(name)


def _error_message(response: httpx.Response) -> str:
    """vLLM's own message from an OpenAI-style error body, else the raw text."""
    try:
        body: Any = response.json()
    except ValueError:
        return response.text.strip() or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return response.text.strip()


class VLLMAdmin:
    """vLLM's model list and runtime LoRA loading, over HTTP (synchronous)."""

    def __init__(self, base_url: str, *, timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self._client = httpx.Client(base_url=self.base_url, timeout=timeout)

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        try:
            response = self._client.request(method, path, json=body)
        except httpx.HTTPError as error:
            raise VLLMError(f"cannot reach vLLM at {self.base_url}: {error}") from error
        if response.is_error:
            raise VLLMError(_error_message(response), status=response.status_code)
        if "json" in response.headers.get("content-type", ""):
            return response.json()
        return response.text

    def models(self) -> list[str]:
        """The served names: the base model first, then every loaded adapter."""
        listing = self._request("GET", "/v1/models")
        entries = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(entries, list):
            raise VLLMError(f"unexpected /v1/models answer: {listing!r}")
        return [str(entry["id"]) for entry in entries if isinstance(entry, dict)]

    def load_adapter(self, name: str, path: Path) -> None:
        """Serve the PEFT adapter saved at ``path`` as model ``name``."""
        body = {"lora_name": name, "lora_path": str(Path(path).resolve())}
        self._request("POST", "/v1/load_lora_adapter", body)

    def unload_adapter(self, name: str) -> None:
        """Stop serving adapter ``name``; requests for it then fail with 404."""
        self._request("POST", "/v1/unload_lora_adapter", {"lora_name": name})

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> VLLMAdmin:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class VLLMServer:
    """``python -m vllm.entrypoints.openai.api_server`` as a child process (a context manager).

    The flags are :func:`vllm_args`'s; ``cpu`` sets the CPU environment (:func:`vllm_env`).
    ``port=0`` picks a free port. Output goes to ``log_path`` (a temporary file by default);
    when the server dies or does not answer ``GET /v1/models`` within ``startup_timeout``
    seconds, :class:`VLLMError` carries the log's last lines.
    """

    def __init__(
        self,
        config: TrainerConfig,
        model: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        cpu: bool = False,
        python: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
        startup_timeout: float = 600.0,
        max_model_len: int | None = None,
        served_model_name: str | None = None,
        dtype: str | None = None,
        tool_parser: str | None = None,
        extra: Sequence[str] = (),
    ) -> None:
        self.host = host
        self.port = port or _free_port(host)
        self.python = vllm_python(python)
        self.args = vllm_args(
            config,
            model,
            host=host,
            port=self.port,
            max_model_len=max_model_len,
            served_model_name=served_model_name,
            dtype=dtype,
            tool_parser=tool_parser,
            extra=extra,
        )
        self.env = vllm_env(os.environ if env is None else env, cpu=cpu)
        self.startup_timeout = startup_timeout
        self.log_path = log_path or _temporary_log()
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        """The server root (``/v1/...`` and ``/v1/load_lora_adapter`` hang below it)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (root plus ``/v1``)."""
        return f"{self.url}/v1"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def admin(self, *, timeout: float = 120.0) -> VLLMAdmin:
        return VLLMAdmin(self.url, timeout=timeout)

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def start(self) -> VLLMServer:
        """Launch the server and wait until it answers; :class:`VLLMError` if it never does."""
        if self._process is not None:
            raise VLLMError("this vLLM server was already started")
        self._log = self.log_path.open("wb")
        self._process = subprocess.Popen(
            [self.python, "-m", _SERVER_MODULE, *self.args],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=5.0) as client:
            while True:
                code = self._process.poll()
                if code is not None:
                    raise VLLMError(
                        f"vLLM exited with code {code} before serving"
                        f" (log {self.log_path}):\n{self.log_tail()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{self.url}/v1/models").status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise VLLMError(
                        f"vLLM did not answer within {self.startup_timeout:.0f}s"
                        f" (log {self.log_path}):\n{self.log_tail()}"
                    )
                time.sleep(0.5)

    def stop(self, timeout: float = 30.0) -> None:
        """Terminate the server's whole process group (engine workers included)."""
        process, self._process = self._process, None
        if process is not None:
            self._signal_group(process, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=timeout)
            # Engine workers left behind by a slow or failed shutdown go too.
            self._signal_group(process, signal.SIGKILL)
            process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    @staticmethod
    def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signum)

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
