"""One GET of a registry's file over HTTP: retried while a failure may pass, its body read under a size cap and
the request's deadline, and every failure said in one line (the connections themselves are ``transport``'s)."""

from __future__ import annotations

import http.client
import os
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from .. import __version__
from ..core.errors import ClientError, UsageError
from .credentials import Credentials, refusal
from .reach import host_kind
from .transport import Deadline, DeadlineRequest, NotFound, TooLarge, Transport, Unreachable

DEFAULT_TIMEOUT = 30.0  # seconds for one whole request: connecting, the headers and the body
ATTEMPTS = 3  # one request and two retries, on 5xx, 429, timeouts and connection errors
BACKOFF = 0.25  # seconds before the first retry; doubled before each next one
CHUNK = 64 * 1024


def default_timeout() -> float:
    try:
        value = float(os.environ.get("SKILLREG_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        raise UsageError("SKILLREG_TIMEOUT must be a number of seconds") from None
    return value if value > 0 else DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Response:
    status: int  # 200 or 304
    body: bytes
    etag: str | None


class NeedsCredentials(ClientError):
    """The registry answered 401 or 403: it needs credentials, or refused the ones sent."""


class TooSlow(Exception):
    def __init__(self, received: int) -> None:
        self.received = received


class Session:
    """The HTTP side of one registry: its kept-alive connections, its retry policy and the requests it sent."""

    def __init__(self, registry_url: str, *, timeout: float, attempts: int, backoff: float,
                 public_only: bool = False) -> None:
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.requests = 0
        host = urlsplit(registry_url).hostname or ""
        # Loopback never goes through a proxy configured for the outside world.
        # A registry read from a lock is not one the user named: SKILLREG_TOKEN goes there only by its origin.
        self.credentials = Credentials(None if public_only else registry_url)
        handlers: list[urllib.request.BaseHandler] = [Transport(registry_url, public_only=public_only,
                                                                credentials=self.credentials)]
        if host_kind(host) == "loopback":
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)

    def get(self, url: str, etag: str | None, limit: int) -> Response:
        headers = {"User-Agent": f"skillreg/{__version__}", "Accept-Encoding": "identity"}
        if etag:
            headers["If-None-Match"] = etag
        problem = "no answer"
        renewed = False
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            self.requests += 1
            request = DeadlineRequest(url, headers=headers)
            request.deadline = deadline = Deadline(self.timeout)
            try:
                with deadline, self._opener.open(request, timeout=self.timeout) as resp:
                    body = _read_body(resp, limit, url, deadline)
                    return Response(200, body, resp.headers.get("ETag"))
            except TooSlow as exc:  # it answered, but too slowly to finish: another try would do no better
                raise Unreachable(f"cannot fetch {url}: {exc.received:,} bytes arrived within the "
                                  f"{self.timeout:g} s a request may take (SKILLREG_TIMEOUT); giving up") from None
            except urllib.error.HTTPError as exc:
                exc.close()
                if exc.code == 304:
                    return Response(304, b"", exc.headers.get("ETag"))
                if exc.code == 404 or exc.code == 410:
                    raise NotFound(f"{url}: not found (HTTP {exc.code})") from None
                if exc.code in (401, 403):
                    answered = exc.filename or url  # after redirects: whose credentials were refused
                    if exc.code == 401 and not renewed and attempt + 1 < self.attempts \
                            and self.credentials.renew(answered):
                        renewed = True  # a helper's answer that lapsed early: ask it again, once
                        continue
                    raise NeedsCredentials(refusal(url, exc.code, exc.reason, exc.headers.get("WWW-Authenticate"),
                                                   self.credentials.sent(answered))) from None
                if exc.code < 500 and exc.code != 429:
                    raise ClientError(f"{url}: the server refused the request (HTTP {exc.code} {exc.reason})") from None
                problem = f"HTTP {exc.code} {exc.reason}"
            except urllib.error.URLError as exc:
                problem = _describe(TimeoutError() if deadline.expired else exc.reason, self.timeout)
            except (OSError, http.client.HTTPException) as exc:
                problem = _describe(TimeoutError() if deadline.expired else exc, self.timeout)
        raise Unreachable(f"cannot fetch {url}: {problem} (tried {self.attempts} times)")


def _read_body(resp: http.client.HTTPResponse, limit: int, url: str, deadline: Deadline) -> bytes:
    declared = resp.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) >= limit:
        raise TooLarge(f"{url}: the response is {int(declared):,} bytes, larger than the {limit - 1:,} "
                          "expected; refusing it")
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = resp.read1(CHUNK)
        except (OSError, http.client.HTTPException):
            if deadline.expired:
                raise TooSlow(total) from None
            raise
        if not chunk:
            break
        total += len(chunk)
        if total >= limit:
            raise TooLarge(f"{url}: the response is larger than the {limit - 1:,} bytes expected; refusing it")
        chunks.append(chunk)
    if deadline.expired:
        raise TooSlow(total)
    if declared is not None and declared.isdigit() and int(declared) != total:
        raise http.client.IncompleteRead(b"", int(declared) - total)
    return b"".join(chunks)


def _describe(reason: object, timeout: float) -> str:
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return f"no answer within {timeout:g} s"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, http.client.IncompleteRead):
        return f"the connection closed {reason.expected:,} bytes early"
    if isinstance(reason, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(reason, socket.gaierror):
        return "unknown host"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__
