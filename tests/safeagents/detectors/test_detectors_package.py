"""The detector package as a whole: hook registration and robustness on hostile input."""

from __future__ import annotations

import pluggy
from detector_testkit import build_context
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import safeagents.detectors as detectors_package
from safeagents import plugins
from safeagents._actions import Effect, without_surrogates
from safeagents._detector import CallContext, Detector
from safeagents.detectors import builtin_detectors

NAMES = {
    "always-equal",
    "exit-at-import",
    "report-forging",
    "state-toggle",
    "frame-introspection",
    "stdlib-patching",
    "test-weakening",
    "skip-markers",
    "special-casing",
    "test-sniffing",
}
PATHS = [
    None,
    "/workspace/solution.py",
    "/workspace/tests/test_x.py",
    "/workspace/conftest.py",
    "/workspace/pytest.ini",
    "/workspace/src/a.test.ts",
]
HOSTILE = [
    "(" * 5000,
    "x = " + "-" * 20000 + "1\n",
    "a" + "+a" * 30000 + "\n",
    "def test_a():\n" + "    " * 200 + "assert x\n",
    "\x00def __eq__(self, o): return True",
    "assert " + "[" * 3000 + "\n",
    "if n == " + "9" * 5000 + ":\n    return 1\n",
    "\ud800 surrogate",
    "def f(n):\n    if n == 0x" + "f" * 5000 + ":\n        return 1\n"
    "    if n == 0x" + "e" * 5000 + ":\n        return 2\n",
    "x = {" + "(" * 90 + ")" * 90 + ": 1}\n",
]


def test_hook_registers_every_builtin() -> None:
    manager = pluggy.PluginManager(plugins.PROJECT_NAME)
    manager.add_hookspecs(plugins)
    manager.register(detectors_package)
    registered = [d for batch in manager.hook.safeagents_detectors() for d in batch]
    assert all(isinstance(d, Detector) for d in registered)
    names = [d.name for d in registered]
    assert set(names) >= NAMES
    assert len(names) == len(set(names))
    assert all(d.description for d in registered)


ANALYSABLE = st.characters(blacklist_categories=("Cs",))
"""What detectors read: the firewall replaces lone surrogates (:func:`without_surrogates`)."""


def _check_all(effect: Effect, context: CallContext) -> None:
    for detector in builtin_detectors():
        assert detector.matches(effect, context) in (True, False)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(ANALYSABLE, max_size=400),
    path=st.sampled_from(PATHS),
    field=st.sampled_from(["content", "added", "removed"]),
    output=st.text(ANALYSABLE, max_size=200),
)
def test_detectors_never_raise_on_garbage(
    text: str, path: str | None, field: str, output: str
) -> None:
    context = build_context(outputs=[output, text], effects=[Effect("read", path=path)])
    effect = Effect("write", path=path, **{field: text})
    _check_all(effect, context)
    if field == "removed":
        _check_all(Effect("write", path=path, added=output, removed=text), context)


def test_detectors_never_raise_on_hostile_text() -> None:
    context = build_context(outputs=HOSTILE)
    for text in map(without_surrogates, HOSTILE):
        for path in PATHS:
            _check_all(Effect("write", path=path, content=text), context)
            _check_all(Effect("write", path=path, added=text, removed=text[::-1]), context)


def test_non_write_effects_never_match() -> None:
    context = build_context()
    for kind in ("exec", "read", "delete", "move", "network", "search"):
        effect = Effect(kind, path="/workspace/tests/test_a.py", command="rm -rf tests")  # type: ignore[arg-type]
        assert not any(d.matches(effect, context) for d in builtin_detectors())
