"""What is never shown of a URL: its user and password, and secret-looking query values."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact_url"]

_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "pwd", "auth", "sig", "cred")


def redact_url(url: str) -> str:
    """``url`` safe to show: no user or password, secret-looking query values masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    elif not netloc and "@" in url:  # not a URL with a host: "user:password@host/…"
        return "***@" + url.rpartition("@")[2]
    query = "&".join(_redact_pair(pair) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_pair(pair: str) -> str:
    name, equals, value = pair.partition("=")
    if equals and value and any(word in name.lower() for word in _SECRET_WORDS):
        return f"{name}=***"
    return pair
