"""Server-sent events: an incremental parser that survives any chunking, and an encoder."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

__all__ = ["SSEEvent", "SSEParser", "encode_event", "encode_json", "parse_events"]

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n?|\n")
_TEXT_LINE_END = re.compile(r"\r\n?|\n")


class SSEEvent(NamedTuple):
    """One dispatched event; ``raw`` holds its bytes as received, blank line included.

    A named tuple: it is made for every event of every stream, at half a frozen
    dataclass's cost."""

    data: str
    event: str | None = None
    raw: bytes = b""


class SSEParser:
    """Incremental SSE parser (WHATWG rules: CR/LF/CRLF line ends, comments, multi-line data)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0
        self._first_line = True
        self._raw = bytearray()
        self._data: list[str] = []
        self._event: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume ``chunk`` and return the events it completed."""
        self._buffer += chunk
        return self._drain(final=False)

    def close(self) -> list[SSEEvent]:
        """End of stream: a last line without terminator still counts, and so does its event."""
        events = self._drain(final=True)
        if self._buffer:
            self._take_line(bytes(self._buffer), bytes(self._buffer), events)
            self._buffer.clear()
        if self._data:
            events.append(self._dispatch())
        return events

    def _drain(self, *, final: bool) -> list[SSEEvent]:
        if not final and self._between_events() and b"\r" not in self._buffer:
            return self._drain_blocks()
        events: list[SSEEvent] = []
        buffer = self._buffer
        position = 0
        while (match := _LINE_END.search(buffer, max(position, self._scanned))) is not None:
            if match.end() == len(buffer) and match.group() == b"\r" and not final:
                break  # a CR at the end may be the first half of a CRLF
            self._take_line(
                bytes(buffer[position : match.start()]),
                bytes(buffer[position : match.end()]),
                events,
            )
            position = match.end()
            self._scanned = 0
        del buffer[:position]
        self._scanned = max(0, len(buffer) - 1)
        return events

    def _between_events(self) -> bool:
        if (
            self._first_line
            and len(self._buffer) >= len(_BOM)
            and not self._buffer.startswith(_BOM)
        ):
            self._first_line = False
        return not (self._first_line or self._raw or self._data or self._event is not None)

    def _drain_blocks(self) -> list[SSEEvent]:
        """The common case, LF line ends and no event begun: whole events at a time."""
        blocks = bytes(self._buffer).split(b"\n\n")
        rest = blocks.pop()
        events: list[SSEEvent] = []
        for block in blocks:
            name, data = None, block
            if block.startswith(b"event: "):
                head, _, data = block.partition(b"\n")
                name = head[7:].decode("utf-8", "replace")
            if data.startswith(b"data: ") and b"\n" not in data:
                events.append(SSEEvent(data[6:].decode("utf-8", "replace"), name, block + b"\n\n"))
                continue
            for line in block.split(b"\n"):
                self._take_line(line, line + b"\n", events)
            self._take_line(b"", b"\n", events)
        self._buffer[:] = rest
        self._scanned = 0
        return events

    def _take_line(self, line: bytes, raw: bytes, events: list[SSEEvent]) -> None:
        self._raw += raw
        if self._first_line:
            self._first_line = False
            line = line.removeprefix(_BOM)
        if not line:
            if self._data:
                events.append(self._dispatch())
            else:
                self._reset()
            return
        if line.startswith(b":"):
            return
        name, colon, value = line.decode("utf-8", errors="replace").partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value

    def _dispatch(self) -> SSEEvent:
        event = SSEEvent(data="\n".join(self._data), event=self._event, raw=bytes(self._raw))
        self._reset()
        return event

    def _reset(self) -> None:
        self._raw = bytearray()
        self._data = []
        self._event = None


def parse_events(stream: bytes) -> list[SSEEvent]:
    """All events of a complete SSE byte stream."""
    parser = SSEParser()
    return parser.feed(stream) + parser.close()


def encode_event(data: str, event: str | None = None, event_id: str | None = None) -> bytes:
    """One SSE event: optional ``event:`` and ``id:`` lines, one ``data:`` line per line of
    ``data`` (a CR, LF or CRLF in it ends a line, as for the reader)."""
    lines = [f"event: {event}"] if event is not None else []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.extend(f"data: {line}" for line in _TEXT_LINE_END.split(data))
    return ("\n".join(lines) + "\n\n").encode()


def json_bytes(payload: Any) -> bytes:
    """``payload`` as compact UTF-8 JSON, as the proxy sends bodies; a lone surrogate (which
    UTF-8 cannot hold, and a model may send as ``\\ud800``) goes out as that escape."""
    try:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(payload, separators=(",", ":")).encode()


def encode_json(payload: Any, event: str | None = None, event_id: str | None = None) -> bytes:
    """One SSE event carrying ``payload`` as compact JSON."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    try:
        return encode_event(text, event, event_id)
    except UnicodeEncodeError:  # lone surrogates survive only as \u escapes
        return encode_event(json.dumps(payload, separators=(",", ":")), event, event_id)
