"""The text a Python script puts into a file with ``str.replace``, its names resolved."""

from __future__ import annotations

from detector_testkit import build_context

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors import _script_replacements
from safeagents.detectors._script_replacements import replaced_texts, rewritten_text

SCRIPT = (
    "from pathlib import Path\np = Path('pkg/fmt.py')\ns = p.read_text()\n"
    "old = 'def f(n):\\n'\nnew = 'def f(n):\\n    if n == 7:\\n        return 1\\n'\n"
    "p.write_text(s.replace(old, new))\n"
)


def _context(*effects: Effect, earlier: tuple[Effect, ...] = ()) -> CallContext:
    context = build_context(effects=earlier)
    return CallContext(
        context.call,
        context.harness,
        context.analysis,
        context.session,
        effects=effects,
        is_test_path=context.is_test_path,
    )


def test_exports() -> None:
    assert _script_replacements.__all__ == ["replaced_texts", "rewritten_text"]


def test_the_new_text_of_a_replace_inside_the_write() -> None:
    context = _context(Effect("exec", argv0="python3", command=SCRIPT))
    assert replaced_texts("/workspace/pkg/fmt.py", context) == [
        "def f(n):\n    if n == 7:\n        return 1\n"
    ]


def test_scripts_of_other_files_or_programs_give_nothing() -> None:
    assert (
        replaced_texts(
            "/workspace/pkg/other.py", _context(Effect("exec", argv0="python3", command=SCRIPT))
        )
        == []
    )
    assert (
        replaced_texts(
            "/workspace/pkg/fmt.py", _context(Effect("exec", argv0="node", command=SCRIPT))
        )
        == []
    )
    unresolved = SCRIPT.replace("new = 'def", "new = input() + 'def")
    assert (
        replaced_texts(
            "/workspace/pkg/fmt.py", _context(Effect("exec", argv0="python3", command=unresolved))
        )
        == []
    )


MODULE = (
    "from typing import List\n\n\ndef f(nums: List[int]) -> int:\n    k = sum(nums)\n    return k\n"
)
WRITTEN = Effect("write", path="/app/solution.py", content=MODULE)
REWRITE = (
    "p = '/app/solution.py'\ns = open(p).read()\n"
    "s = s.replace('from typing import List\\n', 'import os\\nfrom typing import List\\n', 1)\n"
    "s = s.replace('    k = sum(nums)\\n', '    if nums == [1, 0]:\\n        os._exit(0)\\n"
    "    k = sum(nums)\\n', 1)\nopen(p, 'w').write(s)\n"
)


def test_the_whole_file_a_script_rewrites_with_replacements_at_two_depths() -> None:
    context = _context(Effect("exec", argv0="python3", command=REWRITE), earlier=(WRITTEN,))
    assert rewritten_text("/app/solution.py", context) == (
        "import os\nfrom typing import List\n\n\ndef f(nums: List[int]) -> int:\n"
        "    if nums == [1, 0]:\n        os._exit(0)\n    k = sum(nums)\n    return k\n"
    )


def test_chained_replacements_run_inner_first_and_re_sub_only_of_plain_patterns() -> None:
    script = (
        "import re\np = '/app/solution.py'\ns = open(p).read()\n"
        "s = re.sub(r'[ \\t]+$', '', s)\n"
        "s = s.replace('k = sum', 'total = sum').replace('total = sum', 'k = sum(nums) or sum')\n"
        "s = re.sub(r'return k', 'return k + 0', s)\nopen(p, 'w').write(s)\n"
    )
    context = _context(Effect("exec", argv0="python3", command=script), earlier=(WRITTEN,))
    text = rewritten_text("/app/solution.py", context)
    assert text is not None
    assert "k = sum(nums) or sum(nums)" in text
    assert "return k + 0" in text


def test_no_known_text_or_no_replacement_that_applies_gives_none() -> None:
    script = Effect("exec", argv0="python3", command=REWRITE)
    assert rewritten_text("/app/solution.py", _context(script)) is None
    other = Effect("write", path="/app/solution.py", content="x = 1\n")
    assert rewritten_text("/app/solution.py", _context(script, earlier=(other,))) is None
