"""The proxy's services (store, upstream client, enforcer, recorder) on a loop of their own.

mitmproxy's async hooks await work submitted here without blocking its event loop; the
stream filter, which mitmproxy calls synchronously, waits for the end-of-stream check.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from safeagents._firewall import Firewall
from safeagents.exchange import Client, ProxyConfig, Services, Upstream
from safeagents.store import Store, open_store

__all__ = ["EngineThread"]

T = TypeVar("T")
Work = Callable[[Services], Coroutine[Any, Any, T]]


class EngineThread:
    """:class:`Services` for ``config`` living on a daemon thread's event loop.

    ``ssl_context`` verifies the upstream when the addon asks it again (re-asks), the
    way mitmproxy verifies it for the harness's own requests.
    """

    def __init__(
        self,
        config: ProxyConfig,
        firewall: Firewall,
        *,
        ssl_context: ssl.SSLContext | None = None,
        store: Store | None = None,
    ) -> None:
        client = Client(
            timeout=config.timeout, connect_timeout=config.connect_timeout, ssl_context=ssl_context
        )
        self.services = Services.build(
            config, firewall, store or open_store(config.store), Upstream(config, client)
        )
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="safeagents-intercept", daemon=True
        )
        self._thread.start()
        self._closed = False

    @property
    def config(self) -> ProxyConfig:
        return self.services.config

    def submit(self, work: Work[T]) -> Future[T]:
        """Start ``work(services)`` on the engine's loop."""
        return asyncio.run_coroutine_threadsafe(work(self.services), self._loop)

    async def run(self, work: Work[T]) -> T:
        """``work(services)``, awaited from another event loop (mitmproxy's)."""
        return await asyncio.wrap_future(self.submit(work))

    def wait(self, work: Work[T], timeout: float) -> T:
        """``work(services)``, blocking the calling thread for at most ``timeout`` seconds."""
        return self.submit(work).result(timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Finish pending sink calls, close the store and the upstream client, stop the loop."""
        if self._closed:
            return
        self._closed = True
        try:
            self.wait(lambda services: services.aclose(), timeout)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._loop.close()
