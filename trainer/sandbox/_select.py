"""A sandbox backend by name, as configs and command lines select it (``local``, ``harbor``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainer.sandbox._harbor import BWRAP_ENVIRONMENT, HarborBackend
from trainer.sandbox._local import LocalBackend
from trainer.sandbox._protocol import SandboxBackend, SandboxError

__all__ = ["SANDBOXES", "make_backend"]

SANDBOXES = ("local", "harbor")


def make_backend(
    spec: str | Mapping[str, Any] | SandboxBackend | None, *, harbor_environment: str | None = None
) -> SandboxBackend:
    """``local`` (the default), ``harbor``, or a mapping ``{name: harbor, environment: docker,
    options: {...}}`` (the Harbor environment and its constructor's options); a backend is
    returned as it is. ``harbor_environment`` overrides the Harbor environment."""
    if spec is None:
        spec = "local"
    if not isinstance(spec, (str, Mapping)):
        return spec
    settings: dict[str, Any] = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = settings.pop("name", "local")
    if name == "local":
        if harbor_environment is not None:
            raise SandboxError("a Harbor environment is chosen for the harbor sandbox only")
        try:
            return LocalBackend(**settings)
        except TypeError as problem:
            raise SandboxError(f"local sandbox settings: {problem}") from None
    if name == "harbor":
        environment = harbor_environment or settings.pop("environment", BWRAP_ENVIRONMENT)
        settings.pop("environment", None)
        try:
            return HarborBackend(environment, **settings)
        except TypeError as problem:
            raise SandboxError(f"harbor sandbox settings: {problem}") from None
    raise SandboxError(f"unknown sandbox {name!r}; choose from {', '.join(SANDBOXES)}")
