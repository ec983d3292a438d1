"""Error bodies in each API's own shape, so a harness reports them like the real thing."""

from __future__ import annotations

from ._common import JSONObject

__all__ = ["anthropic_error", "anthropic_error_type", "openai_error"]

_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}

_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def openai_error(status: int, message: str, *, kind: str) -> JSONObject:
    """``{"error": {message, type, param, code}}``: type from the status, code is ``kind``."""
    default = "server_error" if status >= 500 else "invalid_request_error"
    error_type = _OPENAI_TYPES.get(status, default)
    return {"error": {"message": message, "type": error_type, "param": None, "code": kind}}


def anthropic_error_type(status: int) -> str:
    default = "api_error" if status >= 500 else "invalid_request_error"
    return _ANTHROPIC_TYPES.get(status, default)


def anthropic_error(status: int, message: str, *, kind: str) -> JSONObject:
    """``{"type": "error", "error": {type, message}}``; the type follows the status (Anthropic
    has no code field, so ``kind`` only picks the type when the status does not decide)."""
    error_type = anthropic_error_type(status)
    if status not in _ANTHROPIC_TYPES and kind == "upstream_timeout":
        error_type = "timeout_error"
    return {"type": "error", "error": {"type": error_type, "message": message}}
