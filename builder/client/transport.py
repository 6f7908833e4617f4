"""The client's HTTP transport: a whole-request deadline, and a rule for where a registry may send the client.

``urllib`` gives each socket operation a timeout, so a server sending one byte a second never times out; here
every request also gets a deadline that shuts its socket when it passes, so no read outlasts it. Each
connection resolves its host once, has every address judged by ``reach`` and connects to one of them; redirects
are judged by ``reach`` too, at every hop. Each request, each redirect hop included, carries the credentials of
its own origin only (``credentials``), so a redirect elsewhere never takes the registry's along.

Connections are kept alive and reused by the next request to the same host (a search query's dozen files cost
one connection per thread, not one each); a reused connection is held to the new request's deadline, and one
the server has closed meanwhile is replaced by a fresh one, once.
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import itertools
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..core.errors import ClientError
from .credentials import Credentials
from .reach import Reach, Resolved


class Deadline:
    """One request's time limit: when it passes, the request's sockets are shut, so no read can outlast it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self.done = False
        self.due = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Deadline:
        self.due = time.monotonic() + self.seconds
        _WATCH.add(self, self.due)
        return self

    def remaining(self) -> float:
        return max(self.due - time.monotonic(), 0.0)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.done = True

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def detach(self, sock: socket.socket) -> bool:
        """Stop watching ``sock`` (its request is done and it goes back to the pool); False if the deadline has
        passed, when it may already be shut and must not be reused."""
        with self._lock:
            if sock in self._sockets:
                self._sockets.remove(sock)
            return not self.expired

    def _expire(self) -> None:
        with self._lock:
            if self.done:
                return
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


class _Watch:
    """One thread for every deadline of the process, started on first use: a timer thread per request cost
    ~0.4 ms each, a dozen times per search query."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)  # the thread is not copied into a child; its lock may be

    def _reset(self) -> None:
        self._changed = threading.Condition()
        self._due: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, deadline: Deadline, when: float) -> None:
        with self._changed:
            heapq.heappush(self._due, (when, next(self._order), deadline))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="skillreg-deadlines", daemon=True)
                self._thread.start()
            elif self._due[0][2] is deadline:
                self._changed.notify()

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                while self._due and (self._due[0][2].done or self._due[0][0] <= now):
                    _, _, deadline = heapq.heappop(self._due)
                    deadline._expire()  # does nothing once its request is done
                self._changed.wait(self._due[0][0] - now if self._due else None)


_WATCH = _Watch()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class DeadlineRequest(urllib.request.Request):
    deadline: Deadline


class _Guarded:
    """Mixed into a connection: it connects only to an address ``reach`` allowed for its host (resolved once, so
    the address judged is the address reached), and registers its socket with the request's deadline."""

    host: str
    sock: Any
    plain_http = False

    def __init__(self, host: str, *, deadline: Deadline, reach: Reach, proxied: tuple[str, int] | None,
                 **kwargs: Any) -> None:
        super().__init__(host, **kwargs)  # type: ignore[call-arg]  # the connection class mixed in after this one
        self.deadline, self.reach, self.proxied = deadline, reach, proxied
        self.url = ""  # the request being sent, which a refusal names
        self._create_connection = self._connect_judged

    def _connect_judged(self, address: tuple[str, int], timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
                        source_address: tuple[str, int] | None = None) -> socket.socket:
        if self.proxied is not None:  # the proxy is the user's setting; the host it is asked for is judged
            self.reach.through_proxy(self.url, *self.proxied, plain_http=self.plain_http)
            return socket.create_connection(address, timeout, source_address)
        found = self.reach.addresses(self.url, address[0], address[1], plain_http=self.plain_http)
        return _connect_first(found, timeout, source_address)

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self.deadline.attach(self.sock)


def _connect_first(found: Resolved, timeout: Any, source_address: tuple[str, int] | None) -> socket.socket:
    """``socket.create_connection`` over addresses already resolved and judged: the first that answers."""
    error: OSError | None = None
    for family, sockaddr in found:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:  # type: ignore[attr-defined]
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            error = exc
            sock.close()
    raise error or OSError("the host resolves to no address")


class _HTTPConnection(_Guarded, http.client.HTTPConnection):
    plain_http = True


class _HTTPSConnection(_Guarded, http.client.HTTPSConnection):
    pass


class _PooledResponse(http.client.HTTPResponse):
    """A response whose connection goes back to the pool when it is closed after its whole body was read."""

    release: Callable[[bool], None] | None = None

    def close(self) -> None:
        release, self.release = self.release, None
        # The whole body arrived: its declared length counted down to zero, or the last chunk was read (http.client
        # drops ``fp`` then); an early end of the stream also drops ``fp`` but leaves ``length`` above zero.
        whole = (self.length == 0 or (bool(self.chunked) and self.fp is None)) and not self.will_close
        super().close()
        if release is not None:
            release(whole)


def _ack_at_once(sock: Any) -> None:
    """Acknowledge the answer's first packet at once (Linux): a server that writes its headers and its body
    separately with Nagle's algorithm on (Python's http.server) holds the body until that acknowledgement, and on
    a kept-alive connection the kernel would delay it by up to 40 ms, hoping to send it with the next request."""
    if hasattr(socket, "TCP_QUICKACK") and sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


_POOLS: weakref.WeakSet[_Pool] = weakref.WeakSet()


def _forget_pools() -> None:
    for pool in list(_POOLS):
        pool._forget()


os.register_at_fork(after_in_child=_forget_pools)

IDLE_SECONDS = 10.0  # a kept-alive connection unused this long is closed, not reused (servers drop idle ones)
POOL_SIZE = 8  # idle connections kept per host: as many as a search query fetches side by side


class _Pool:
    """Idle kept-alive connections by (kind, host, tunnel, timeout), shared by the threads of one Transport."""

    def __init__(self) -> None:
        self._idle: dict[tuple[Any, ...], list[tuple[float, http.client.HTTPConnection]]] = {}
        self._lock = threading.Lock()
        _POOLS.add(self)

    def _forget(self) -> None:
        """In a forked child: the idle sockets are the parent's connections too; close this copy, never reuse."""
        self._lock = threading.Lock()
        idle, self._idle = self._idle, {}
        for entries in idle.values():
            for _, connection in entries:
                connection.close()  # closes the child's descriptor only: no shutdown(), so the parent's stays open

    def take(self, key: tuple[Any, ...]) -> http.client.HTTPConnection | None:
        stale: list[http.client.HTTPConnection] = []
        found = None
        with self._lock:
            idle = self._idle.get(key, [])
            while idle:
                since, connection = idle.pop()
                if time.monotonic() - since <= IDLE_SECONDS and connection.sock is not None:
                    found = connection
                    break
                stale.append(connection)
        for connection in stale:
            connection.close()
        return found

    def give(self, key: tuple[Any, ...], connection: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < POOL_SIZE:
                idle.append((time.monotonic(), connection))
                return
        connection.close()

    def close(self) -> None:
        with self._lock:
            idle = [connection for entries in self._idle.values() for _, connection in entries]
            self._idle.clear()
        for connection in idle:
            connection.close()


class Transport(urllib.request.HTTPRedirectHandler, urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    """Opens connections under the request's deadline, to the addresses ``reach`` allows, and follows only the
    redirects it allows. ``public_only``: the registry comes from a lock file, so every address must be public.
    Each request carries the credentials of its own origin only (a redirect's of its target's, if any)."""

    def __init__(self, registry_url: str, *, public_only: bool = False, credentials: Credentials | None = None
                 ) -> None:
        urllib.request.HTTPHandler.__init__(self)
        self.ssl_context = ssl.create_default_context()
        urllib.request.HTTPSHandler.__init__(self, context=self.ssl_context)
        self.reach = Reach(registry_url, public_only=public_only)
        self.credentials = credentials
        self._pool = _Pool()

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self._open(_HTTPConnection, req)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self._open(_HTTPSConnection, req, context=self.ssl_context)

    def close(self) -> None:
        """Close the idle kept-alive connections."""
        self._pool.close()

    def _open(self, kind: type[http.client.HTTPConnection], req: urllib.request.Request,
              **kwargs: Any) -> http.client.HTTPResponse:
        """urllib's ``do_open`` without its ``Connection: close``: an idle connection to the host is reused
        (under this request's deadline) and, if the server closed it meanwhile, replaced by a new one once."""
        if not req.host:
            raise urllib.error.URLError("no host given")
        deadline: Deadline = req.deadline  # type: ignore[attr-defined]  # set on every request by Registry
        tunnel = req._tunnel_host  # type: ignore[attr-defined]  # set by ProxyHandler for https through a proxy
        key = (kind, req.host, tunnel, req.timeout)
        headers = dict(req.unredirected_hdrs)
        headers.update({k: v for k, v in req.headers.items() if k not in headers})
        headers = {name.title(): value for name, value in headers.items()}
        headers.pop("Authorization", None)  # only ever the origin's own, added here
        if self.credentials is not None:
            credential = self.credentials.for_url(req.full_url, deadline.remaining())
            if credential is not None:
                headers["Authorization"] = credential.header
        reused = self._pool.take(key)
        if reused is not None:
            reused.deadline = deadline  # type: ignore[attr-defined]  # a _Guarded connection
            deadline.attach(reused.sock)
            try:
                return self._send(reused, req, headers, key, reused=True)
            except (ConnectionError, http.client.BadStatusLine):  # closed by the server while it sat idle
                if deadline.expired:
                    raise urllib.error.URLError(TimeoutError()) from None
        connection = kind(req.host, timeout=req.timeout, deadline=deadline,  # type: ignore[call-arg]
                          reach=self.reach, proxied=_proxied_target(req), **kwargs)
        connection.response_class = _PooledResponse
        if tunnel:
            proxy_auth = headers.pop("Proxy-Authorization", None)
            connection.set_tunnel(tunnel, headers={"Proxy-Authorization": proxy_auth} if proxy_auth else None)
        return self._send(connection, req, headers, key, reused=False)

    def _send(self, connection: http.client.HTTPConnection, req: urllib.request.Request, headers: dict[str, str],
              key: tuple[Any, ...], *, reused: bool) -> http.client.HTTPResponse:
        """Send ``req`` on ``connection`` and read the status and headers; the response hands the connection
        back to the pool when it is closed after its whole body. A reused connection's failure to get any answer
        is raised as it is, for ``_open`` to try a new connection."""
        connection.url = req.full_url  # type: ignore[attr-defined]  # a _Guarded connection
        try:
            try:
                connection.request(req.get_method(), req.selector, req.data, headers,
                                   encode_chunked=req.has_header("Transfer-encoding"))
            except OSError as err:
                if reused and isinstance(err, ConnectionError):
                    raise
                raise urllib.error.URLError(err) from None
            _ack_at_once(connection.sock)
            response = connection.getresponse()
        except BaseException:
            connection.close()
            raise
        deadline: Deadline = req.deadline  # type: ignore[attr-defined]

        def release(whole: bool) -> None:
            if whole and connection.sock is not None and deadline.detach(connection.sock):
                self._pool.give(key, connection)
            else:
                connection.close()

        assert isinstance(response, _PooledResponse)
        response.release = release
        response.url = req.get_full_url()  # what urllib's do_open sets
        response.msg = response.reason  # type: ignore[assignment]
        return response

    def http_error_302(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                       headers: Any) -> Any:
        location = headers.get("location") or headers.get("uri")
        if location:
            problem = self.reach.redirect_problem(req.full_url, urljoin(req.full_url, location))
            if problem:
                fp.close()
                raise ClientError(problem)
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            new.deadline = req.deadline  # type: ignore[attr-defined]
        return new


def _proxied_target(req: urllib.request.Request) -> tuple[str, int] | None:
    """The host and port a proxy is asked for (ProxyHandler set ``req.host`` to the proxy's), or None."""
    if not (req._tunnel_host or req.has_proxy()):  # type: ignore[attr-defined]
        return None
    parts = urlsplit(req.full_url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


class NotFound(ClientError):
    """The registry answered that a document does not exist (HTTP 404, or no such file)."""


class TooLarge(ClientError):
    """A document or file is larger than the client accepts for it (for a signed file: than its signed length)."""


class Unreachable(ClientError):
    """The registry did not answer usefully after every retry (refused, timed out, unknown host, 5xx)."""
