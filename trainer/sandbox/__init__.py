"""Sandboxes for rollouts: a backend protocol shaped like Harbor's environments, and the
``local`` backend on bubblewrap.

A rollout gets a :class:`Sandbox` from a :class:`SandboxBackend`: a private copy of the task's
workspace, directories added by path (the harness's state, later the hidden tests), and
commands run inside under :class:`Limits`, whose only way out is the proxy, as the rollout's
own session (:class:`ProxyAccess`). The ``harbor`` backend (:class:`HarborBackend`) makes
each sandbox a Harbor environment instead. See ``docs/sandboxes.md``.
"""

from trainer.sandbox._files import copy_tree, remove_tree
from trainer.sandbox._harbor import (
    BWRAP_ENVIRONMENT,
    HARBOR_PYTHON_ENV,
    HarborBackend,
    HarborSandbox,
    harbor_python,
)
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
from trainer.sandbox._select import SANDBOXES, make_backend

__all__ = [
    "AGENT_LIMITS",
    "BWRAP_ENVIRONMENT",
    "DEFAULT_AGENT_STEPS",
    "DEFAULT_WALL_SECONDS",
    "HARBOR_PYTHON_ENV",
    "SANDBOXES",
    "VERIFIER_LIMITS",
    "ExecResult",
    "HarborBackend",
    "HarborSandbox",
    "Limits",
    "LocalBackend",
    "LocalSandbox",
    "ProxyAccess",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "copy_tree",
    "default_exposed",
    "harbor_python",
    "make_backend",
    "remove_tree",
]
