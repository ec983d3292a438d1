"""One Harbor environment, driven over JSON lines: run by the ``harbor`` backend with Harbor's
virtualenv (``python -m trainer.sandbox._harbor_worker``), one process per sandbox.

Each request is one line on stdin, ``{"op": ..., ...}``; each answer one line on the stream
that was stdout when it started (Harbor's own output goes to stderr): ``{"ok": true, ...}``
or ``{"ok": false, "error": "..."}``. The operations: ``start`` (make the environment the way
Harbor's trials do, from a type such as ``docker`` or an import path, and start it),
``upload`` (a directory; ``writable`` is honoured where the environment can), ``exec``,
``download`` (a file), ``download_dir`` and ``stop``, after which the worker exits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from harbor.environments.base import BaseEnvironment
from harbor.environments.factory import EnvironmentFactory
from harbor.models.task.config import EnvironmentConfig, TaskConfig
from harbor.models.trial.config import EnvironmentConfig as TrialEnvironmentConfig
from harbor.models.trial.paths import TrialPaths

from trainer.sandbox._protocol import ExecResult, Limits, ProxyAccess

__all__ = ["main"]


def _task_environment(task_toml: str | None) -> EnvironmentConfig:
    if task_toml is None or not Path(task_toml).is_file():
        return EnvironmentConfig()
    return TaskConfig.model_validate_toml(Path(task_toml).read_text()).environment


class Worker:
    """Holds the environment between requests."""

    def __init__(self) -> None:
        self.environment: BaseEnvironment | None = None
        self.trial_dir: str | None = None

    @property
    def env(self) -> BaseEnvironment:
        if self.environment is None:
            raise RuntimeError("the environment is not started")
        return self.environment

    async def start(self, request: dict[str, Any]) -> dict[str, Any]:
        spec = str(request["environment"])
        config = (
            TrialEnvironmentConfig(import_path=spec, kwargs=request.get("options") or {})
            if ":" in spec
            else TrialEnvironmentConfig(type=spec, kwargs=request.get("options") or {})
        )
        self.trial_dir = tempfile.mkdtemp(prefix="harbor-trial-")
        paths = TrialPaths(Path(self.trial_dir))
        paths.mkdir()
        self.environment = EnvironmentFactory.create_environment_from_config(
            config,
            environment_dir=Path(request["environment_dir"]),
            environment_name=str(request["name"]),
            session_id=str(request["session_id"]),
            trial_paths=paths,
            task_env_config=_task_environment(request.get("task_toml")),
        )
        await self.environment.start(force_build=False)
        return {"type": str(self.environment.type())}

    async def upload(self, request: dict[str, Any]) -> dict[str, Any]:
        add_dir = getattr(self.env, "add_dir", None)
        if add_dir is not None:
            await add_dir(Path(request["source"]), request["target"], writable=request["writable"])
        else:
            await self.env.upload_dir(request["source"], request["target"])
        return {}

    async def exec(self, request: dict[str, Any]) -> dict[str, Any]:
        limits = Limits(**request["limits"])
        proxy = ProxyAccess(**request["proxy"]) if request.get("proxy") else None
        limited = getattr(self.env, "exec_limited", None)
        if limited is not None:
            result: ExecResult = await limited(
                request["argv"],
                env=request["env"],
                cwd=request.get("cwd"),
                limits=limits,
                proxy=proxy,
            )
            return {"result": dataclasses.asdict(result)}
        if proxy is not None:
            raise RuntimeError(
                f"the {self.env.type()} environment cannot confine a command's network to the "
                "proxy; only environments with exec_limited (safeagents' bwrap one) run agents"
            )
        loop = asyncio.get_running_loop()
        began = loop.time()
        timed_out = False
        try:
            done = await self.env.exec(
                shlex.join(request["argv"]),
                cwd=request.get("cwd"),
                env=request["env"],
                timeout_sec=math.ceil(limits.wall_seconds),
            )
            code, stdout, stderr = done.return_code, done.stdout or "", done.stderr or ""
        except (TimeoutError, RuntimeError) as problem:
            if "timed out" not in str(problem) and not isinstance(problem, TimeoutError):
                raise
            timed_out, code, stdout, stderr = True, None, "", str(problem)
        seconds = loop.time() - began
        result = ExecResult(code, stdout, stderr, seconds, timed_out=timed_out)
        return {"result": dataclasses.asdict(result)}

    async def download(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            await self.env.download_file(request["source"], request["target"])
        except FileNotFoundError:
            return {"found": False}
        return {"found": Path(request["target"]).is_file()}

    async def download_dir(self, request: dict[str, Any]) -> dict[str, Any]:
        await self.env.download_dir(request["source"], request["target"])
        return {}

    async def stop(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.environment is not None:
            await self.environment.stop(delete=True)
            self.environment = None
        return {}


async def _serve(requests: TextIO, answers: TextIO) -> None:
    worker = Worker()
    handlers = {
        "start": worker.start,
        "upload": worker.upload,
        "exec": worker.exec,
        "download": worker.download,
        "download_dir": worker.download_dir,
        "stop": worker.stop,
    }
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, requests.readline)
        if not line:
            await worker.stop({})
            return
        op = None
        try:
            request = json.loads(line)
            op = request["op"]
            answer = {"ok": True, **await handlers[op](request)}
        except Exception as problem:  # every failure is an answer, the worker goes on
            answer = {"ok": False, "error": f"{type(problem).__name__}: {problem}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
        if op == "stop":
            return


def main() -> None:
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # Harbor's prints go to stderr
    asyncio.run(_serve(sys.stdin, answers))


if __name__ == "__main__":
    main()
