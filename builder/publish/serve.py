"""``skillreg serve``: build, serve the output on 127.0.0.1, and rebuild when a skill or registry.yaml changes.

Changes are found by polling modification times once a second, which needs no extra dependency and works the
same on every platform. A build that fails leaves the previous output in place, so the page being read stays
up while the skill is fixed.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..core.config import RegistryConfig
from ..core.errors import SkillRegError
from .build import BuildResult, build

Snapshot = dict[str, tuple[int, int]]


@dataclass(frozen=True)
class ServeEvent:
    """What the loop tells its caller: ``serving`` (url), ``built`` (result), ``failed`` (error), ``waiting``
    (another build holds the output; ``holder`` is its process id when known)."""

    kind: str
    url: str = ""
    result: BuildResult | None = None
    error: SkillRegError | None = None
    changed: tuple[str, ...] = ()
    holder: int | None = None


def snapshot(paths: list[Path]) -> Snapshot:
    """Modification time and size of every file below ``paths`` (files or folders); hidden entries skipped."""
    seen: Snapshot = {}
    for path in paths:
        if path.is_file():
            stat = path.stat()
            seen[str(path)] = (stat.st_mtime_ns, stat.st_size)
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in files:
                if name.startswith("."):
                    continue
                full = os.path.join(folder, name)
                try:
                    stat = os.stat(full)
                except OSError:
                    continue  # removed while we looked
                seen[full] = (stat.st_mtime_ns, stat.st_size)
    return seen


def _changed(before: Snapshot, after: Snapshot) -> tuple[str, ...]:
    return tuple(sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p)))


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


class _SiteHandler(_QuietHandler):
    """Serves the build as the static host would: a missing page gets the site's own 404.html (status 404),
    and the site also answers under its published base path (``/skill-registry/...``), where that page's
    site-absolute links point."""

    def __init__(self, *args: Any, base_path: str = "/", **kwargs: Any) -> None:
        self.base_path = base_path  # before the base class's __init__, which handles the request
        super().__init__(*args, **kwargs)

    def translate_path(self, path: str) -> str:
        local = super().translate_path(path)
        if self.base_path != "/" and path.startswith(self.base_path) and not os.path.exists(local):
            return super().translate_path("/" + path[len(self.base_path):])
        return local

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code != HTTPStatus.NOT_FOUND or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(code, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _handler(out: Path, base_url: str) -> Callable[..., _SiteHandler]:
    path = urlsplit(base_url).path or "/"
    return functools.partial(_SiteHandler, directory=str(out), base_path=path if path.endswith("/") else path + "/")


def serve(config: RegistryConfig, out: Path, *, port: int = 8000, interval: float = 1.0,
          on_event: Callable[[ServeEvent], None] = lambda event: None,
          stop: threading.Event | None = None, **build_options: Any) -> None:
    """Build ``out``, serve it on 127.0.0.1:``port`` and rebuild on change until ``stop`` is set (or Ctrl-C)."""
    stop = stop or threading.Event()
    watched = [config.skills_path] + ([config.path] if config.path else [])

    def rebuild(changed: tuple[str, ...] = ()) -> None:
        try:
            # build() holds the output's lock, so a rebuild waits for a `skillreg build` of the same folder.
            result = build(config, out, on_wait=lambda holder: on_event(ServeEvent("waiting", holder=holder)),
                           **build_options)
            on_event(ServeEvent("built", result=result, changed=changed))
        except SkillRegError as exc:
            on_event(ServeEvent("failed", error=exc, changed=changed))

    # Bound before the first build, which names the address served (install commands, API URLs) unless a
    # base_url is given; requests wait in the backlog until the server starts after that build.
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(out, build_options.get("base_url") or "/"))
    url = f"http://127.0.0.1:{server.server_port}/"
    build_options["base_url"] = build_options.get("base_url") or url
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="skillreg-serve", daemon=True)
    try:
        before = snapshot(watched)
        rebuild()
        out.mkdir(parents=True, exist_ok=True)
        thread.start()
        on_event(ServeEvent("serving", url=url))
        while not stop.wait(interval):
            after = snapshot(watched)
            changed = _changed(before, after)
            if changed:
                before = after
                rebuild(changed)
    finally:
        if thread.is_alive():
            server.shutdown()
            thread.join(timeout=5)
        server.server_close()
