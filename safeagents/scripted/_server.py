"""Run a scripted model with uvicorn on a loopback port, in a background thread."""

from __future__ import annotations

from safeagents._thread_server import ThreadedServer
from safeagents.scripted._app import RecordedRequest, ScriptedModel, create_app
from safeagents.scripted._script import Script

__all__ = ["ScriptedServer"]


class ScriptedServer(ThreadedServer):
    """A scripted model server; use as a context manager or call :meth:`start`/:meth:`stop`.

    ``port=0`` picks a free port; :attr:`url` is the root (``http://127.0.0.1:PORT``) and
    :attr:`base_url` the OpenAI-style base (``.../v1``).
    """

    label = "scripted model server"

    def __init__(
        self,
        script: Script,
        host: str = "127.0.0.1",
        port: int = 0,
        model_names: tuple[str, ...] = ("scripted",),
        event_delay: float = 0.0,
        reply_delay: float = 0.0,
    ) -> None:
        self.model = ScriptedModel(
            script, model_names=model_names, event_delay=event_delay, reply_delay=reply_delay
        )
        super().__init__(
            create_app(self.model), host, port, lifespan="off", http="h11", loop="asyncio"
        )

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.model.requests
