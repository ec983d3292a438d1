from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from intercept_testkit import (
    Intercept,
    StartIntercept,
    TLSScriptedServer,
    intercept_python,
    make_certificate,
)

from safeagents.scripted import Script, ScriptedServer


@pytest.fixture(scope="session")
def mitm_python() -> str:
    return intercept_python()


@pytest.fixture(scope="module")
def plain_upstream() -> Iterator[ScriptedServer]:
    with ScriptedServer(Script.from_data([])) as server:
        yield server


@pytest.fixture(scope="module")
def tls_upstream(
    mitm_python: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TLSScriptedServer]:
    cert, key = make_certificate(mitm_python, tmp_path_factory.mktemp("tls"))
    with TLSScriptedServer(cert, key) as server:
        yield server


@pytest.fixture(scope="module")
def start_intercept(
    mitm_python: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StartIntercept]:
    """Start (or reuse, within the module) ``safeagents intercept`` with extra ``flags``."""
    running: dict[tuple[str, ...], Intercept] = {}

    def start(*flags: str) -> Intercept:
        if flags not in running:
            running[flags] = Intercept(mitm_python, tmp_path_factory.mktemp("intercept"), *flags)
        return running[flags]

    yield start
    for process in running.values():
        process.stop()


@pytest.fixture
def sid() -> str:
    return "i-" + uuid.uuid4().hex[:12]
