"""The SSE parser and encoder: framing, comments, multi-line data, arbitrary chunking."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from safeagents.protocols import SSEEvent, SSEParser, encode_event, encode_json, parse_events

STREAM = (
    b": keep-alive comment\n\n"
    b'event: message_start\ndata: {"a": 1}\n\n'
    b"data: first line\ndata: second line\n\n"
    b"id: 7\nretry: 100\ndata:no-space\n\n"
    b"data: caf\xc3\xa9 \xe2\x82\xac\n\n"
)
EXPECTED = [
    ("message_start", '{"a": 1}'),
    (None, "first line\nsecond line"),
    (None, "no-space"),
    (None, "café €"),
]


def summary(events: list[SSEEvent]) -> list[tuple[str | None, str]]:
    return [(event.event, event.data) for event in events]


def feed_in_pieces(stream: bytes, cuts: list[int]) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    bounds = [0, *sorted(cuts), len(stream)]
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(stream[start:end])
    return events + parser.close()


def test_parses_fields_comments_and_multiline_data() -> None:
    assert summary(parse_events(STREAM)) == EXPECTED


def test_crlf_and_bare_cr_line_ends_parse_the_same() -> None:
    assert summary(parse_events(STREAM.replace(b"\n", b"\r\n"))) == EXPECTED
    assert summary(parse_events(STREAM.replace(b"\n", b"\r"))) == EXPECTED


def test_every_single_split_point_gives_the_same_events() -> None:
    for variant in (STREAM, STREAM.replace(b"\n", b"\r\n"), STREAM.replace(b"\n", b"\r")):
        for cut in range(len(variant) + 1):
            assert summary(feed_in_pieces(variant, [cut])) == EXPECTED, (variant, cut)


def test_byte_at_a_time_gives_the_same_events() -> None:
    variant = STREAM.replace(b"\n", b"\r\n")
    assert summary(feed_in_pieces(variant, list(range(len(variant))))) == EXPECTED


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM) * 2), max_size=12))
def test_random_chunking_of_crlf_stream(cuts: list[int]) -> None:
    variant = STREAM.replace(b"\n", b"\r\n")
    assert summary(feed_in_pieces(variant, [cut % (len(variant) + 1) for cut in cuts])) == EXPECTED


def test_cr_at_chunk_end_waits_for_a_possible_lf() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: x\r\n\r") == []
    events = parser.feed(b"\ndata: y\r\n\r\n")
    assert summary(events) == [(None, "x"), (None, "y")]
    assert parser.close() == []


def test_raw_bytes_of_events_reproduce_the_stream() -> None:
    stream = b"event: a\r\ndata: 1\r\n\r\ndata: 2\n\n"
    assert b"".join(event.raw for event in parse_events(stream)) == stream


def test_leading_byte_order_mark_is_ignored() -> None:
    assert summary(parse_events(b"\xef\xbb\xbfdata: x\n\n")) == [(None, "x")]


def test_blank_block_without_data_dispatches_nothing() -> None:
    assert parse_events(b"event: ping\n\n: only a comment\n\n") == []


def test_close_flushes_an_unterminated_last_event() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: [DONE]") == []
    assert summary(parser.close()) == [(None, "[DONE]")]


def test_encode_event_splits_multiline_data() -> None:
    assert encode_event("a\nb", "x") == b"event: x\ndata: a\ndata: b\n\n"
    assert encode_json({"k": "é"}) == 'data: {"k":"é"}\n\n'.encode()


def test_encode_event_ends_lines_where_a_reader_does_and_carries_an_id() -> None:
    encoded = encode_event("a\rb\r\nc", "x", "7:2")
    assert encoded == b"event: x\nid: 7:2\ndata: a\ndata: b\ndata: c\n\n"
    assert summary(parse_events(encoded)) == [("x", "a\nb\nc")]
    assert encode_json([1], "y", "1.5") == b"event: y\nid: 1.5\ndata: [1]\n\n"


def test_encode_json_escapes_lone_surrogates() -> None:
    [event] = parse_events(encode_json({"k": "a\ud800"}))
    assert json.loads(event.data) == {"k": "a\ud800"}


@settings(max_examples=100, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_characters="\r\x00", blacklist_categories=["Cs"]),
        max_size=40,
    ),
    st.one_of(st.none(), st.text(alphabet="abc._", min_size=1, max_size=10)),
)
def test_encode_then_parse_round_trips(data: str, event: str | None) -> None:
    assert summary(parse_events(encode_event(data, event))) == ([(event, data)])
