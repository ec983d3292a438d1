"""codex (0.171) names its session in a hyphenated ``session-id`` header, not ``session_id``."""

from safeagents.exchange._identity import resolve_identity
from safeagents.proxy import SESSION_HEADERS

CODEX_HEADERS = {
    "session-id": "01a237f9-25e4-75a3-a0ce-6a36237f9c0e",
    "thread-id": "01a237f9-25e4-75a3-a0ce-6a36237f9c0e",
    "authorization": "Bearer sk-local",
}


def test_codex_session_header_names_the_session() -> None:
    identity = resolve_identity(None, CODEX_HEADERS, "root-hash")
    assert (identity.id, identity.source) == (CODEX_HEADERS["session-id"], "header")


def test_two_codex_runs_of_one_task_are_two_sessions() -> None:
    other = {**CODEX_HEADERS, "session-id": "01a237f9-0000-0000-0000-000000000001"}
    first = resolve_identity(None, CODEX_HEADERS, "same-task")
    second = resolve_identity(None, other, "same-task")
    assert first.id != second.id


def test_underscore_spelling_still_wins_over_the_hyphenated_one() -> None:
    headers = {"session_id": "older-codex", "session-id": "newer-codex"}
    assert resolve_identity(None, headers, "r").id == "older-codex"
    assert SESSION_HEADERS.index("session_id") < SESSION_HEADERS.index("session-id")


def test_path_and_key_still_come_first() -> None:
    assert resolve_identity("by-path", CODEX_HEADERS, "r").source == "path"
    keyed = {**CODEX_HEADERS, "authorization": "Bearer sa-by-key"}
    assert resolve_identity(None, keyed, "r").id == "by-key"
