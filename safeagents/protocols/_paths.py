"""Request paths read the way the most lenient upstream could read them, for routing.

A path is routed on its canonical spelling: percent-decoded until stable, backslashes read as
slashes, empty and ``.`` segments dropped, ``..`` resolved, ``;parameters`` and surrounding
whitespace cut from each segment; endpoints are matched without regard to case. So
``/v1//chat/completions``, ``//v1/./chat/completions``, ``/V1/Chat/Completions`` and
``/v1/chat%2Fcompletions`` are all the chat endpoint, and a path an upstream could take for a
model endpoint is either checked or refused, never passed through unseen.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

__all__ = [
    "MODEL_ENDPOINTS",
    "PASSTHROUGH_WRITES",
    "READ_METHODS",
    "UNCHECKED_MODEL_ENDPOINTS",
    "canonical_path",
    "endpoint_name",
    "forwarded_path",
    "passes_through",
    "split_session",
    "unchecked_model_endpoint",
]

MODEL_ENDPOINTS: dict[tuple[str, ...], str] = {
    ("chat", "completions"): "chat",
    ("responses",): "responses",
    ("messages",): "messages",
}
"""The endpoints safeagents checks (path tail → dialect name), POSTed under any prefix."""

UNCHECKED_MODEL_ENDPOINTS = frozenset(
    {
        "completions",  # legacy OpenAI completions (also Azure deployments)
        "chat",  # Ollama /api/chat
        "generate",  # Ollama, TGI and vLLM /generate
        "generate_stream",
        "generatecontent",  # Gemini models/{m}:generateContent
        "streamgeneratecontent",
        "invocations",  # SageMaker-style entry that vLLM routes to chat and completions
        "predict",
        "batches",  # batch APIs run the model out of band
        "realtime",
        "responses",
        "messages",
    }
)
"""Last path segments (lower case, after a ``:``) of endpoints that make a model answer but
that safeagents does not check: a write to one of them is refused."""

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that pass through to any path (listings, probes, retrievals; no model answer)."""

PASSTHROUGH_WRITES: tuple[tuple[str, ...], ...] = (
    ("messages", "count_tokens"),  # Anthropic token counting (claude)
    ("responses", "input_tokens"),  # OpenAI token counting
    ("embeddings",),
    ("tokenize",),  # vLLM
    ("detokenize",),
    ("api", "show"),  # Ollama model info (hermes probes it)
    ("files",),  # file uploads
    ("files", "*"),
)
"""The writes (POST, PUT, PATCH, DELETE…) ``safeagents serve`` passes through: path tails,
``*`` standing for any one segment. Every other write that is not a checked model endpoint
is refused."""

_SAFE = "/:@!$&'()*+,=-._~"
_TRIM = " \t\r\n\x00"


def canonical_path(path: str) -> str:
    """``path`` (query and fragment cut off) in its canonical spelling; case is kept."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    for _ in range(8):
        decoded = unquote(path)
        if decoded == path:
            break
        path = decoded
    segments: list[str] = []
    for raw in path.replace("\\", "/").split("/"):
        segment = raw.split(";", 1)[0].strip(_TRIM)
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    return "/" + "/".join(segments)


def split_session(path: str) -> tuple[str | None, str]:
    """A canonical path's ``/s/{id}`` prefix split off: ``(id, rest)`` or ``(None, path)``."""
    parts = path.split("/", 3)
    if len(parts) == 4 and parts[1] == "s" and parts[3]:
        return parts[2], "/" + parts[3]
    return None, path


def _segments(path: str) -> list[str]:
    return [segment.lower() for segment in canonical_path(path).split("/") if segment]


def endpoint_name(path: str) -> str | None:
    """The dialect name of a path ending in a checked model endpoint, else ``None``."""
    segments = _segments(path)
    for tail, name in MODEL_ENDPOINTS.items():
        if tuple(segments[-len(tail) :]) == tail:
            return name
    return None


def unchecked_model_endpoint(method: str, path: str) -> bool:
    """Whether a request that is not a checked model request writes to a model endpoint."""
    if method.upper() in READ_METHODS:
        return False
    segments = _segments(path)
    if not segments:
        return False
    last = segments[-1].rsplit(":", 1)[-1]
    return last in UNCHECKED_MODEL_ENDPOINTS or endpoint_name(path) is not None


def passes_through(method: str, path: str) -> bool:
    """Whether ``serve`` forwards this request untouched: a read, or a listed write."""
    if method.upper() in READ_METHODS:
        return True
    segments = _segments(path)
    for tail in PASSTHROUGH_WRITES:
        end = segments[-len(tail) :]
        if len(end) == len(tail) and all(t in ("*", s) for t, s in zip(tail, end, strict=True)):
            return True
    return False


def forwarded_path(path: str) -> str:
    """A canonical path as it goes on the wire (percent-encoded where it must be)."""
    return quote(path, safe=_SAFE)
