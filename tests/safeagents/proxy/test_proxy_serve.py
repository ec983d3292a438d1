"""The access log's handler: records logged on an event loop are written once the loop is free."""

from __future__ import annotations

import asyncio
import io
import logging

from safeagents.proxy._serve import DeferredStreamHandler


def logger_to(stream: io.StringIO) -> tuple[logging.Logger, DeferredStreamHandler]:
    handler = DeferredStreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger(f"test-deferred-{id(stream)}")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return logger, handler


def test_a_line_logged_on_the_loop_is_written_after_the_callback_in_order() -> None:
    stream = io.StringIO()
    logger, _ = logger_to(stream)

    async def answer() -> str:
        logger.info("first")
        logger.info("second")
        written = stream.getvalue()
        await asyncio.sleep(0)
        return written

    assert asyncio.run(answer()) == ""
    assert stream.getvalue() == "first\nsecond\n"


def test_a_line_the_loop_never_wrote_goes_out_first_on_flush_or_off_the_loop() -> None:
    stream = io.StringIO()
    logger, handler = logger_to(stream)
    loop = asyncio.new_event_loop()
    try:
        loop.call_soon(logger.info, "pending")
        loop.call_soon(loop.stop)  # stops before the write the first line scheduled
        loop.run_forever()
    finally:
        loop.close()
    assert stream.getvalue() == ""
    logger.info("off the loop")
    assert stream.getvalue() == "pending\noff the loop\n"

    async def flushed() -> str:
        logger.info("at exit")
        handler.flush()  # as logging.shutdown does
        return stream.getvalue()

    assert asyncio.run(flushed()).endswith("off the loop\nat exit\n")
