"""A total deadline per request, counted from the request's start, and a byte limit.

httpx's timeouts limit each socket operation: a server that sends its headers and then one
byte every 0.8 s never trips a 3 s read timeout and holds a call for as long as it likes.
:class:`DeadlineTransport` is an ``httpx`` transport over an ``httpcore`` connection pool
whose network streams clamp every connect, read and write to what is left of the calling
thread's deadline (:func:`deadline_scope`), so that a request ends at its ``timeout_s``
however the server paces its bytes. The clock starts at the request's first socket
operation: waiting for one of the client's own pooled connections is not the request's
time (see :mod:`ragassay.endpoint.client`).

httpx and httpcore are imported by the client on its first request only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

_local = threading.local()


@contextmanager
def deadline_scope(timeout_s: float) -> Iterator[None]:
    """Within the block, this thread's requests end ``timeout_s`` after their first socket
    operation (connect, or the first write on a reused connection)."""
    _local.timeout_s, _local.deadline = timeout_s, None
    try:
        yield
    finally:
        _local.timeout_s = _local.deadline = None


def _left(timeout: float | None, exc: type[Exception]) -> float | None:
    """The smaller of ``timeout`` and the time left before this thread's deadline (the
    deadline starts now if it has not yet); ``exc`` when none is left."""
    limit = getattr(_local, "timeout_s", None)
    if limit is None:
        return timeout
    if _local.deadline is None:
        _local.deadline = time.monotonic() + limit
    left = _local.deadline - time.monotonic()
    if left <= 0:
        raise exc(f"the request's {limit:g} s were over")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname,
                                             _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _left(timeout,
                                                                  httpcore.ConnectTimeout),
                                               local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(
            path, _left(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


# httpcore's exceptions as httpx's, most specific first (what httpx's own transport maps).
_MAPPED: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _mapped(request: httpx.Request) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core, mapped in _MAPPED:
            if isinstance(exc, core):
                raise mapped(str(exc), request=request) from exc
        raise


class _Body(httpx.SyncByteStream):
    def __init__(self, inner: Iterable[bytes], request: httpx.Request) -> None:
        self._inner = inner
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        with _mapped(self._request):
            yield from self._inner

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


class DeadlineTransport(httpx.BaseTransport):
    """httpx's default transport for plain HTTP/1.1 (no proxy: the client never reads the
    environment), over streams bounded by the thread's deadline (:func:`deadline_scope`)."""

    def __init__(self, max_connections: int | None = None) -> None:
        import ssl

        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl.create_default_context(), max_connections=max_connections,
            max_keepalive_connections=max_connections, network_backend=_Backend())

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)  # a sync client's request
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                             port=request.url.port, target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream,
            extensions=request.extensions)
        with _mapped(request):
            resp = self._pool.handle_request(core)
        assert isinstance(resp.stream, Iterable)
        return httpx.Response(status_code=resp.status, headers=resp.headers,
                              stream=_Body(resp.stream, request), extensions=resp.extensions)

    def close(self) -> None:
        self._pool.close()
