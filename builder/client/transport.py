"""The client's HTTP transport: a whole-request deadline, and a rule for where a registry may send the client.

``urllib`` gives each socket operation a timeout, so a server sending one byte a second never times out; here
every request also gets a deadline that shuts its socket when it passes, so no read outlasts it. Redirects and
the addresses connections land on are judged against the registry the user named: never from https:// down
to http://, to this machine only from this machine, to a private network only from one.

Connections are kept alive and reused by the next request to the same host (a search query's dozen files cost
one connection per thread, not one each); a reused connection is held to the new request's deadline, and one
the server has closed meanwhile is replaced by a fresh one, once.
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import ipaddress
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


def host_kind(host: str) -> str:
    """``loopback`` (this machine), ``private`` (a local network, link-local, unspecified...) or ``public``.

    A host name other than localhost is ``public`` here; the address it resolves to is judged on connecting.
    """
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return "loopback"
    try:
        address = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        return "public"
    return _address_kind(address)


def _address_kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_private or address.is_link_local or address.is_unspecified or address.is_reserved or \
            address.is_multicast:
        return "private"
    return "public"


def _may_reach(registry_kind: str, target_kind: str) -> bool:
    """A registry may send the client to this machine only from this machine, to a local network only from one."""
    order = {"public": 0, "private": 1, "loopback": 2}
    return order[target_kind] <= order[registry_kind]


def redirect_problem(registry_url: str, from_url: str, to_url: str) -> str | None:
    """Why the client must not follow a redirect from ``from_url`` to ``to_url``, or None when it may.

    Only http(s); never from https:// down to http://; plain http:// only between loopback addresses, and only
    for a registry on loopback; a registry elsewhere never sends the client to this machine or a private address.
    """
    source, target = urlsplit(from_url), urlsplit(to_url)
    scheme = target.scheme.lower()
    if scheme not in ("http", "https"):
        return f"{from_url} redirects to {to_url}; only https:// redirects are followed"
    registry_kind = host_kind(urlsplit(registry_url).hostname or "")
    target_kind = host_kind(target.hostname or "")
    if scheme == "http" and (source.scheme.lower() == "https" or urlsplit(registry_url).scheme == "https" or
                             registry_kind != "loopback" or target_kind != "loopback"):
        return f"{from_url} redirects to {to_url}; refusing to follow it off https://"
    if not _may_reach(registry_kind, target_kind):
        where = "this machine" if target_kind == "loopback" else "a private network address"
        return f"{from_url} redirects to {to_url}; a registry on {urlsplit(registry_url).hostname} may not send " \
               f"the client to {where}"
    return None


def address_problem(registry_url: str, host: str, address: str) -> str | None:
    """Why the client must not talk to ``host`` at ``address`` (what it resolved to), or None when it may.

    The registry's own host is the user's choice; any other host (after a redirect) is judged by its address.
    """
    if host.lower() == (urlsplit(registry_url).hostname or "").lower():
        return None
    try:
        kind = _address_kind(ipaddress.ip_address(address.partition("%")[0]))
    except ValueError:
        return None
    registry_kind = host_kind(urlsplit(registry_url).hostname or "")
    if _may_reach(registry_kind, kind):
        return None
    where = "this machine" if kind == "loopback" else "a private network address"
    return f"{host} resolves to {address}, {where}; a registry on {urlsplit(registry_url).hostname} may not " \
           "send the client there"


class Deadline:
    """One request's time limit: when it passes, the request's sockets are shut, so no read can outlast it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self.done = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Deadline:
        _WATCH.add(self, time.monotonic() + self.seconds)
        return self

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
    """Mixed into a connection: register its socket with the request's deadline, and check where it connected."""

    host: str
    sock: Any
    deadline: Deadline
    registry_url: str

    def __init__(self, host: str, *, deadline: Deadline, registry_url: str, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)  # type: ignore[call-arg]  # the connection class mixed in after this one
        self.deadline, self.registry_url = deadline, registry_url

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self._guard()

    def _guard(self) -> None:
        self.deadline.attach(self.sock)
        try:
            address = str(self.sock.getpeername()[0])
        except (OSError, IndexError):
            return
        problem = address_problem(self.registry_url, self.host, address)
        if problem:
            self.sock.close()
            raise ClientError(problem)


class _HTTPConnection(_Guarded, http.client.HTTPConnection):
    pass


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
    """Opens connections under the request's deadline and follows only the redirects ``redirect_problem`` allows."""

    def __init__(self, registry_url: str) -> None:
        urllib.request.HTTPHandler.__init__(self)
        self.ssl_context = ssl.create_default_context()
        urllib.request.HTTPSHandler.__init__(self, context=self.ssl_context)
        self.registry_url = registry_url
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
                          registry_url=self.registry_url, **kwargs)
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
            problem = redirect_problem(self.registry_url, req.full_url, urljoin(req.full_url, location))
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


class NotFound(ClientError):
    """The registry answered that a document does not exist (HTTP 404, or no such file)."""


class TooLarge(ClientError):
    """A document or file is larger than the client accepts for it (for a signed file: than its signed length)."""


class Unreachable(ClientError):
    """The registry did not answer usefully after every retry (refused, timed out, unknown host, 5xx)."""
