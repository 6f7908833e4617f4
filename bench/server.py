"""A static file server on 127.0.0.1 that counts the requests it answers: GitHub Pages' behaviour that the client
relies on (an ETag per file, 304 Not Modified for a matching If-None-Match), and nothing else."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass
class Served:
    root: Path
    log: list[tuple[str, int]] = field(default_factory=list)  # (path, status) per request, in order
    sent: list[int] = field(default_factory=list)  # bytes of each answer (status line, headers, body), in order
    lock: threading.Lock = field(default_factory=threading.Lock)

    def since(self, mark: int) -> list[tuple[str, int]]:
        with self.lock:
            return self.log[mark:]

    def bytes_since(self, mark: int) -> int:
        with self.lock:
            return sum(self.sent[mark:])

    def mark(self) -> int:
        with self.lock:
            return len(self.log)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # As a static host's server does: each write goes out at once (http.server writes the headers and the body
    # separately, and with Nagle's algorithm on a kept-alive connection waits for the client's delayed ACK).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        served: Served = self.server.served  # type: ignore[attr-defined]
        path = unquote(urlsplit(self.path).path).lstrip("/")
        file = served.root / path
        if not file.resolve().is_relative_to(served.root.resolve()) or not file.is_file():
            return self._answer(served, path, 404, b"not found\n", None)
        body = file.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        if self.headers.get("If-None-Match") == etag:
            return self._answer(served, path, 304, b"", etag)
        self._answer(served, path, 200, body, etag)

    def _answer(self, served: Served, path: str, status: int, body: bytes, etag: str | None) -> None:
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        size = sum(len(line) for line in getattr(self, "_headers_buffer", [])) + 2  # with end_headers' blank line
        with served.lock:  # logged before answering: a client may be quicker than this thread
            served.log.append((path, status))
            served.sent.append(size + (len(body) if status != 304 else 0))
        self.end_headers()
        if status != 304:
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # http.server's 5 drops a burst of side-by-side connections (retried a second later)


class CountingServer:
    """``with CountingServer(folder) as server:`` serves ``folder`` at ``server.url``; ``server.served.log``
    lists every request."""

    def __init__(self, root: Path) -> None:
        self.served = Served(root)
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.served = self.served  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self) -> CountingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
