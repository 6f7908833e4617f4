"""Kept-alive connections against a real server on 127.0.0.1 serving a real build: requests to one registry share
connections, a reused connection is still held to its request's deadline, one the server closed while it sat idle
is replaced by a fresh one once, a connection whose answer was not read to its end is never reused, and
redirects keep their rules."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from helpers.client import Fault, RegistryServer, _Handler

from builder.client.registry import Registry
from builder.client.transport import NotFound, Unreachable
from builder.client.trust import _remember_unsigned, store_folder
from builder.core.errors import ClientError
from builder.core.search import SEARCH_INDEX_PATH, rank

INDEX = "api/v1/index.json"
DETAIL = "api/v1/skills/log-summarizer.json"
VERSIONS = "api/v1/skills/log-summarizer/versions.json"


class _ConnectionLog(_Handler):
    """The test server's handler, also noting which connection each request came on; it can close a connection
    after answering without saying so (``drop_after``), or hang up on a request without answering (``hang_up``)."""

    def setup(self) -> None:
        super().setup()
        with self.server.lock:  # type: ignore[attr-defined]
            self.number = len(self.server.connections)  # type: ignore[attr-defined]
            self.server.connections.append([])  # type: ignore[attr-defined]

    def do_GET(self) -> None:  # noqa: N802
        server: Any = self.server
        path = unquote(urlsplit(self.path).path).lstrip("/")
        with server.lock:
            server.connections[self.number].append(path)
            hang_up = path in server.hang_up
            server.hang_up.discard(path)
        if hang_up:
            self.close_connection = True
            return
        super().do_GET()
        if path in server.drop_after:
            self.close_connection = True  # no "Connection: close" was sent: the client believes it kept alive


@pytest.fixture
def server(site: Path) -> Iterator[RegistryServer]:
    with RegistryServer(site) as running:
        running.httpd.RequestHandlerClass = _ConnectionLog
        running.httpd.connections = []  # type: ignore[attr-defined]
        running.httpd.lock = threading.Lock()  # type: ignore[attr-defined]
        running.httpd.drop_after = set()  # type: ignore[attr-defined]
        running.httpd.hang_up = set()  # type: ignore[attr-defined]
        # These tests follow each request over the connections; the client's hourly probe for signed metadata
        # (tests/signing/test_trust.py) would be one more, so the registry is one it already knows to be unsigned.
        _remember_unsigned(store_folder(Registry(running.url).url))
        yield running


def connections(server: RegistryServer) -> list[list[str]]:
    """The paths asked for on each connection, in the order the connections were opened."""
    with server.httpd.lock:  # type: ignore[attr-defined]
        return [list(paths) for paths in server.httpd.connections]  # type: ignore[attr-defined]


def test_requests_to_one_registry_share_one_kept_alive_connection(server: RegistryServer, site: Path,
                                                                  project: Path) -> None:
    registry = Registry(server.url)
    for path in (INDEX, DETAIL, VERSIONS):
        assert registry.document(path) == json.loads((site / path).read_bytes())
    assert connections(server) == [[INDEX, DETAIL, VERSIONS]]
    registry.document(INDEX)  # answered 304, and still on the same connection
    assert connections(server) == [[INDEX, DETAIL, VERSIONS, INDEX]]
    assert server.state.paths()[-1] == (INDEX, 304)


def test_a_search_fetches_its_files_side_by_side_over_few_connections(server: RegistryServer, site: Path,
                                                                      project: Path) -> None:
    index = json.loads((site / SEARCH_INDEX_PATH).read_text(encoding="utf-8"))
    registry = Registry(server.url)
    search = registry.search()
    for query in ("c", "data", "re vi", "log summ", "json"):
        assert [(h.name, h.score) for h in search.rank(query)] == [(h.name, h.score) for h in rank(index, query)]
    asked = [path for paths in connections(server) for path in paths]
    assert len(asked) == registry.requests > 10
    assert len(connections(server)) <= 6 < len(asked)  # at most one connection per fetching thread


def test_a_connection_the_server_closed_while_idle_is_replaced_once(server: RegistryServer, site: Path,
                                                                    project: Path) -> None:
    server.httpd.drop_after.add(INDEX)  # type: ignore[attr-defined]
    registry = Registry(server.url, backoff=30)  # a retry of the registry's own would take 30 s
    started = time.monotonic()
    registry.document(INDEX)
    assert registry.document(DETAIL) == json.loads((site / DETAIL).read_bytes())
    assert time.monotonic() - started < 10
    # The request sent on the closed connection got no answer; it went again on a new one, counted once.
    assert registry.requests == 2 and not registry.warnings
    assert [paths for paths in connections(server) if paths] == [[INDEX], [DETAIL]]


def test_a_server_closing_every_connection_after_one_answer_is_still_read(server: RegistryServer, site: Path,
                                                                           project: Path) -> None:
    server.httpd.drop_after.update({INDEX, DETAIL, VERSIONS})  # type: ignore[attr-defined]
    registry = Registry(server.url, backoff=30)
    for path in (INDEX, DETAIL, VERSIONS):
        assert registry.document(path) == json.loads((site / path).read_bytes())
    assert registry.requests == 3
    assert [paths for paths in connections(server) if paths] == [[INDEX], [DETAIL], [VERSIONS]]


def test_the_fresh_connection_is_tried_once_then_the_registry_retries_as_before(server: RegistryServer,
                                                                                 site: Path, project: Path) -> None:
    """The kept-alive connection is dead and the fresh one is hung up on too: that failure is the request's
    own (one retry of the transport, not a loop), and the registry's usual retry after a pause gets the answer."""
    server.httpd.drop_after.add(INDEX)  # type: ignore[attr-defined]
    server.httpd.hang_up.add(DETAIL)  # type: ignore[attr-defined]
    registry = Registry(server.url, backoff=0.01)
    registry.document(INDEX)
    assert registry.document(DETAIL) == json.loads((site / DETAIL).read_bytes())
    assert registry.requests == 3
    assert [paths for paths in connections(server) if paths] == [[INDEX], [DETAIL], [DETAIL]]


def test_a_reused_connection_stalling_mid_body_is_given_up_at_the_deadline(server: RegistryServer,
                                                                          project: Path) -> None:
    # 3 s, not 1: on a loaded machine the answer's head could come after a 1 s deadline, which the client takes
    # for no answer and tries again; the second try is not stalled, and nothing is raised (seen once in CI).
    registry = Registry(server.url, timeout=3)
    registry.document(INDEX)
    server.state.fault(DETAIL, Fault(stall_at=0.5))
    started = time.monotonic()
    with pytest.raises(Unreachable) as failure:
        registry.document(DETAIL)
    assert time.monotonic() - started < 15
    assert str(failure.value).startswith(f"cannot fetch {server.url}{DETAIL}: ")
    assert str(failure.value).endswith("bytes arrived within the 3 s a request may take (SKILLREG_TIMEOUT); "
                                       "giving up")
    assert connections(server) == [[INDEX, DETAIL]]  # the stall came on the kept-alive connection
    registry.document(VERSIONS)  # the stalled connection is not reused: a new one answers
    assert connections(server) == [[INDEX, DETAIL], [VERSIONS]]


def test_a_reused_connection_whose_answer_never_starts_is_given_up_at_the_deadline(server: RegistryServer,
                                                                                  project: Path) -> None:
    registry = Registry(server.url, timeout=1, attempts=1)
    registry.document(INDEX)
    server.state.fault(DETAIL, Fault(delay=5))
    started = time.monotonic()
    with pytest.raises(Unreachable) as failure:
        registry.document(DETAIL)
    assert time.monotonic() - started < 4
    assert str(failure.value) == f"cannot fetch {server.url}{DETAIL}: no answer within 1 s (tried 1 times)"
    assert connections(server) == [[INDEX, DETAIL]]  # not sent again on a fresh connection


def test_a_connection_whose_answer_was_not_read_whole_is_not_reused(server: RegistryServer, site: Path,
                                                                    project: Path) -> None:
    """A 404's body is left unread: reusing its connection would read that body as the next answer."""
    registry = Registry(server.url)
    registry.document(INDEX)
    with pytest.raises(NotFound):
        registry.document("api/v1/skills/no-such-skill.json")
    assert registry.document(DETAIL) == json.loads((site / DETAIL).read_bytes())
    assert connections(server) == [[INDEX, "api/v1/skills/no-such-skill.json"], [DETAIL]]


def test_a_redirect_is_followed_on_the_kept_alive_connection_and_keeps_its_rules(server: RegistryServer,
                                                                                site: Path, project: Path) -> None:
    registry = Registry(server.url)
    registry.document(INDEX)
    server.state.fault(DETAIL, Fault(status=302, location=f"{server.url}{VERSIONS}"))
    assert registry.document(DETAIL) == json.loads((site / VERSIONS).read_bytes())
    assert connections(server) == [[INDEX, DETAIL, VERSIONS]]
    location = "http://example.invalid/api/v1/skills/log-summarizer.json"
    server.state.fault(DETAIL, Fault(status=301, location=location))
    with pytest.raises(ClientError) as refused:
        registry.document(DETAIL)
    assert str(refused.value) == f"{server.url}{DETAIL} redirects to {location}; refusing to follow it off https://"
    assert connections(server) == [[INDEX, DETAIL, VERSIONS, DETAIL]]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_forked_child_never_shares_the_parents_kept_alive_connection(server: RegistryServer, site: Path,
                                                                       project: Path) -> None:
    registry = Registry(server.url)
    registry.document(INDEX)
    child = os.fork()
    if child == 0:  # the child: its request must go on a connection of its own, under a working deadline
        code = 1
        try:
            code = 0 if registry.document(DETAIL) == json.loads((site / DETAIL).read_bytes()) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert registry.document(VERSIONS) == json.loads((site / VERSIONS).read_bytes())
    assert connections(server) == [[INDEX, VERSIONS], [DETAIL]]
