"""Test support for the client and MCP tests: real builds of the bundled registry, served by a real HTTP server
on 127.0.0.1 whose handler counts requests, honours If-None-Match and can be told to misbehave."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tarfile
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from click.testing import CliRunner, Result

from builder.cli.app import cli
from builder.core.config import load_config
from builder.publish.build import BuildOptions, build
from helpers import REPO, missing

SKILLREG = Path(sys.executable).parent / "skillreg"
GIT_ENV = {"GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.com",
           "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.com",
           "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}


def copy_registry(dest: Path) -> Path:
    """registry.yaml and skills/ of this repository, as a git repository of their own (for provenance)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / "registry.yaml", dest / "registry.yaml")
    shutil.copytree(REPO / "skills", dest / "skills", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    commit(dest, "skills")
    return dest


def commit(repo: Path, message: str) -> None:
    env = {**os.environ, **GIT_ENV}
    if not (repo / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True, env=env)


def build_site(registry: Path, out: Path) -> Path:
    """A real ``skillreg build`` of ``registry``; skills that other work left invalid are left out."""
    # The web pages are not what the client reads; leave them out where the build can.
    build(load_config(registry / "registry.yaml"), out, BuildOptions(keep_going=True, site=False))
    return out


def search_overrides(site: Path, edit: Callable[[list[list[Any]]], None]) -> dict[str, bytes]:
    """Server overrides publishing the site's search rows after ``edit``: the whole index, as clients before
    the sharded one read it, and every file of the sharded index (new names included)."""
    import json

    from builder.core.bundle import dumps
    from builder.core.search import SEARCH_INDEX_PATH, search_index
    from builder.publish.search_shards import search_files

    rows = json.loads((site / SEARCH_INDEX_PATH).read_text(encoding="utf-8"))["skills"]
    edit(rows)
    return {SEARCH_INDEX_PATH: dumps(search_index(rows)), **search_files(rows)}


NEW_VERSION = "9.1.0"


def edit_csv_profiler(registry: Path) -> None:
    """A new version of csv-profiler: SKILL.md changes (metadata.version becomes NEW_VERSION), a reference is
    added, the script changes."""
    folder = registry / "skills" / "csv-profiler"
    skill_md = (folder / "SKILL.md").read_text(encoding="utf-8")
    skill_md, count = re.subn(r'(?m)^(\s+version:\s*)"?[^"\n]*"?$', rf'\g<1>"{NEW_VERSION}"', skill_md, count=1)
    assert count == 1, "csv-profiler's SKILL.md has no metadata.version line"
    (folder / "SKILL.md").write_text(skill_md + "\n## Changes in 1.1.0\n\nTSV detection is now automatic.\n",
                                     encoding="utf-8")
    (folder / "references" / "tsv-notes.md").write_text("# TSV notes\n\nTabs separate fields.\n", encoding="utf-8")
    script = folder / "scripts" / "profile_csv.py"
    script.write_text(script.read_text(encoding="utf-8") + "\n# 1.1.0: sniff the delimiter\n", encoding="utf-8")
    commit(registry, f"csv-profiler {NEW_VERSION}")


# -- the server ------------------------------------------------------------------------------------------------

@dataclass
class Fault:
    """What the server does for one request to a path, instead of answering normally."""

    status: int | None = None  # answer with this status and no body
    location: str | None = None  # with ``status``: a Location header (redirects)
    body: bytes | None = None  # serve these bytes instead of the file
    cut_at: float | None = None  # send only this fraction of the body, then close (declared length stays full)
    stall_at: float | None = None  # send this fraction of the body, then wait until released (or 30 s)
    delay: float = 0.0  # wait this long before answering
    reason: str | None = None  # with ``status``: the reason phrase sent after it
    drip: float | None = None  # send the answer one byte at a time, this many seconds apart
    drip_headers: bool = False  # with ``drip``: the status line and headers too, not only the body


@dataclass
class Request:
    path: str
    status: int
    etag_sent: bool


@dataclass
class ServerState:
    root: Path
    log: list[Request] = field(default_factory=list)
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    overrides: dict[str, bytes] = field(default_factory=dict)  # path -> bytes, for every request
    release: threading.Event = field(default_factory=threading.Event)
    stalled: threading.Event = field(default_factory=threading.Event)
    finished: dict[str, threading.Event] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    connections: int = 0  # connections accepted, answered or not (a TLS hello to this plain server is one)
    auth: str | None = None  # the Authorization value every request must carry; else 401 with ``challenge``
    challenge: str = 'Bearer realm="skills"'
    authorizations: list[str | None] = field(default_factory=list)  # each request's Authorization, as received

    def fault(self, path: str, *faults: Fault) -> None:
        self.faults.setdefault(path, []).extend(faults)

    def paths(self) -> list[tuple[str, int]]:
        return [(r.path, r.status) for r in self.log]


class _Handler(BaseHTTPRequestHandler):
    server_version = "TestRegistry/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        state: ServerState = self.server.state  # type: ignore[attr-defined]
        path = unquote(urlsplit(self.path).path).lstrip("/")
        authorization = self.headers.get("Authorization")
        with state.lock:
            state.authorizations.append(authorization)
            queue = state.faults.get(path)
            fault = queue.pop(0) if queue else Fault()
        if state.auth is not None and authorization != state.auth:
            return self._finish(state, path, 401, b"", etag_sent=False, challenge=state.challenge)
        if fault.delay:
            time.sleep(fault.delay)
        if fault.status is not None:
            return self._finish(state, path, fault.status, b"", etag_sent=False, location=fault.location,
                                reason=fault.reason)
        body = fault.body if fault.body is not None else state.overrides.get(path)
        if body is None:
            file = (state.root / path)
            if not file.resolve().is_relative_to(state.root.resolve()) or not file.is_file():
                return self._finish(state, path, 404, b"not found\n", etag_sent=False)
            body = file.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        sent = self.headers.get("If-None-Match")
        if sent == etag:
            return self._finish(state, path, 304, b"", etag_sent=True, etag=etag)
        if fault.drip is not None:
            return self._drip(state, path, body, fault)
        if fault.cut_at is not None or fault.stall_at is not None:
            fraction = fault.cut_at if fault.cut_at is not None else fault.stall_at
            assert fraction is not None
            state.log.append(Request(path, 200, sent is not None))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(body[: int(len(body) * fraction)])
            self.wfile.flush()
            if fault.stall_at is not None:
                state.stalled.set()
                state.release.wait(30)
            self.close_connection = True
            return
        self._finish(state, path, 200, body, etag_sent=sent is not None, etag=etag)

    def _drip(self, state: ServerState, path: str, body: bytes, fault: Fault) -> None:
        """A server that answers, slowly: one byte, then a pause, until the client gives up or the test ends."""
        assert fault.drip is not None
        state.log.append(Request(path, 200, False))
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        if not fault.drip_headers:
            self.wfile.write(head)
            head = b""
        self.close_connection = True
        try:
            for i in range(len(head + body)):
                self.wfile.write((head + body)[i:i + 1])
                self.wfile.flush()
                if state.release.wait(fault.drip):
                    return
        except OSError:  # the client hung up
            return

    def _finish(self, state: ServerState, path: str, status: int, body: bytes, *, etag_sent: bool,
                etag: str | None = None, location: str | None = None, reason: str | None = None,
                challenge: str | None = None) -> None:
        state.log.append(Request(path, status, etag_sent))  # before answering: the client may be quicker
        self.send_response(status, reason)
        if location:
            self.send_header("Location", location)
        if challenge:
            self.send_header("WWW-Authenticate", challenge)
        if etag:
            self.send_header("ETag", etag)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Type", "application/json" if path.endswith(".json") else
                             "application/octet-stream")
        self.end_headers()
        if status != 304:
            self.wfile.write(body)
        self.wfile.flush()
        if path in state.finished:
            state.finished[path].set()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def verify_request(self, request: Any, client_address: Any) -> bool:
        state: ServerState = self.state  # type: ignore[attr-defined]
        with state.lock:
            state.connections += 1
        return True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (timeouts, kills) is part of the tests; keep it out of their output."""


class _QuietServer6(_QuietServer):
    address_family = socket.AF_INET6


class RegistryServer:
    """``with RegistryServer(site) as server:`` serves ``site`` at ``server.url`` until the block ends."""

    def __init__(self, root: Path, host: str = "127.0.0.1") -> None:
        self.state = ServerState(root)
        server_class = _QuietServer6 if ":" in host else _QuietServer
        self.httpd = server_class((host, 0), _Handler)
        self.httpd.state = self.state  # type: ignore[attr-defined]
        self.port = self.httpd.server_address[1]
        self.url = f"http://{'[' + host + ']' if ':' in host else host}:{self.port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> RegistryServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.state.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# -- hostile archives -------------------------------------------------------------------------------------------

def zeros_bomb(size: int = 1 << 30, declared: int | None = None) -> bytes:
    """A zip with one entry of ``size`` zero bytes, deflated, built from one repeated block so it takes
    about a second and a megabyte, not a gigabyte. ``declared`` makes the headers lie about the size."""
    chunk = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    count = size // len(chunk)
    data = block * count + zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # a final empty block ends the stream
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    return _zip_raw([("SKILL.md", data, crc, declared if declared is not None else size)])


def _zip_raw(entries: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip from already-deflated entries: (name, deflated bytes, crc32, uncompressed size)."""
    out, central = bytearray(), bytearray()
    for name, data, crc, size in entries:
        encoded = name.encode("utf-8")
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x800, 8, 0, 0x21, crc, len(data), size,
                           len(encoded), 0) + encoded + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x314, 20, 0x800, 8, 0, 0x21, crc, len(data), size,
                               len(encoded), 0, 0, 0, 0, 0o100644 << 16, offset) + encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(out), 0)
    return bytes(out + central + end)


def run_skillreg(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.Popen:
    command = [str(SKILLREG)] if SKILLREG.exists() else [sys.executable, "-m", "builder.cli.app"]
    return subprocess.Popen(command + args, cwd=cwd, env=os.environ.copy(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)


def tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``folder`` with its bytes and permission bits: 'byte-identical' made checkable."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def source_files(site: Path, name: str) -> dict[str, tuple[bytes, int]]:
    """What an install must produce: the published raw files, scripts 0755 and everything else 0644."""
    detail = json.loads((site / f"api/v1/skills/{name}.json").read_text())
    return {f["path"]: ((site / f["raw"]).read_bytes(), 0o755 if f["executable"] else 0o644)
            for f in detail["files"]}


_SITES: dict[str, Path] = {}


def sites(factory: Any) -> tuple[Path, Path]:
    """(version 1, version 2) of the bundled registry, built once per test session; v2 changes csv-profiler."""
    if not _SITES:
        base = factory.mktemp("client-registry")
        registry = copy_registry(base / "registry")
        _SITES["v1"] = build_site(registry, base / "site-v1")
        edit_csv_profiler(registry)
        _SITES["v2"] = build_site(registry, base / "site-v2")
    return _SITES["v1"], _SITES["v2"]


def run(*args: str) -> Result:
    """``skillreg ARGS`` in process; an unexpected exception fails the test with its traceback."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


async def mcp_session(url: str, project: Path,
                      calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[Any]]:
    """``skillreg mcp --registry URL`` driven by the MCP SDK's stdio client: the tool names, then each call's result."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = str(SKILLREG) if SKILLREG.exists() else "skillreg"
    params = StdioServerParameters(command=command, args=["mcp", "--registry", url], env=dict(os.environ),
                                   cwd=project)
    with open(project.parent / "mcp-stderr.txt", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def old_builder(tmp_path: Path, commit: str) -> Path:
    """The builder package as it was at ``commit``, out of this repository's history: a client already released.
    A shallow clone lacks it: the test skips, except in CI, which must fetch the whole history."""
    found = subprocess.run(["git", "-C", str(REPO), "archive", commit, "builder"], capture_output=True)
    if found.returncode != 0:
        missing(f"commit {commit[:12]} is not in this checkout; CI must fetch the whole history",
                f"commit {commit[:12]} is not in this checkout (a shallow clone)")
    folder = tmp_path / "old-client"
    with tarfile.open(fileobj=BytesIO(found.stdout)) as archive:
        archive.extractall(folder, filter="data")
    return folder
