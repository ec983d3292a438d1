"""The training section of the web console: a Starlette app the console mounts under
``/ui/training/``, listing the runs and evaluations it was pointed at.

Routes (below the mount): ``/`` the list, ``/run/{key}`` a run's page, ``/events/{key}`` its
server-sent events, ``/eval/{key}`` an evaluation, ``/assets/live.js`` the page's script.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from safeagents.plugins import ServerStopping
from safeagents.protocols import encode_event, encode_json
from trainer._console._runs import (
    Catalogue,
    EvalReportError,
    find,
    kept_versions,
    read_eval_report,
)
from trainer._console._templates import environment, render_live
from trainer._console._views import RunState, eval_charts, read_run
from trainer._metrics import MetricsTail

__all__ = ["training_app"]

_HEARTBEAT_SECONDS = 15.0
_POSITION = re.compile(r"([0-9]{1,18}):([0-9]{1,18})")


@dataclass(frozen=True, slots=True)
class _Settings:
    roots: tuple[Path, ...]
    poll_seconds: float
    stream_seconds: float


def training_app(
    runs: Sequence[Path], *, poll_seconds: float = 1.0, stream_seconds: float = 300.0
) -> Starlette:
    """The section's app for the run directories ``runs`` (searched again on each request,
    so runs started later appear). A live page's stream checks its log every
    ``poll_seconds`` and ends after ``stream_seconds``; the browser then reconnects and
    resumes where it was."""
    if poll_seconds <= 0 or stream_seconds <= 0:
        raise ValueError("poll_seconds and stream_seconds must be positive")
    settings = _Settings(tuple(Path(root) for root in runs), poll_seconds, stream_seconds)
    templates = Jinja2Templates(env=environment)
    pages = _Pages(settings, templates)
    app = Starlette(
        routes=[
            Route("/", pages.index, name="index"),
            Route("/run/{key:path}", pages.run, name="run"),
            Route("/events/{key:path}", pages.events, name="events"),
            Route("/eval/{key:path}", pages.evaluation, name="eval"),
            Mount("/assets", StaticFiles(packages=[("trainer._console", "static")])),
        ],
    )
    return app


class _Pages:
    def __init__(self, settings: _Settings, templates: Jinja2Templates) -> None:
        self.settings = settings
        self.templates = templates

    def _render(
        self, request: Request, name: str, title: str, status: int = 200, **context: Any
    ) -> Response:
        base = request.scope.get("root_path", "").rstrip("/")
        console = base.rsplit("/", 1)[0] if "/" in base else ""
        page = {
            "title": title,
            "base": base,
            "console": console,
            "stylesheet": f"{console}/static/console.css",
            **context,
        }
        return self.templates.TemplateResponse(request, name, page, status_code=status)

    def _missing(self, request: Request, what: str, key: str) -> Response:
        message = f"No {what} {key!r} under the directories this console was given."
        return self._render(request, "error.html", f"Unknown {what}", 404, message=message)

    def _catalogue(self) -> Catalogue:
        return find(self.settings.roots)

    async def index(self, request: Request) -> Response:
        catalogue = await anyio.to_thread.run_sync(self._catalogue)
        states = await anyio.to_thread.run_sync(
            lambda: [read_run(run) for run in catalogue.runs.values()]
        )
        rows = [
            {
                "run": state.run,
                "steps": len(state.steps),
                "latest": state.latest,
                "adapter": state.adapter,
                "updated": state.updated,
            }
            for state in states
        ]
        return self._render(
            request,
            "index.html",
            "Training runs and evaluations",
            runs=rows,
            evaluations=list(catalogue.evaluations.values()),
            roots=[str(root) for root in self.settings.roots],
        )

    async def run(self, request: Request) -> Response:
        key = request.path_params["key"]
        catalogue = await anyio.to_thread.run_sync(self._catalogue)
        run = catalogue.runs.get(key)
        if run is None:
            return self._missing(request, "training run", key)
        state = await anyio.to_thread.run_sync(read_run, run)
        kept, problems = await anyio.to_thread.run_sync(kept_versions, run)
        base = request.scope.get("root_path", "").rstrip("/")
        events = f"{base}/events/{quote(key)}?after={state.position}"
        return self._render(
            request,
            "run.html",
            f"Training run {key}",
            run=run,
            events=events,
            kept=kept,
            kept_problems=problems,
            evaluations=catalogue.evaluations_of(run),
            **state.live(),
        )

    async def evaluation(self, request: Request) -> Response:
        key = request.path_params["key"]
        catalogue = await anyio.to_thread.run_sync(self._catalogue)
        evaluation = catalogue.evaluations.get(key)
        if evaluation is None:
            return self._missing(request, "evaluation", key)
        runs = [
            run for run in catalogue.runs.values() if run.directory == evaluation.directory.parent
        ]
        context: dict[str, Any] = {
            "evaluation": evaluation,
            "runs": runs,
            "report": None,
            "charts": [],
        }
        try:
            report = await anyio.to_thread.run_sync(read_eval_report, evaluation.report)
            context.update(report=report, charts=eval_charts(report), problem=None)
        except EvalReportError as problem:
            context["problem"] = str(problem)
        return self._render(request, "eval.html", f"Evaluation {key}", **context)

    async def events(self, request: Request) -> Response:
        key = request.path_params["key"]
        run = (await anyio.to_thread.run_sync(self._catalogue)).runs.get(key)
        if run is None:
            return PlainTextResponse(f"no training run {key!r}\n", status_code=404)
        position = request.headers.get("last-event-id") or request.query_params.get("after", "0:0")
        start = _position(position)
        if start is None:
            return PlainTextResponse(
                f"bad position {position!r}: expected OFFSET:LINE (two whole numbers)\n",
                status_code=400,
            )
        tail = MetricsTail(run.metrics, offset=start[0], line=start[1])
        return StreamingResponse(
            _stream(
                run_state=lambda: read_run(run),
                tail=tail,
                settings=self.settings,
                stopping=ServerStopping.of(request.scope),
            ),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )


def _position(text: str) -> tuple[int, int] | None:
    found = _POSITION.fullmatch(text)
    return None if found is None else (int(found[1]), int(found[2]))


async def _stream(
    *,
    run_state: Callable[[], RunState],
    tail: MetricsTail,
    settings: _Settings,
    stopping: ServerStopping,
) -> AsyncIterator[bytes]:
    """``step`` (one per new line), ``skipped`` (a malformed line) and then ``charts`` (the
    live part of the page, drawn again) each time the log grows; ``reset`` when it shrank.
    Ends when the server begins to stop."""
    yield f"retry: {round(settings.poll_seconds * 1000)}\n\n".encode()
    waited = 0.0
    since_beat = 0.0
    while waited < settings.stream_seconds:
        if await anyio.to_thread.run_sync(tail.shrunk):
            yield encode_event("the metrics log was replaced", "reset")
            return
        try:
            read = await anyio.to_thread.run_sync(tail.read)
        except OSError as error:  # the browser reconnects and tries again
            yield encode_event(f"{tail.path.name}: cannot be read ({error.strerror})", "skipped")
            return
        if read.metrics or read.skipped:
            for step in read.metrics:
                yield encode_json(step.to_json(), "step")
            for problem in read.skipped:
                yield encode_event(problem, "skipped")
            state = await anyio.to_thread.run_sync(run_state)
            yield encode_event(render_live(state), "charts", f"{tail.offset}:{tail.line}")
            since_beat = 0.0
        elif since_beat >= _HEARTBEAT_SECONDS:
            yield b": still following\n\n"
            since_beat = 0.0
        if await stopping.wait(settings.poll_seconds):
            return
        waited += settings.poll_seconds
        since_beat += settings.poll_seconds
