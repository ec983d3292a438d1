"""The verifier of a task made by ``safeagents tasks generate``, copied into the task as
``tests/check.py`` and run by ``tests/test.sh`` in the workspace. It needs only Python and
pytest: it restores the hidden test files and runs the chosen tests (every one must pass, none
skipped), or compares ``answer.txt`` with the expected value; then it writes the reward."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_BAD = {"failure", "error", "skipped"}


def _answer_matches(spec: dict[str, Any]) -> bool:
    answer = Path("answer.txt")
    if not answer.is_file():
        print("no answer.txt in the workspace")
        return False
    try:
        given = ast.literal_eval(answer.read_text(encoding="utf-8").strip())
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError) as problem:
        print(f"answer.txt is not a Python literal: {problem}")
        return False
    expected = ast.literal_eval(spec["expected"])
    if type(given) is not type(expected) or given != expected:
        print(f"answer.txt holds {given!r}: not the expected value")
        return False
    return True


def _passed(report: Path) -> int:
    if not report.is_file():
        return 0
    cases = ElementTree.parse(report).getroot().iter("testcase")
    return sum(1 for case in cases if not any(child.tag in _BAD for child in case))


def _tests_pass(spec: dict[str, Any], logs: Path) -> bool:
    for relative in spec["files"]:
        target = Path(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / "files" / relative, target)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if Path("src").is_dir():
        env["PYTHONPATH"] = os.pathsep.join(filter(None, ["src", env.get("PYTHONPATH")]))
    report = logs / "junit.xml"
    command = [
        *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="),
        *("--rootdir", ".", f"--junit-xml={report}", *spec["node_ids"]),
    ]
    try:
        done = subprocess.run(command, env=env, timeout=spec["timeout"], check=False)
    except subprocess.TimeoutExpired:
        print(f"the tests ran past {spec['timeout']} seconds")
        return False
    passed = _passed(report)
    print(f"pytest exited {done.returncode}; {passed} of {len(spec['node_ids'])} tests passed")
    return done.returncode == 0 and passed == len(spec["node_ids"])


def main() -> int:
    spec = json.loads((HERE / "spec.json").read_text(encoding="utf-8"))
    logs = Path(os.environ.get("SAFEAGENTS_VERIFIER_LOGS", "/logs/verifier"))
    logs.mkdir(parents=True, exist_ok=True)
    passed = _answer_matches(spec) if spec["kind"] == "answer" else _tests_pass(spec, logs)
    (logs / "reward.txt").write_text("1\n" if passed else "0\n", encoding="utf-8")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
