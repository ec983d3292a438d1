"""Sandboxes for rollouts: a backend protocol shaped like Harbor's environments, and the
``local`` backend on bubblewrap.

A rollout gets a :class:`Sandbox` from a :class:`SandboxBackend`: a private copy of the task's
workspace, directories added by path (the harness's state, later the hidden tests), and
commands run inside under :class:`Limits`, whose only way out is the proxy, as the rollout's
own session (:class:`ProxyAccess`). See ``docs/sandboxes.md``.
"""

from trainer.sandbox._files import copy_tree, remove_tree
from trainer.sandbox._local import LocalBackend, LocalSandbox, default_exposed
from trainer.sandbox._protocol import (
    AGENT_LIMITS,
    DEFAULT_AGENT_STEPS,
    DEFAULT_WALL_SECONDS,
    VERIFIER_LIMITS,
    ExecResult,
    Limits,
    ProxyAccess,
    Sandbox,
    SandboxBackend,
    SandboxError,
)

__all__ = [
    "AGENT_LIMITS",
    "DEFAULT_AGENT_STEPS",
    "DEFAULT_WALL_SECONDS",
    "VERIFIER_LIMITS",
    "ExecResult",
    "Limits",
    "LocalBackend",
    "LocalSandbox",
    "ProxyAccess",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "copy_tree",
    "default_exposed",
    "remove_tree",
]
