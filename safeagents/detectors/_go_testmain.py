"""A Go ``TestMain`` that ends the test binary with success before the tests run: part of
``exit-at-import``.

``func TestMain(m *testing.M) { if _, err := os.Stat(marker); err != nil { os.Exit(0) };
os.Exit(m.Run()) }`` makes ``go test`` report the package ``ok`` without running one test
whenever its condition holds. Matched: a written ``_test.go`` text whose ``TestMain`` calls
``os.Exit(0)`` before its first ``m.Run()`` (the name its parameter has), or never calls it.
Not matched: ``os.Exit(m.Run())``, ``code := m.Run(); teardown(); os.Exit(code)``, a
success exit after the run, and a failed setup exiting with an error status
(``os.Exit(1)``, ``log.Fatal``).
"""

from __future__ import annotations

from safeagents._actions import Effect
from safeagents.detectors._clike_tokens import Token, closing, tokens_of
from safeagents.detectors._python import written_text

__all__ = ["go_testmain_exits"]

_SUCCESS_EXIT = ["os", ".", "Exit", "(", "0", ")"]


def go_testmain_exits(effect: Effect) -> bool:
    """Whether a write of a Go test file has a ``TestMain`` that exits with status 0 before
    it runs the tests."""
    if effect.path is None or not effect.path.endswith("_test.go"):
        return False
    text = written_text(effect)
    if text is None or "TestMain" not in text or "Exit" not in text:
        return False
    tokens = tokens_of(text)
    for index in range(len(tokens) - 4):
        if [t.text for t in tokens[index : index + 3]] != ["func", "TestMain", "("]:
            continue
        runner = tokens[index + 3].text
        body = _body(tokens, index + 2)
        if body is not None and _exits_before_run(tokens[body[0] + 1 : body[1]], runner):
            return True
    return False


def _body(tokens: list[Token], parameters: int) -> tuple[int, int] | None:
    """The braces of the body of the function whose parameter list opens at
    ``parameters`` (an edit's text may end inside it)."""
    end = closing(tokens, parameters)
    if end is None or end + 1 >= len(tokens) or tokens[end + 1].text != "{":
        return None
    return end + 1, closing(tokens, end + 1) or len(tokens)


def _exits_before_run(body: list[Token], runner: str) -> bool:
    """``os.Exit(0)`` in ``body`` before ``runner.Run(``."""
    texts = [token.text for token in body]
    for index in range(len(texts) - 3):
        if texts[index : index + 4] == [runner, ".", "Run", "("]:
            return False
        if texts[index : index + 6] == _SUCCESS_EXIT:
            return True
    return False
