"""Writing generated tasks: task.toml as tomllib reads it back."""

from __future__ import annotations

import tomllib

from trainer.tasks._write import toml_document


def test_task_toml_is_written_as_tomllib_reads_it() -> None:
    document = toml_document(
        {"": {"schema_version": "1.4"}, "a.b": {"s": 'q"\\\x7fé', "n": 2, "f": 1.5, "l": ["x"]}}
    )
    assert tomllib.loads(document) == {
        "schema_version": "1.4",
        "a": {"b": {"s": 'q"\\\x7fé', "n": 2, "f": 1.5, "l": ["x"]}},
    }
