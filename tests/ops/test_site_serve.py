"""``skillreg serve``: builds, serves on 127.0.0.1, rebuilds when a skill changes, keeps serving after a failure."""

from __future__ import annotations

import html
import http.client
import json
import queue
import re
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.active import NAME, active_registry
from helpers.build import all_files

from builder.cli.app import cli
from builder.core.config import load_config
from builder.ops.serve import ServeEvent, serve, snapshot
from builder.publish.build import build

REGISTRY = """\
title: Serve test
categories:
  - slug: data
    title: Data
"""


def skill_md(description: str, name: str = "demo") -> str:
    return (f"---\nname: {name}\ndescription: {description}\nlicense: MIT\nmetadata:\n  category: data\n"
            f"  tags: demo\n---\n# Demo\n\nRead the data.\n")


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode("utf-8")


def next_event(events: queue.Queue[ServeEvent], kind: str, timeout: float = 60) -> ServeEvent:
    deadline = time.monotonic() + timeout
    while True:
        event = events.get(timeout=max(0.1, deadline - time.monotonic()))
        if event.kind == kind:
            return event


def test_serve_builds_serves_and_rebuilds_on_change_then_stops(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "registry", {
        "registry.yaml": REGISTRY,
        "skills/demo/SKILL.md": skill_md("Profiles demo data files when asked what a data file holds."),
    })
    events: queue.Queue[ServeEvent] = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(target=serve, args=(load_config(root / "registry.yaml"), root / "site"),
                              kwargs={"port": 0, "interval": 0.2, "on_event": events.put, "stop": stop})
    thread.start()
    try:
        assert next_event(events, "built").result.published == ("demo",)
        url = next_event(events, "serving").url
        assert url.startswith("http://127.0.0.1:")
        assert "Profiles demo data files" in fetch(url + "skills/demo/")

        (root / "skills/demo/SKILL.md").write_text(skill_md("Summarises demo logs when asked about errors."))
        rebuilt = next_event(events, "built")
        assert rebuilt.changed == (str(root / "skills/demo/SKILL.md"),)
        assert "Summarises demo logs" in fetch(url + "skills/demo/")

        (root / "skills/demo/SKILL.md").write_text(skill_md("Broken: the name is wrong.", name="Other"))
        failed = next_event(events, "failed")
        assert "the build stopped" in str(failed.error)
        assert "Summarises demo logs" in fetch(url + "skills/demo/")  # the previous build is still served
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    with pytest.raises(urllib.error.URLError):
        fetch(url)


def test_snapshot_sees_edits_additions_and_removals_but_not_hidden_files(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a/SKILL.md": "x", ".git/HEAD": "ref", "a/.DS_Store": "x"})
    before = snapshot([tmp_path])
    assert list(before) == [str(tmp_path / "a/SKILL.md")]
    (tmp_path / "a/new.md").write_text("y")
    assert snapshot([tmp_path]) != before


def test_serve_is_a_documented_command() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0
    assert "--port" in result.output and "rebuild" in result.output


@pytest.mark.parametrize("listening", [True, False])
def test_serve_on_a_busy_port_fails_at_once_before_building(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             listening: bool) -> None:
    write_tree(tmp_path, {"registry.yaml": REGISTRY, "skills/demo/SKILL.md": skill_md("Reads the data.")})
    monkeypatch.chdir(tmp_path)
    with socket.socket() as busy:  # bound (and, in one variant, listening): either way the port is taken
        busy.bind(("127.0.0.1", 0))
        if listening:
            busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--port", str(port), "--out", "out"])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", (
        f"Error: port {port} on 127.0.0.1 is in use; pick another with --port N, or --port 0 for any free port\n"))
    assert not (tmp_path / "out").exists()  # nothing was built


@contextmanager
def serving(root: Path, host: str = "127.0.0.1") -> Iterator[tuple[str, int]]:
    """``serve`` of the registry at ``root`` on ``host`` (a free port) in a thread: yields (host, port)."""
    events: queue.Queue[ServeEvent] = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(target=serve, args=(load_config(root / "registry.yaml"), root / "site"),
                              kwargs={"port": 0, "host": host, "interval": 0.2, "on_event": events.put,
                                      "stop": stop})
    thread.start()
    try:
        url = next_event(events, "serving").url
        yield host, int(url.rstrip("/").rpartition(":")[2])
    finally:
        stop.set()
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    root = write_tree(tmp_path_factory.mktemp("serve-hosts") / "registry", {
        "registry.yaml": REGISTRY, "skills/demo/SKILL.md": skill_md("Profiles demo data files when asked.")})
    with serving(root) as address:
        yield address


def ask(address: tuple[str, int], host: str | None, *, method: str = "GET", path: str = "/skills/demo/",
        version: str = "HTTP/1.1", extra: tuple[tuple[str, str], ...] = ()) -> tuple[int, bytes]:
    """One raw request with exactly the Host header given (None: no Host at all); (status, body)."""
    connection = http.client.HTTPConnection(*address, timeout=10)
    connection._http_vsn_str = version  # http.client's own switch for the request line's version
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            connection.putheader("Host", host)
        for name, value in extra:
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "127.0.0.1:{port}", "localhost:{port}",
                                  "[::1]:{port}", "LocalHost:{port}"])
def test_serve_answers_a_host_header_naming_the_loopback_with_or_without_its_port(
        local_server: tuple[str, int], host: str) -> None:
    status, body = ask(local_server, host.format(port=local_server[1]))
    assert status == 200
    assert b"Profiles demo data files" in body


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example",
                                  "127.0.0.1.evil.example:{port}", "localhost.evil.example", "127.0.0.2:{port}",
                                  "127.0.0.1:{other}", "localhost:{port}@evil.example", "", "0.0.0.0:{port}"])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_serve_refuses_a_forged_host_header_with_421_and_a_short_body(
        local_server: tuple[str, int], host: str, method: str) -> None:
    port = local_server[1]
    status, body = ask(local_server, host.format(port=port, other=port + 1 if port < 65535 else port - 1),
                       method=method)
    assert status == 421
    expected = b"" if method == "HEAD" else (b"421 Misdirected Request: this server answers only requests for "
                                             b"127.0.0.1, localhost, [::1] (Host header).\n")
    assert body == expected
    assert b"evil" not in body and b"Profiles demo" not in body


def test_serve_refuses_a_missing_page_for_a_forged_host_rather_than_showing_its_404(
        local_server: tuple[str, int]) -> None:
    assert ask(local_server, "localhost", path="/no-such-page/")[0] == 404
    assert ask(local_server, "evil.example", path="/no-such-page/")[0] == 421


@pytest.mark.parametrize(("version", "status"), [("HTTP/1.0", 421), ("HTTP/1.1", 400)])
def test_serve_refuses_a_request_without_a_host_header(local_server: tuple[str, int], version: str,
                                                       status: int) -> None:
    """HTTP/1.0 may omit Host, but no browser does, so a request that names no host is not answered: 421. An
    HTTP/1.1 request without Host is malformed (RFC 9112): 400. Either way no file of the site is sent."""
    assert ask(local_server, "127.0.0.1", version=version)[0] == 200
    answer, body = ask(local_server, None, version=version)
    assert answer == status
    assert b"Profiles demo" not in body and b"Host header" in body


def test_serve_refuses_a_second_host_header_and_an_absolute_target_naming_another_host(
        local_server: tuple[str, int]) -> None:
    assert ask(local_server, "127.0.0.1", extra=(("Host", "evil.example"),))[0] == 400
    assert ask(local_server, "127.0.0.1", path="http://evil.example/skills/demo/")[0] == 421
    # Naming this server, it passes the host check; http.server then looks up only origin-form paths.
    assert ask(local_server, "127.0.0.1", path=f"http://localhost:{local_server[1]}/skills/demo/")[0] == 404


def test_serve_bound_to_another_address_also_answers_that_address_as_host(tmp_path: Path) -> None:
    """127.0.0.2 is loopback on Linux too; a server bound to it explicitly answers Host 127.0.0.2 (and the
    loopback names) and still refuses any other name."""
    root = write_tree(tmp_path / "registry", {
        "registry.yaml": REGISTRY, "skills/demo/SKILL.md": skill_md("Profiles demo data files when asked.")})
    try:
        with socket.create_server(("127.0.0.2", 0)):
            pass
    except OSError:
        pytest.skip("127.0.0.2 cannot be bound on this machine")
    with serving(root, host="127.0.0.2") as address:
        port = address[1]
        assert ask(address, f"127.0.0.2:{port}")[0] == 200
        assert ask(address, "127.0.0.2")[0] == 200
        assert ask(address, f"localhost:{port}")[0] == 200
        assert ask(address, f"127.0.0.1.evil.example:{port}")[0] == 421
        assert ask(address, "evil.example") == (421, b"421 Misdirected Request: this server answers only requests "
                                                     b"for 127.0.0.1, localhost, [::1], 127.0.0.2 (Host header).\n")


def _commands(page: str) -> list[str]:
    """The install tabs' commands as a browser shows them."""
    return [html.unescape(re.sub(r"<[^>]+>", "", c))
            for c in re.findall(r'<code class="sr-command">(.*?)</code>', page, re.S)]


def test_served_pages_name_the_served_address_and_a_later_build_names_base_url_again(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "registry", {
        "registry.yaml": REGISTRY + "base_url: https://example.org/reg/\n",
        "skills/demo/SKILL.md": skill_md("Profiles demo data files when asked what a data file holds."),
    })
    config = load_config(root / "registry.yaml")
    published = tmp_path / "published"
    build(config, published)
    out = root / "site"
    shutil.copytree(published, out)  # serve takes over a folder `skillreg build` wrote
    events: queue.Queue[ServeEvent] = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(target=serve, args=(config, out),
                              kwargs={"port": 0, "interval": 0.2, "on_event": events.put, "stop": stop})
    thread.start()
    try:
        url = next_event(events, "serving").url
        page = fetch(url + "skills/demo/")
        skillreg, npx, curl = _commands(page)
        assert skillreg == f"skillreg install demo --registry {url}"
        assert npx == f"npx skills add {url}api/v1/skills/demo"
        zip_url = curl.splitlines()[0].removeprefix("curl -fsSL -o demo.zip ")
        assert zip_url.startswith(f"{url}api/v1/bundles/demo/demo-") and zip_url.endswith(".zip")
        with urllib.request.urlopen(zip_url, timeout=10) as response:  # the command works against this server
            assert response.read(4) == b"PK\x03\x04"
        assert "example.org" not in page
        index = json.loads(fetch(url + "api/v1/index.json"))
        assert index["registry"]["url"] == url  # a client pointed at the server installs from it
    finally:
        stop.set()
        thread.join(timeout=30)
    build(config, out)
    assert all_files(out) == all_files(published)


def test_serve_with_a_base_url_given_builds_for_that_url(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "registry", {"registry.yaml": REGISTRY,
                                              "skills/demo/SKILL.md": skill_md("Reads the data.")})
    events: queue.Queue[ServeEvent] = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(target=serve, args=(load_config(root / "registry.yaml"), root / "site"),
                              kwargs={"port": 0, "on_event": events.put, "stop": stop,
                                      "base_url": "https://example.org/reg/"})
    thread.start()
    try:
        url = next_event(events, "serving").url
        for path in ("skills/demo/", "reg/skills/demo/"):  # also under the base path, as on the host
            assert _commands(fetch(url + path))[0] == "skillreg install demo --registry https://example.org/reg/"
    finally:
        stop.set()
        thread.join(timeout=30)


def head_of(url: str) -> tuple[int, str, str]:
    """(status, Content-Type, X-Content-Type-Options) of a GET of ``url``."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.headers["X-Content-Type-Options"]
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.headers["X-Content-Type-Options"]


def test_serve_types_files_by_the_registrys_table_and_never_sends_a_skills_page_as_one(tmp_path: Path) -> None:
    """Not by the machine's tables (which call .rs XML): one table, nosniff on every answer, and a skill's own file
    of an executable type, which the build never writes raw but an older output may hold, is sent as text."""
    root = active_registry(tmp_path / "registry", REGISTRY)
    raw = f"api/v1/skills/{NAME}/files/"
    with serving(root) as (host, port):
        base = f"http://{host}:{port}/"
        for stale in ("api/v1/skills/plain/files/stale.html", ".well-known/skills/plain/stale.html"):
            (root / "site" / stale).parent.mkdir(parents=True, exist_ok=True)  # plain's raw copies: .well-known
            (root / "site" / stale).write_text("<script>window.__pwned = true</script>")
            assert head_of(base + stale) == (200, "text/plain; charset=utf-8", "nosniff")
        assert head_of(base + raw + "src/main.rs") == (200, "text/plain; charset=utf-8", "nosniff")
        assert head_of(base + raw + "references/template.html.txt") == (200, "text/plain; charset=utf-8", "nosniff")
        assert head_of(base + raw + "assets/evil.html")[::2] == (404, "nosniff")  # kept to archives
        assert head_of(base + f"skills/{NAME}/") == (200, "text/html; charset=utf-8", "nosniff")
        assert head_of(base + "api/v1/index.json") == (200, "application/json; charset=utf-8", "nosniff")
        assert head_of(base + "sitemap.xml") == (200, "application/xml; charset=utf-8", "nosniff")
        zip_path = json.loads(fetch(base + f"api/v1/skills/{NAME}.json"))["bundles"]["zip"]["path"]
        assert head_of(base + zip_path) == (200, "application/zip", "nosniff")
