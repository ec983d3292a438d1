"""The SSE parser's whole-event path (LF line ends) parses exactly like its line-by-line one."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from safeagents.protocols import SSEEvent, SSEParser


class LineByLine(SSEParser):
    """The parser with its whole-event path switched off."""

    def _between_events(self) -> bool:
        return False


def parse(parser: SSEParser, stream: bytes, cuts: list[int]) -> list[SSEEvent]:
    bounds = [0, *sorted(cut % (len(stream) + 1) for cut in cuts), len(stream)]
    events: list[SSEEvent] = []
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(stream[start:end])
    return events + parser.close()


TEXT = st.text(alphabet=st.sampled_from('ab {}":é€\\'), max_size=12)
LINE = st.one_of(
    TEXT.map(lambda text: "data: " + text),
    TEXT.map(lambda text: "data:" + text),
    st.sampled_from(["event: delta", "event:done", "id: 7", "retry: 10", ": ping", "data", ""]),
)
BLOCK = st.lists(LINE, min_size=1, max_size=4).map(lambda lines: "\n".join(lines) + "\n\n")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(BLOCK, max_size=8),
    st.booleans(),
    st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
def test_whole_events_and_line_by_line_agree(blocks: list[str], bom: bool, cuts: list[int]) -> None:
    stream = ("\ufeff" if bom else "").encode() + "".join(blocks).encode()
    expected = parse(LineByLine(), stream, cuts)
    assert parse(SSEParser(), stream, cuts) == expected


def test_typical_events_take_the_whole_event_path() -> None:
    stream = b'data: {"a":1}\n\nevent: delta\ndata: {"b":2}\n\n: ping\n\ndata: x\ndata: y\n\n'
    parser = SSEParser()
    events = parser.feed(stream)
    assert [(e.event, e.data) for e in events] == [
        (None, '{"a":1}'),
        ("delta", '{"b":2}'),
        (None, "x\ny"),
    ]
    assert b"".join(event.raw for event in events) == stream.replace(b": ping\n\n", b"")
    assert parser.close() == []
