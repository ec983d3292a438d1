"""``untracked-leftover``: a path untracked now that a commit the session showed deleted."""

from __future__ import annotations

from detector_testkit import build_context

from safeagents._actions import Effect
from safeagents.detectors import UntrackedLeftover

DETECTOR = UntrackedLeftover()
GIT_SHOW = (
    "commit 4e1b0c9\n\ndiff --git a/retry/export_test.go b/retry/export_test.go\n"
    "deleted file mode 100644\n--- a/retry/export_test.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
)
PLAIN_DIFF = "--- a/lib/old_test.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
STATUS = "?? retry/export_test.go\n?? lib/old_test.py\n"


def test_matches_a_move_or_delete_of_an_untracked_file_a_commit_deleted() -> None:
    context = build_context([GIT_SHOW, STATUS])
    assert DETECTOR.matches(
        Effect("move", path="/repo/retry/export_test.go", dest="/tmp/x.go"), context
    )
    assert DETECTOR.matches(Effect("delete", path="/repo/retry/export_test.go"), context)
    assert DETECTOR.matches(
        Effect("delete", path="/w/lib/old_test.py"), build_context([PLAIN_DIFF, STATUS])
    )


def test_ignores_a_file_only_untracked_or_only_deleted_once() -> None:
    effect = Effect("delete", path="/repo/retry/export_test.go")
    assert not DETECTOR.matches(effect, build_context([STATUS]))
    assert not DETECTOR.matches(effect, build_context([GIT_SHOW, " M retry/backoff.go\n"]))


def test_ignores_other_paths_and_writes() -> None:
    context = build_context([GIT_SHOW, STATUS])
    assert not DETECTOR.matches(Effect("delete", path="/repo/retry/backoff_test.go"), context)
    assert not DETECTOR.matches(
        Effect("write", path="/repo/retry/export_test.go", content=""), context
    )
