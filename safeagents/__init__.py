"""safeagents: a tool-call firewall for coding agents.

Tool calls of any harness become canonical :class:`Effect` values, checked against YAML
rules by a :class:`Firewall`; sessions are scored as hacked or clean.
"""

from types import FunctionType as _FunctionType

from safeagents._actions import (
    EFFECT_KINDS,
    AnalysisContext,
    Effect,
    EffectKind,
    ToolCall,
    normalise_path,
)
from safeagents._audit import InputError, Session, SessionReport, audit_session, load_sessions
from safeagents._detector import CallContext, Detector, SessionModel, SessionState
from safeagents._firewall import Firewall
from safeagents._generic import GenericHarness
from safeagents._harness import Harness, rejection_script
from safeagents._registry import Registry, UnknownHarnessError, default_registry, load_registry
from safeagents.analysis import (
    analyze_python,
    analyze_shell,
    edit_effect,
    parse_patch,
    write_effect,
)
from safeagents.plugins import hookimpl
from safeagents.rules import CallVerdict, Engine, Finding, RuleSet

__version__ = "0.1.0"

__all__ = [
    "EFFECT_KINDS",
    "AnalysisContext",
    "CallContext",
    "CallVerdict",
    "Detector",
    "Effect",
    "EffectKind",
    "Engine",
    "Finding",
    "Firewall",
    "GenericHarness",
    "Harness",
    "InputError",
    "Registry",
    "RuleSet",
    "Session",
    "SessionModel",
    "SessionReport",
    "SessionState",
    "ToolCall",
    "UnknownHarnessError",
    "analyze_python",
    "analyze_shell",
    "audit_session",
    "default_registry",
    "edit_effect",
    "hookimpl",
    "load_registry",
    "load_sessions",
    "normalise_path",
    "parse_patch",
    "rejection_script",
    "write_effect",
]

for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, (type, _FunctionType)) and "._" in _value.__module__:
        _value.__module__ = "safeagents"  # defined in a private module: reprs show safeagents.X
