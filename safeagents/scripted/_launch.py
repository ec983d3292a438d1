"""Launch recipes: run a real agent harness non-interactively against a model base URL.

Each recipe writes the harness's config into an isolated state directory (its own HOME
and XDG dirs), so nothing is read from or leaks into the user's real configuration.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from safeagents.scripted import _recipes

__all__ = [
    "HARNESSES",
    "HarnessLaunch",
    "HarnessRun",
    "find_harness",
    "harness_root",
    "prepare_launch",
    "run_harness",
]

HARNESSES: tuple[str, ...] = ("opencode", "pi", "hermes", "codex", "claude")
API_KEY = "sk-scripted-local"


@dataclass(frozen=True, slots=True)
class HarnessLaunch:
    """Everything needed to start one harness run: argv, full environment, working dir."""

    harness: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    config_files: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class HarnessRun:
    """The outcome of a harness run."""

    launch: HarnessLaunch
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float

    @property
    def output(self) -> str:
        return f"{self.stdout}\n{self.stderr}".strip()


def harness_root() -> Path:
    """Where ``scripts/install-harnesses`` puts harnesses (``$SAFEAGENTS_HARNESS_DIR`` wins)."""
    override = os.environ.get("SAFEAGENTS_HARNESS_DIR")
    if override:
        return Path(override)
    repo = Path(__file__).resolve().parents[2] / ".harnesses"
    local = Path.cwd() / ".harnesses"
    return local if local.is_dir() or not repo.is_dir() else repo


_BINARIES: Mapping[str, tuple[str, str]] = {
    "opencode": ("opencode/node_modules/.bin/opencode", "opencode"),
    "pi": ("pi/node_modules/.bin/pi", "pi"),
    "codex": ("codex/node_modules/.bin/codex", "codex"),
    "claude": ("claude/node_modules/.bin/claude", "claude"),
    "hermes": ("hermes-venv/bin/hermes", "hermes"),
}


def find_harness(name: str, root: Path | None = None, use_path: bool = False) -> Path | None:
    """The harness executable installed under ``root`` (or, with ``use_path``, on ``$PATH``)."""
    if name not in _BINARIES:
        raise ValueError(f"unknown harness {name!r}; known: {', '.join(HARNESSES)}")
    relative, command = _BINARIES[name]
    candidate = (root or harness_root()) / relative
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    found = shutil.which(command) if use_path else None
    return Path(found) if found else None


def _base_env(state: Path, extra_path: tuple[str, ...]) -> dict[str, str]:
    home = state / "home"
    dirs = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local/share",
        "XDG_STATE_HOME": home / ".local/state",
        "XDG_CACHE_HOME": home / ".cache",
        "TMPDIR": state / "tmp",
    }
    for directory in dirs.values():
        directory.mkdir(parents=True, exist_ok=True)
    node = shutil.which("node")
    path_entries = [*extra_path, *([str(Path(node).parent)] if node else [])]
    path_entries += ["/usr/local/bin", "/usr/bin", "/bin"]
    env = {key: str(value) for key, value in dirs.items()}
    env |= {
        "PATH": os.pathsep.join(dict.fromkeys(path_entries)),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
    }
    for passthrough in ("SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS"):
        if passthrough in os.environ:
            env[passthrough] = os.environ[passthrough]
    return env


def _login_profile(path: str) -> str:
    """A login-shell profile restoring our ``$PATH``; ``/etc/profile`` resets it and harnesses
    (hermes, codex) run commands in login shells."""
    return f"export PATH={shlex.quote(path)}\n"


Recipe = Callable[[_recipes.RecipeInput], _recipes.RecipeOutput]
_RECIPES: Mapping[str, Recipe] = {
    "opencode": _recipes.opencode,
    "pi": _recipes.pi,
    "hermes": _recipes.hermes,
    "codex": _recipes.codex,
    "claude": _recipes.claude,
}


def prepare_launch(
    harness: str,
    base_url: str,
    model: str,
    workspace: Path,
    prompt: str,
    state_dir: Path,
    binary: Path | None = None,
    extra_path: tuple[str, ...] = (str(Path(sys.executable).parent),),
    extra_env: Mapping[str, str] | None = None,
    api_key: str | None = None,
    *,
    thinking: bool = False,
) -> HarnessLaunch:
    """Write ``harness``'s config under ``state_dir`` and return how to run it.

    ``thinking`` switches the model's reasoning on in harness configs that have a switch
    (pi's ``reasoning``, claude's thinking budget).

    ``api_key`` is the harness's API key (default: a placeholder): the session key of a
    proxy that has a token (docs/security.md).

    ``base_url`` is the OpenAI-style base (``http://host:port/v1`` or ``.../s/ID/v1``);
    ``extra_path`` goes first on ``$PATH`` (default: this Python's bin dir, so the agent's
    ``python`` is the one running safeagents).
    """
    if harness not in _RECIPES:
        raise ValueError(f"unknown harness {harness!r}; known: {', '.join(HARNESSES)}")
    executable = binary or find_harness(harness)
    if executable is None:
        raise FileNotFoundError(f"{harness} is not installed (run scripts/install-harnesses)")
    state = state_dir.resolve()
    env = _base_env(state, extra_path)
    request = _recipes.RecipeInput(
        base_url=base_url.rstrip("/"),
        model=model,
        workspace=workspace.resolve(),
        prompt=prompt,
        state=state,
        home=Path(env["HOME"]),
        api_key=api_key or API_KEY,
        thinking=thinking,
    )
    output = _RECIPES[harness](request)
    files = {**output.files, request.home / ".profile": _login_profile(env["PATH"])}
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    env |= output.env
    env |= dict(extra_env or {})
    return HarnessLaunch(
        harness=harness,
        argv=[str(executable), *output.args],
        env=env,
        cwd=request.workspace,
        config_files=tuple(files),
    )


def run_harness(launch: HarnessLaunch, timeout: float = 180.0) -> HarnessRun:
    """Run a prepared harness to completion (stdin closed); kill its process group on timeout."""
    started = time.monotonic()
    process = subprocess.Popen(
        launch.argv,
        cwd=launch.cwd,
        env=launch.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process.pid)
        stdout, stderr = process.communicate()
    _kill_group(process.pid)  # helpers the harness left behind (servers, shells)
    return HarnessRun(
        launch=launch,
        returncode=process.returncode,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
