"""The YAML rule DSL: loading with positions, validation, RE2 compilation, matching, fixtures.

Load rules with :meth:`RuleSet.load`; an :class:`Engine` turns effects into findings
(:class:`safeagents.Firewall` turns tool calls into effects first). ``docs/rule-dsl.md`` is
the language reference. :func:`load_document` and :class:`RuleError` are the
position-keeping YAML loading and ``file:line:col`` errors the rules use, for other YAML
files (the trainer's config).
"""

from __future__ import annotations

from safeagents.rules._discover import FIXTURE_SUFFIX, bundled_rules_path
from safeagents.rules._engine import Engine
from safeagents.rules._errors import RuleError, RuleLoadError, did_you_mean
from safeagents.rules._fixtures import CallChecker, FixtureResult, run_fixtures
from safeagents.rules._lint import effects_reference, field_warnings
from safeagents.rules._loader import EXCLUDE_SOURCE, VAR_SOURCE, RuleSet, parse_vars
from safeagents.rules._model import (
    HACK_ACTIONS,
    UNANALYSABLE,
    CallVerdict,
    Finding,
    Pack,
    Rule,
    RuleException,
)
from safeagents.rules._paths import list_matcher
from safeagents.rules._schema import ACTIONS, CATEGORIES, SEVERITIES
from safeagents.rules._yaml import Document, NodePath, load_document

__all__ = [
    "ACTIONS",
    "CATEGORIES",
    "EXCLUDE_SOURCE",
    "FIXTURE_SUFFIX",
    "HACK_ACTIONS",
    "SEVERITIES",
    "UNANALYSABLE",
    "VAR_SOURCE",
    "CallChecker",
    "CallVerdict",
    "Document",
    "Engine",
    "Finding",
    "FixtureResult",
    "NodePath",
    "Pack",
    "Rule",
    "RuleError",
    "RuleException",
    "RuleLoadError",
    "RuleSet",
    "bundled_rules_path",
    "did_you_mean",
    "effects_reference",
    "field_warnings",
    "list_matcher",
    "load_document",
    "parse_vars",
    "run_fixtures",
]

for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = __name__
del _name, _value
