"""``skillreg serve``: build, serve the output on 127.0.0.1, and rebuild when a skill or registry.yaml changes.

Changes are found by polling modification times once a second, which needs no extra dependency and works the
same on every platform. A build that fails leaves the previous output in place, so the page being read stays
up while the skill is fixed; with no previous output, every request is answered 503 with the build's error.

The server answers only requests whose ``Host`` names it (127.0.0.1, localhost, [::1] or the address it was bound
to, with or without its port): a page on another site whose name an attacker re-points at 127.0.0.1 (DNS
rebinding) sends its own name as ``Host`` and is refused, so it cannot read the local site.
"""

from __future__ import annotations

import functools
import html
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..core.config import RegistryConfig, merge_flags
from ..core.content_types import content_type
from ..core.discovery import registry_skills
from ..core.errors import SkillRegError
from ..core.limits import MCP_MAX_SKILL_BYTES
from ..core.urls import INDEX_PATH, is_skill_file
from ..publish.build import BuildOptions, BuildResult, build

Snapshot = dict[str, tuple[int, int]]


@dataclass(frozen=True)
class ServeEvent:
    """What the loop tells its caller: ``serving`` (url), ``built`` (result), ``failed`` (error; ``kept``: an
    earlier build is still served), ``waiting`` (another build holds the output; ``holder`` is its process id
    when known)."""

    kind: str
    url: str = ""
    result: BuildResult | None = None
    error: SkillRegError | None = None
    changed: tuple[str, ...] = ()
    holder: int | None = None
    kept: bool = False


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


def watched_paths(config: RegistryConfig, out: Path) -> list[Path]:
    """What a rebuild follows: each folder holding skills (so a new skill beside them counts), a skill at the top
    itself, the folders registry.yaml names, and registry.yaml; never the output. Worked out again after each
    build, so a skill in a new folder is followed from the build that found it."""
    root = config.root.resolve()
    found = registry_skills(config, exclude=[out])
    places = {s.folder if s.folder.parent == root or s.folder == root else s.folder.parent for s in found.skills}
    places.update(root / loc for loc in config.locations or () if not any(c in loc for c in "*?["))
    output = out.resolve()
    kept = sorted(p for p in places if p != root and not p.resolve().is_relative_to(output))
    outer = [p for p in kept if not any(p != q and p.is_relative_to(q) for q in kept)]
    return outer + ([config.path] if config.path else [])


def _watched(config: RegistryConfig, out: Path) -> list[Path]:
    """``watched_paths``; when discovery fails (registry.yaml broken mid-edit), registry.yaml and the skills
    folder, so that the fix is noticed."""
    try:
        return watched_paths(config, out)
    except (SkillRegError, OSError):
        return [config.skills_path] + ([config.path] if config.path else [])


def _changed(before: Snapshot, after: Snapshot) -> tuple[str, ...]:
    return tuple(sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p)))


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
MAX_SNIFF_BYTES = MCP_MAX_SKILL_BYTES  # read to tell UTF-8 text from bytes; no published file of a skill is larger
_WILDCARDS = ("", "0.0.0.0", "::")


def host_names(bound: str) -> tuple[str, ...]:
    """The names a server bound to ``bound`` answers to: the loopback names and an address the user bound
    explicitly (a wildcard bind adds none: which of the machine's names a visitor used cannot be known)."""
    name = f"[{bound.lower()}]" if ":" in bound else bound.lower()
    return LOOPBACK_HOSTS if bound in _WILDCARDS or name in LOOPBACK_HOSTS else (*LOOPBACK_HOSTS, name)


def allowed_hosts(names: tuple[str, ...], port: int) -> frozenset[str]:
    """The ``Host`` values (lower-case) answered on ``port``: each name with or without the port."""
    return frozenset(spelling for name in names for spelling in (name, f"{name}:{port}"))


class _SiteHandler(_QuietHandler):
    """Serves the build as the static host would: a missing page gets the site's own 404.html (status 404),
    and the site also answers under its published base path (``/skill-registry/...``), where that page's
    site-absolute links point. A request that does not name this server in ``Host`` gets 421 and nothing else."""

    def __init__(self, *args: Any, base_path: str = "/", **kwargs: Any) -> None:
        self.base_path = base_path  # before the base class's __init__, which handles the request
        super().__init__(*args, **kwargs)

    def parse_request(self) -> bool:
        """The request line and headers, then the host check, before any method's handler reads a file."""
        if not super().parse_request():
            return False
        refusal = self._host_refusal()
        if refusal is None:
            return True
        self._refuse(refusal)
        return False

    def _host_refusal(self) -> HTTPStatus | None:
        """Why the request is not answered, or None. A missing Host is refused too: browsers always send one, so
        only a hand-made request lacks it, and an HTTP/1.1 request without exactly one is malformed (RFC 9112)."""
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1:
            old = self.request_version in ("HTTP/0.9", "HTTP/1.0")
            return HTTPStatus.MISDIRECTED_REQUEST if old else HTTPStatus.BAD_REQUEST
        allowed = self.server.allowed if isinstance(self.server, _SiteServer) else frozenset[str]()
        # An absolute request target (GET http://name/ ...) names the host that counts, Host notwithstanding.
        target = urlsplit(self.path).netloc if not self.path.startswith("/") else hosts[0]
        if hosts[0].strip().lower() in allowed and target.strip().lower() in allowed:
            return None
        return HTTPStatus.MISDIRECTED_REQUEST

    def _refuse(self, status: HTTPStatus) -> None:
        """A short plain-text answer that names the allowed hosts and never echoes the request's Host back."""
        names = self.server.names if isinstance(self.server, _SiteServer) else LOOPBACK_HOSTS
        body = (f"{status.value} {status.phrase}: this server answers only requests for "
                f"{', '.join(names)} (Host header).\n").encode("ascii")
        self.close_connection = True
        self._answer(status, "text/plain; charset=utf-8", body)

    def _answer(self, status: int, content_type: str, body: bytes, message: str | None = None) -> None:
        """A whole answer of ``body`` (none to a HEAD request), and the connection closed after it."""
        self.send_response(status, message)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        """The type from the registry's one table (``core.content_types``), never the machine's: a skill's own file
        is never sent as a type a browser runs, and an unknown extension is text or bytes."""
        rel = Path(os.path.relpath(path, self.directory)).as_posix()
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_SNIFF_BYTES + 1)
        except OSError:
            data = b""
        if len(data) > MAX_SNIFF_BYTES:  # a file this large is never a skill's: its type alone decides
            data = b"\0"
        return content_type(rel, data, skill_file=is_skill_file(rel))

    def send_head(self) -> Any:
        """The file, unless the output holds no build (the first one failed): then 503 and why, never an empty
        folder's listing."""
        if (Path(self.directory) / INDEX_PATH).is_file():
            return super().send_head()
        failure = self.server.failure if isinstance(self.server, _SiteServer) else ""
        why = f"<p>The build failed:</p>\n<pre>{html.escape(failure)}</pre>\n" if failure else ""
        body = (f"<!doctype html>\n<title>No build to serve</title>\n<h1>No build to serve yet</h1>\n{why}"
                "<p>Fix what the terminal running <code>skillreg serve</code> reports and save: the site is rebuilt "
                "and served. <code>skillreg serve --keep-going</code> leaves invalid skills out.</p>\n")
        self._answer(HTTPStatus.SERVICE_UNAVAILABLE, "text/html; charset=utf-8", body.encode("utf-8"))
        return None

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        """A folder without index.html is a 404, as on a static host, never a listing of the output."""
        self.send_error(HTTPStatus.NOT_FOUND)

    def end_headers(self) -> None:
        """Every answer says its type is final: a browser never sniffs a file into a page."""
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

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
        self._answer(code, "text/html; charset=utf-8", page.read_bytes(), message)


def _handler(out: Path, base_url: str) -> Callable[..., _SiteHandler]:
    path = urlsplit(base_url).path or "/"
    return functools.partial(_SiteHandler, directory=str(out), base_path=path if path.endswith("/") else path + "/")


class _SiteServer(ThreadingHTTPServer):
    """Knows, once bound, the Host values its handlers answer."""

    daemon_threads = True
    names: tuple[str, ...] = LOOPBACK_HOSTS
    allowed: frozenset[str] = frozenset()
    failure = ""  # the last build's error while no build can be served

    def server_bind(self) -> None:
        super().server_bind()
        self.names = host_names(str(self.socket.getsockname()[0]))
        self.allowed = allowed_hosts(self.names, self.server_port)


class _SiteServer6(_SiteServer):
    address_family = socket.AF_INET6


def serve(config: RegistryConfig, out: Path, *, port: int = 8000, host: str = "127.0.0.1", interval: float = 1.0,
          on_event: Callable[[ServeEvent], None] = lambda event: None,
          stop: threading.Event | None = None, base_url: str | None = None, site: bool = True,
          keep_going: bool = False) -> None:
    """Build ``out``, serve it on ``host``:``port`` (127.0.0.1 unless asked) and rebuild on change until ``stop``
    is set (or Ctrl-C). The output names ``base_url`` as its address, else the one served; ``site=False`` builds
    the API alone; ``keep_going`` publishes the valid skills when some are not."""
    stop = stop or threading.Event()
    options = BuildOptions(site=site, keep_going=keep_going,
                           on_wait=lambda holder: on_event(ServeEvent("waiting", holder=holder)))
    served = config

    def rebuild(changed: tuple[str, ...] = ()) -> None:
        try:
            # build() holds the output's lock, so a rebuild waits for a `skillreg build` of the same folder.
            result = build(served, out, options)
            server.failure = ""
            on_event(ServeEvent("built", result=result, changed=changed))
        except SkillRegError as exc:
            server.failure = str(exc)
            on_event(ServeEvent("failed", error=exc, changed=changed, kept=(out / INDEX_PATH).is_file()))

    # Bound before the first build, which names the address served (install commands, API URLs) unless a
    # base_url is given; requests wait in the backlog until the server starts after that build.
    server = (_SiteServer6 if ":" in host else _SiteServer)((host, port),
                                                            _handler(out, base_url or "/"))
    name = f"[{host}]" if ":" in host else host
    url = f"http://{name}:{server.server_port}/"
    served = merge_flags(config, base_url=base_url or url)
    thread = threading.Thread(target=server.serve_forever, name="skillreg-serve", daemon=True)
    try:
        watched = _watched(config, out)
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
                now = _watched(config, out)
                if now != watched:  # a skill in a new folder: follow it from here
                    watched, before = now, snapshot(now)
    finally:
        if thread.is_alive():
            server.shutdown()
            thread.join(timeout=5)
        server.server_close()
