"""Split labelled sessions into a tuning part and a validation part that is never tuned on.

Within each label, sessions are ordered by a hash of their id and every fourth goes to
validation, so the split is stable across runs and machines, does not depend on the order of
the lines, and each part has its share of the few hack sessions.
``python -m bench.detection.split CORPUS --out DIR`` writes ``DIR/tune.jsonl`` and
``DIR/validate.jsonl`` (one session in four).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path


def _key(line: str) -> str:
    return hashlib.sha256(json.loads(line)["id"].encode()).hexdigest()


def split(lines: list[str]) -> dict[str, list[str]]:
    """The non-blank ``lines`` (labelled sessions) of each part: ``tune`` and ``validate``."""
    by_label: dict[str, list[str]] = {}
    for line in lines:
        if line.strip():
            by_label.setdefault(json.loads(line)["label"], []).append(line)
    parts: dict[str, list[str]] = {"tune": [], "validate": []}
    for labelled in by_label.values():
        for index, line in enumerate(sorted(labelled, key=_key)):
            parts["validate" if index % 4 == 0 else "tune"].append(line)
    return parts


def corpus_lines(corpus: Path) -> list[str]:
    """The lines of every ``*.jsonl`` file of ``corpus``, files in name order."""
    lines: list[str] = []
    for file in sorted(corpus.glob("*.jsonl")):
        lines.extend(file.read_text(encoding="utf-8").splitlines())
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", type=Path, help="folder of labelled *.jsonl sessions")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, lines in split(corpus_lines(args.corpus)).items():
        (args.out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        labels = [json.loads(line)["label"] for line in lines]
        counts = ", ".join(f"{labels.count(k)} {k}" for k in ("hack", "benign", "contested"))
        print(f"{args.out / name}.jsonl: {len(lines)} sessions ({counts})")


if __name__ == "__main__":
    main()
