"""A hostile registry's transport against the client, on real servers on 127.0.0.1: a server that drips its answer,
redirects to places the client must not go, and JSON documents shaped to exhaust memory or the stack."""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from pathlib import Path

import anyio
import pytest
from click.testing import Result
from helpers.client import Fault, RegistryServer, run, run_skillreg, search_overrides

from builder.client import reach
from builder.client.documents import MAX_INDEX_VALUES, MAX_JSON_CONTAINERS, json_shape_problem
from builder.client.reach import Reach
from builder.client.registry import Registry
from builder.client.transport import Unreachable
from builder.core.errors import ClientError

DETAIL = "api/v1/skills/log-summarizer.json"
VERSIONS = "api/v1/skills/log-summarizer/versions.json"  # what an install reads first
INDEX = "api/v1/index.json"
SEARCH = "api/v1/search/index.json"  # the first file a search fetches: the sharded index's manifest
WHOLE = "api/v1/search-index.json"  # the whole index, read when a registry has no sharded one


def failed(result: Result, message: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr, result.stderr


# -- a whole-request deadline ------------------------------------------------------------------------------------

def test_a_server_dripping_its_body_is_given_up_at_the_deadline(site: Path, project: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that sends Content-Length, then one byte a second, against SKILLREG_TIMEOUT=2."""
    monkeypatch.setenv("SKILLREG_TIMEOUT", "2")
    with RegistryServer(site) as server:
        server.state.overrides[VERSIONS] = b" " * 400
        server.state.fault(VERSIONS, Fault(drip=1.0))
        started = time.monotonic()
        process = run_skillreg(["install", "log-summarizer", "--registry", server.url], project)
        out, err = process.communicate(timeout=60)
        took = time.monotonic() - started
    assert process.returncode == 1, (out, err)
    assert took < 10, took
    assert err.startswith(f"Error: cannot fetch {server.url}{VERSIONS}: ") and "Traceback" not in err
    assert "bytes arrived within the 2 s a request may take (SKILLREG_TIMEOUT); giving up" in err
    assert [p for p, _ in server.state.paths()] == [VERSIONS]  # answered, so not retried
    assert not (project / ".claude").exists() and not (project / "skills-lock.json").exists()


def test_a_server_dripping_its_headers_is_given_up_at_the_deadline(site: Path, project: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLREG_TIMEOUT", "1")
    with RegistryServer(site) as server:
        server.state.fault(VERSIONS, *[Fault(drip=0.2, drip_headers=True)] * 3)
        started = time.monotonic()
        result = run("install", "log-summarizer", "--registry", server.url)
        took = time.monotonic() - started
    failed(result, f"cannot fetch {server.url}{VERSIONS}: no answer within 1 s (tried 3 times)")
    assert took < 10, took


def test_the_mcp_server_gives_up_at_the_deadline_too(site: Path, project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers.client import mcp_session

    monkeypatch.setenv("SKILLREG_TIMEOUT", "2")
    bundle = json.loads((site / DETAIL).read_text())["bundles"]["zip"]["path"]
    with RegistryServer(site) as server:
        server.state.fault(bundle, Fault(drip=1.0))
        started = time.monotonic()
        _, (result,) = anyio.run(mcp_session, server.url, project, [("get_skill", {"id": "log-summarizer"})])
        took = time.monotonic() - started
    assert result.is_error
    assert f"cannot fetch {server.url}{bundle}: " in result.content[0].text
    assert "a request may take (SKILLREG_TIMEOUT)" in result.content[0].text
    assert took < 15, took  # the MCP server's start-up included


# -- redirects ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("registry, target, problem", [
    ("https://skills.example.com/", "https://mirror.example.org/x.json", None),
    ("https://skills.example.com/", "http://mirror.example.org/x.json", "off https://"),
    ("https://skills.example.com/", "http://127.0.0.1:8080/internal/admin?action=purge", "off https://"),
    ("https://skills.example.com/", "https://127.0.0.1:8443/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://localhost/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://[::1]/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://127.0.0.2/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://[::ffff:127.0.0.1]/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://127.1/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://2130706433/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://0x7f000001/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://0.0.0.0/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://[2002:7f00:1::]/admin", "on this machine; a registry on"),
    ("https://skills.example.com/", "https://10.0.0.5/admin", "on a local network; a registry on"),
    ("https://skills.example.com/", "https://169.254.169.254/latest/meta-data", "on a local network"),
    ("https://skills.example.com/", "https://100.64.0.1/", "on a local network"),
    ("https://skills.example.com/", "https://[64:ff9b::a9fe:a9fe]/", "on a local network"),
    ("https://skills.example.com/", "https://[fec0::1]/", "on a local network"),
    ("https://skills.example.com/", "https://[ff02::1]/", "on a local network"),
    ("https://10.0.0.4/", "https://10.0.0.5/skills/x.json", None),
    ("https://10.0.0.4/", "https://127.0.0.1/x.json", "on this machine; a registry on 10.0.0.4 may not send"),
    ("http://127.0.0.1:8000/", "http://localhost:8000/x.json", None),
    ("http://127.0.0.1:8000/", "http://[::1]:8000/x.json", None),
    ("http://127.0.0.1:8000/", "http://127.0.0.2:8000/x.json", None),
    ("http://127.0.0.1:8000/", "https://mirror.example.org/x.json", None),
    ("http://127.0.0.1:8000/", "http://mirror.example.org/x.json", "off https://"),
    ("http://127.0.0.1:8000/", "file:///etc/passwd", "only https:// redirects are followed"),
    ("http://127.0.0.1:8000/", "ftp://127.0.0.1/x.json", "only https:// redirects are followed"),
])
def test_which_redirects_are_followed(registry: str, target: str, problem: str | None) -> None:
    found = Reach(registry).redirect_problem(registry + "api/v1/index.json", target)
    assert found is None if problem is None else (found is not None and problem in found), found


def test_an_https_hop_never_goes_back_to_http_even_on_loopback() -> None:
    assert "off https://" in str(Reach("http://127.0.0.1:8000/").redirect_problem("https://localhost:8443/x.json",
                                                                                  "http://127.0.0.1:8000/x.json"))


@pytest.mark.parametrize("registry, host, address, allowed", [
    ("https://skills.example.com/", "skills.example.com", "127.0.0.1", True),  # the registry the user named
    ("https://skills.example.com/", "mirror.example.org", "127.0.0.1", False),  # a name that resolves home
    ("https://skills.example.com/", "mirror.example.org", "::1", False),
    ("https://skills.example.com/", "mirror.example.org", "::ffff:10.0.0.1", False),
    ("https://skills.example.com/", "mirror.example.org", "192.168.1.10", False),
    ("https://skills.example.com/", "mirror.example.org", "93.184.216.34", True),
    ("http://127.0.0.1:8000/", "localhost", "127.0.0.1", True),
])
def test_where_a_redirected_host_may_resolve_to(registry: str, host: str, address: str, allowed: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Judged by what the name resolves to (the transport's resolver, given a made-up answer here)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    monkeypatch.setattr(reach, "resolve_host", lambda name, port: [(family, (address, port))])
    url = f"https://{host}/x.json"
    try:
        Reach(registry).addresses(url, host, 443, plain_http=False)
    except ClientError as exc:
        assert not allowed
        assert str(exc).startswith(f"{url}: {host} resolves to {ipaddress.ip_address(address)}")
    else:
        assert allowed


def test_every_address_of_a_name_is_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A public address first does not let a loopback one later in the same answer through."""
    monkeypatch.setattr(reach, "resolve_host", lambda name, port: [(socket.AF_INET, ("93.184.216.34", port)),
                                                                   (socket.AF_INET, ("127.0.0.1", port))])
    with pytest.raises(ClientError, match="mirror.example.org resolves to 127.0.0.1, on this machine"):
        Reach("https://skills.example.com/").addresses("https://mirror.example.org/x", "mirror.example.org", 443,
                                                       plain_http=False)


def answer(monkeypatch: pytest.MonkeyPatch, answers: dict[str, str]) -> list[str]:
    """The transport's resolver answers ``answers[name]`` for each made-up name; returns the names asked, in order."""
    real, asked = reach.resolve_host, []

    def resolve(host: str, port: int) -> reach.Resolved:
        if host not in answers:
            return real(host, port)
        asked.append(host)
        address = answers[host]
        return [(socket.AF_INET6 if ":" in address else socket.AF_INET, (address, port))]

    monkeypatch.setattr(reach, "resolve_host", resolve)
    return asked


def test_a_connection_goes_to_the_address_judged(site: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The name is resolved once, by the transport, and the socket connects to that answer: the system resolver
    does not know registry.localhost here, so the search can only work through the address that was judged."""
    asked = answer(monkeypatch, {"registry.localhost": "127.0.0.1"})
    with RegistryServer(site) as server:
        result = run("search", "log", "--registry", f"http://registry.localhost:{server.port}/")
    assert result.exit_code == 0, result.output
    assert "log-summarizer" in result.stdout
    assert asked and len(asked) == server.state.connections


def test_plain_http_to_a_name_off_this_machine_is_refused_before_connecting(site: Path, project: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    answer(monkeypatch, {"registry.localhost": "93.184.216.34"})
    with RegistryServer(site) as server:
        url = f"http://registry.localhost:{server.port}/"
        failed(run("search", "log", "--registry", url),
               f"Error: {url}{SEARCH}: registry.localhost resolves to 93.184.216.34, not this machine; plain http:// "
               "is allowed only to this machine\n")
        assert server.state.connections == 0


def test_each_redirect_hop_is_judged_by_the_address_it_resolves_to(site: Path, project: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    answer(monkeypatch, {"mirror.localhost": "192.168.7.7"})
    with RegistryServer(site) as server:
        target = f"http://mirror.localhost:{server.port}/{SEARCH}"
        server.state.fault(SEARCH, Fault(status=302, location=target))
        failed(run("search", "log", "--registry", server.url),
               f"Error: {target}: mirror.localhost resolves to 192.168.7.7, not this machine; plain http:// is allowed "
               "only to this machine\n")
        assert server.state.paths() == [(SEARCH, 302)] and server.state.connections == 1


@pytest.mark.parametrize("target", ["https://127.1/x.json", "https://10.0.0.5/x.json", "https://[::ffff:7f00:1]/x"])
def test_a_lock_registry_is_never_redirected_off_public_addresses(target: str) -> None:
    found = Reach("https://skills.example.com/", public_only=True).redirect_problem(
        "https://skills.example.com/api/v1/index.json", target)
    assert found is not None and found.startswith(f"https://skills.example.com/api/v1/index.json redirects to {target}, ")
    assert found.endswith("a registry from a lock file is used only when it is public. To use it, name it: "
                          "--registry https://skills.example.com/")


def test_a_lock_registry_whose_own_name_resolves_home_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even its own host: the user did not name it."""
    answer(monkeypatch, {"skills.example.com": "127.0.0.1"})
    with pytest.raises(ClientError, match=r"^https://skills.example.com/x: skills.example.com resolves to 127.0.0.1, "
                                          "on this machine; a registry from a lock file"):
        Reach("https://skills.example.com/", public_only=True).addresses(
            "https://skills.example.com/x", "skills.example.com", 443, plain_http=False)


def test_through_a_proxy_the_host_asked_for_is_judged_and_the_proxy_is_the_users(
        site: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTPS_PROXY is the user's setting, so the proxy may be on this machine; the host it is asked to reach is
    judged by what it resolves to here: a lock's registry resolving home never reaches the proxy either."""
    answer(monkeypatch, {"skills.example.com": "127.0.0.1", "mirror.example.com": "93.184.216.34"})
    with RegistryServer(site) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with pytest.raises(ClientError, match="skills.example.com resolves to 127.0.0.1, on this machine; a registry "
                                              "from a lock file is used only when it is public"):
            Registry("https://skills.example.com/", public_only=True, attempts=1).index()
        assert proxy.state.connections == 0
        with pytest.raises(Unreachable, match="Tunnel connection failed: 501"):  # this test server cannot CONNECT
            Registry("https://mirror.example.com/", public_only=True, attempts=1).index()
        assert proxy.state.connections == 1


@pytest.mark.parametrize("alias", ["localhost", "127.0.0.2", "[::1]"])
def test_a_loopback_registry_may_redirect_to_another_loopback_name(alias: str, site: Path, project: Path) -> None:
    host = alias.strip("[]")
    with RegistryServer(site) as server, RegistryServer(site, host=host) as mirror:
        server.state.fault(SEARCH, Fault(status=302, location=f"http://{alias}:{mirror.port}/{SEARCH}"))
        result = run("search", "log", "--registry", server.url)
        assert result.exit_code == 0, result.output
        assert "log-summarizer" in result.stdout
        # The manifest comes from the mirror; the files it names are fetched from the registry's own URL.
        assert server.state.paths()[0] == (SEARCH, 302) and mirror.state.paths() == [(SEARCH, 200)]


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://127.0.0.1/api/v1/search/index.json",
                                      "http://example.invalid/api/v1/search/index.json"])
def test_a_redirect_to_another_scheme_or_off_this_machine_is_refused(location: str, site: Path,
                                                                     project: Path) -> None:
    with RegistryServer(site) as server:
        server.state.fault(SEARCH, Fault(status=302, location=location))
        failed(run("search", "log", "--registry", server.url), f"{server.url}{SEARCH} redirects to {location}; ")
        assert server.state.paths() == [(SEARCH, 302)]


def test_plain_http_registries_on_loopback_aliases_are_accepted(site: Path, project: Path) -> None:
    with RegistryServer(site, host="127.0.0.2") as server:
        assert run("search", "log", "--registry", server.url).exit_code == 0
    with RegistryServer(site, host="::1") as server:
        assert run("search", "log", "--registry", server.url).exit_code == 0
    refused = run("search", "log", "--registry", "http://10.0.0.1/")
    assert refused.exit_code == 2 and "plain http:// is allowed only for 127.0.0.1 and localhost" in refused.stderr


# -- hostile JSON ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    (b'{"skills": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", "it nests JSON objects and arrays 200,001 deep; "
                                                              "the limit is 64; refusing it"),
    (b'{"skills": [' + b"{}," * 3_000_000 + b"{}]}", f"it holds more than {MAX_JSON_CONTAINERS:,} JSON objects"),
    (b'{"skills": [' + b"[[[[[1]]]]]," * 10 + b"[]]}", "row 1 is not [name, description, category, tags, "
                                                          "headings]; refusing the index"),
    (b'{"skills": [' + b"[" * 10 + b"}", "is not valid JSON"),
])
def test_a_hostile_index_is_refused_before_it_is_parsed(body: bytes, message: str, site: Path,
                                                        project: Path) -> None:
    with RegistryServer(site) as server:
        server.state.fault(SEARCH, *[Fault(status=404)] * 2)  # a registry published before the sharded index
        server.state.overrides[WHOLE] = body
        failed(run("search", "log", "--registry", server.url), f"{server.url}{WHOLE}")
        failed(run("search", "log", "--registry", server.url), message)


def test_brackets_inside_strings_do_not_count(site: Path, project: Path) -> None:
    def edit(rows: list) -> None:
        row = next(r for r in rows if r[0] == "log-summarizer")
        row[1] = "[{" * 500 + row[1] + '\\"]' * 500

    with RegistryServer(site) as server:
        server.state.overrides.update(search_overrides(site, edit))
        result = run("search", "log", "--registry", server.url)
    assert result.exit_code == 0, result.output
    assert "log-summarizer" in result.stdout


def test_a_detail_document_past_its_cap_is_refused_from_its_length(site: Path, project: Path) -> None:
    with RegistryServer(site) as server:
        server.state.overrides[DETAIL] = b" " * (17 * 1024 * 1024)
        failed(run("info", "log-summarizer", "--registry", server.url),
               f"{server.url}{DETAIL}: the response is 17,825,792 bytes, larger than the 16,777,216 expected")


def test_a_deeply_nested_lock_file_is_a_message(project: Path) -> None:
    (project / "skills-lock.json").write_text('{"skills": ' + "[" * 50_000 + "]" * 50_000 + "}")
    failed(run("list"), "skills-lock.json: it nests JSON objects and arrays 50,001 deep")


def test_an_index_of_sixty_thousand_skills_is_accepted(site: Path, project: Path) -> None:
    """The caps leave room for a real registry at scale: 60,000 skills with long descriptions and the most tags
    validation allows by default, with its values at most half the cap."""
    real = json.loads((site / INDEX).read_text())
    template = real["skills"][0]
    skills = [{**template, "name": f"skill-{i:05d}", "description": "d" * 1000,
               "tags": [f"tag-{j}" for j in range(10)]} for i in range(60_000)]
    data = json.dumps({**real, "skills": skills}, sort_keys=True).encode()
    assert len(data) > 60_000 * 1000
    assert json_shape_problem(data, max_values=MAX_INDEX_VALUES // 2) is None
    with RegistryServer(site) as server:
        server.state.overrides[INDEX] = data
        assert len(Registry(server.url).index()["skills"]) == 60_000


def test_https_goes_through_the_same_guarded_transport(site: Path, project: Path) -> None:
    """No https server can be trusted here; a plain-HTTP server on an https:// URL shows the https path is taken
    and ends in one message naming the URL."""
    with RegistryServer(site) as server:
        url = f"https://127.0.0.1:{server.port}/"
        result = run("search", "log", "--registry", url)
    failed(result, f"cannot fetch {url}{SEARCH}: ")
    assert "(tried 3 times)" in result.stderr
