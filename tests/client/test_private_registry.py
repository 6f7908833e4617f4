"""A registry that needs credentials, served on 127.0.0.1 by a real server that requires a bearer token or basic
auth: each source of credentials (SKILLREG_TOKEN, a credential helper, ~/.netrc) installs, updates, restores and
searches, from the command line and through MCP (stdio and HTTP); the credentials reach that origin only (a redirect to another port gets none) and appear in
no file the client wrote and no output; a registry that refuses, a helper that fails or hangs, are one line each."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import Result
from helpers.client import Fault, RegistryServer, mcp_session, run, source_files, tree

from builder.client.credentials import GUIDE, Credentials, origin
from builder.core.errors import UsageError

TOKEN = "s3cr3t-token-7f1d2c"
LOGIN, PASSWORD = "alice", "p4ss-9c2e81"
BEARER = f"Bearer {TOKEN}"
BASIC = "Basic " + base64.b64encode(f"{LOGIN}:{PASSWORD}".encode()).decode()
SECRETS = (TOKEN, PASSWORD, BASIC.split()[1])
SOURCES = ["env", "helper", "netrc"]
VERSIONS = "api/v1/skills/log-summarizer/versions.json"  # the first thing an install of log-summarizer reads


def give(source: str, server: RegistryServer, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Give the client credentials for ``server`` from ``source``; make the server require them. The header sent."""
    if source == "env":
        monkeypatch.setenv("SKILLREG_TOKEN", TOKEN)
        expected = BEARER
    elif source == "helper":
        helper(home, origin(server.url), f"printf '%s\\nexpires_in=60\\n' {TOKEN}")
        expected = BEARER
    else:
        netrc = home / ".netrc"
        netrc.write_text(f"machine 127.0.0.1:{server.port}\n  login {LOGIN}\n  password {PASSWORD}\n")
        netrc.chmod(0o600)
        expected = BASIC
        server.state.challenge = 'Basic realm="skills"'
    server.state.auth = expected
    return expected


def helper(home: Path, where: str, command: str) -> Path:
    config = home / ".config" / "skillreg" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[credential-helpers]\n"{where}" = "{command}"\n')
    return config


def leaked(folders: list[Path], outputs: list[str]) -> list[str]:
    """Every file below ``folders`` (but the user's own .netrc and config) and output holding a secret."""
    found = [str(path) for folder in folders for path in folder.rglob("*")
             if path.is_file() and path.name not in (".netrc", "config.toml")
             and any(secret.encode() in path.read_bytes() for secret in SECRETS)]
    return found + [text for text in outputs if any(secret in text for secret in SECRETS)]


def one_line(result: Result, *needles: str) -> str:
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    assert not leaked([], [result.output]), result.output
    return result.stderr


@pytest.mark.parametrize("source", SOURCES)
def test_each_source_of_credentials_installs_updates_restores_and_stores_them_nowhere(
        source: str, site: Path, site_v2: Path, project: Path, isolated_user_dirs: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    with RegistryServer(site) as server:
        expected = give(source, server, isolated_user_dirs, monkeypatch)
        url = server.url
        outputs = [run("install", "csv-profiler", "log-summarizer", "--registry", url),
                   run("search", "csv", "--registry", url), run("search", "csv", "--registry", url, "--json"),
                   run("info", "csv-profiler", "--registry", url, "--json")]
        shutil.rmtree(project / ".claude/skills/log-summarizer")
        outputs.append(run("install", "--registry", url))  # a restore
        server.state.root = site_v2
        outputs += [run("update", "--registry", url, "--dry-run"), run("update", "--registry", url),
                    run("verify"), run("info", "csv-profiler", "--versions", "--registry", url)]
        sent = set(server.state.authorizations)
    assert [result.exit_code for result in outputs] == [0] * len(outputs), [r.output for r in outputs]
    assert sent == {expected}  # every request carried them, and only these
    assert tree(project / ".claude/skills/csv-profiler") == source_files(site_v2, "csv-profiler")
    assert tree(project / ".claude/skills/log-summarizer") == source_files(site, "log-summarizer")
    lock = json.loads((project / "skills-lock.json").read_text())
    assert {entry["registry"] for entry in lock["skills"].values()} == {url}  # the registry, named only
    assert not leaked([project, isolated_user_dirs], [result.output for result in outputs])


@pytest.mark.parametrize("source", SOURCES)
def test_a_redirect_to_another_port_receives_no_credentials(source: str, site: Path, project: Path,
                                                           isolated_user_dirs: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with RegistryServer(site) as other, RegistryServer(site) as server:
        expected = give(source, server, isolated_user_dirs, monkeypatch)
        server.state.fault(VERSIONS, Fault(status=302, location=f"{other.url}{VERSIONS}"))
        result = run("install", "log-summarizer", "--registry", server.url)
    assert result.exit_code == 0, result.output
    assert [path for path, _ in other.state.paths()] == [VERSIONS]
    assert other.state.authorizations == [None]
    assert set(server.state.authorizations) == {expected}


@pytest.mark.parametrize("args", [("install", "log-summarizer"), ("search", "csv"), ("info", "csv-profiler"),
                                  ("search", "csv", "--json")])
def test_no_credentials_is_one_line_naming_the_guide(args: tuple[str, ...], site: Path, project: Path) -> None:
    with RegistryServer(site) as server:
        server.state.auth = BEARER
        result = run(*args, "--registry", server.url)
    one_line(result, "the registry needs credentials (HTTP 401 Unauthorized) and none are set for "
                     f"http://127.0.0.1:{server.port}; give them as {GUIDE} says")
    assert not (project / ".claude").exists() and not (project / "skills-lock.json").exists()


def test_an_expired_token_says_so_and_a_refused_one_names_its_source(site: Path, project: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLREG_TOKEN", TOKEN)
    with RegistryServer(site) as server:
        server.state.auth = "Bearer a-newer-token"
        server.state.challenge = 'Bearer realm="skills", error="invalid_token", error_description="expired"'
        expired = run("install", "log-summarizer", "--registry", server.url)
        server.state.challenge = 'Bearer realm="skills"'
        refused = run("install", "log-summarizer", "--registry", server.url)
    one_line(expired, "the registry says the token sent has expired or was revoked (HTTP 401, invalid_token; "
                      f"Authorization (redacted, from SKILLREG_TOKEN)); get a new one, see {GUIDE}")
    one_line(refused, "the registry refused the credentials sent (HTTP 401 Unauthorized; Authorization (redacted, "
                      "from SKILLREG_TOKEN))")


def test_a_token_bound_to_another_origin_is_not_sent(site: Path, project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLREG_TOKEN", TOKEN)
    monkeypatch.setenv("SKILLREG_TOKEN_ORIGIN", "https://skills.example.com")
    with RegistryServer(site) as server:
        server.state.auth = BEARER
        result = run("install", "log-summarizer", "--registry", server.url)
    one_line(result, "the registry needs credentials")
    assert set(server.state.authorizations) == {None}


def test_the_token_goes_only_to_the_registry_named_and_never_to_one_from_a_lock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLREG_TOKEN", TOKEN)
    named = Credentials("https://skills.example.com/team/")
    assert named.for_url("https://skills.example.com:443/team/api/v1/index.json", 1.0) is not None
    assert named.for_url("https://skills.example.com:8443/api/v1/index.json", 1.0) is None
    assert named.for_url("https://cdn.example.com/api/v1/index.json", 1.0) is None
    assert Credentials(None).for_url("https://skills.example.com/api/v1/index.json", 1.0) is None
    monkeypatch.setenv("SKILLREG_TOKEN_ORIGIN", "https://skills.example.com")
    bound = Credentials(None).for_url("https://skills.example.com/api/v1/index.json", 1.0)
    assert bound is not None and TOKEN not in repr(bound) and bound.header == BEARER
    monkeypatch.setenv("SKILLREG_TOKEN_ORIGIN", "skills.example.com")
    with pytest.raises(UsageError, match="SKILLREG_TOKEN_ORIGIN must be an origin such as https://"):
        Credentials(None).for_url("https://skills.example.com/api/v1/index.json", 1.0)


@pytest.mark.parametrize(("command", "needles"), [
    ("exit 3", ("failed with exit code 3; nothing was sent",)),
    ("sleep 30; echo late", ("gave no answer before the request's deadline (SKILLREG_TIMEOUT) passed; nothing was sent",)),
    ("true", ("printed nothing; nothing was sent",)),
    ("printf 'to,ken with space\\n'", ("gives an Authorization value (redacted) that is not a token or a header value",)),
])
def test_a_helper_that_fails_or_hangs_is_one_line(command: str, needles: tuple[str, ...], site: Path, project: Path,
                                                  isolated_user_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLREG_TIMEOUT", "1")
    with RegistryServer(site) as server:
        config = helper(isolated_user_dirs, origin(server.url), command)
        result = run("install", "log-summarizer", "--registry", server.url)
        asked = server.state.paths()
    one_line(result, f"the credential helper for http://127.0.0.1:{server.port} in {config} ", *needles)
    assert asked == [] and not (project / ".claude").exists()


def test_a_url_with_a_password_is_refused_without_showing_it(project: Path) -> None:
    result = run("install", "log-summarizer", "--registry", f"http://{LOGIN}:{PASSWORD}@127.0.0.1:9/")
    assert result.exit_code == 2
    one_line(result, "http://redacted@127.0.0.1:9/: a registry URL carries no user name or password")


@pytest.mark.parametrize(("text", "needle"), [
    ('[credential-helpers]\n"https://skills.example.com/path" = "x"\n', "must be an origin"),
    ("[credential-helpers\n", "not valid TOML"),
])
def test_a_bad_client_config_is_one_line_naming_it(text: str, needle: str, site: Path, project: Path,
                                                   isolated_user_dirs: Path) -> None:
    config = isolated_user_dirs / ".config" / "skillreg" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(text)
    with RegistryServer(site) as server:
        result = run("install", "log-summarizer", "--registry", server.url)
    one_line(result, f"{config}: ", needle)


def test_mcp_searches_and_installs_from_a_protected_registry(site: Path, project: Path, isolated_user_dirs: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with RegistryServer(site) as server:
        expected = give("helper", server, isolated_user_dirs, monkeypatch)
        _, (found, installed) = anyio.run(mcp_session, server.url, project, [
            ("search_skills", {"query": "csv"}),
            ("install_skill", {"slug": "csv-profiler"}),
        ])
        sent = set(server.state.authorizations)
    # project.parent holds the server's stderr too
    _found_and_installed(found, installed, site, project, sent, expected, isolated_user_dirs)


def test_a_helper_answer_the_registry_refuses_early_is_asked_for_again_once(site: Path, project: Path,
                                                                          isolated_user_dirs: Path) -> None:
    """A helper said its token lasts an hour, but the registry stopped taking it: the client asks the helper
    again instead of failing, once (a second refusal is the one-line error)."""
    calls = isolated_user_dirs / "calls"
    command = f"echo x >> {calls}; printf 'token-%s\\\\nexpires_in=3600\\\\n' $(wc -l < {calls})"
    with RegistryServer(site) as server:
        helper(isolated_user_dirs, origin(server.url), command)
        server.state.auth = "Bearer token-2"
        renewed = run("install", "log-summarizer", "--registry", server.url)
        server.state.auth = "Bearer token-9"
        refused = run("install", "csv-profiler", "--registry", server.url)
    assert renewed.exit_code == 0, renewed.output
    one_line(refused, "the registry refused the credentials sent (HTTP 401 Unauthorized; Authorization (redacted, "
                      f"from the credential helper for http://127.0.0.1:{server.port} in ")
    assert calls.read_text().count("x") == 4  # twice for each command


def test_netrc_named_by_the_environment_is_read_and_a_shared_default_one_is_refused(
        site: Path, project: Path, isolated_user_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with RegistryServer(site) as server:
        give("netrc", server, isolated_user_dirs, monkeypatch)
        (isolated_user_dirs / ".netrc").chmod(0o644)  # others may read it: the standard library refuses it
        shared = run("info", "csv-profiler", "--registry", server.url)
        moved = (isolated_user_dirs / ".netrc").rename(isolated_user_dirs / "team.netrc")
        monkeypatch.setenv("NETRC", str(moved))
        named = run("info", "csv-profiler", "--registry", server.url)
        moved.write_text(f"machine 127.0.0.1:{server.port} login {LOGIN} {PASSWORD}\n")  # no `password`
        broken = run("info", "csv-profiler", "--registry", server.url)
    one_line(broken, f"{moved}: line ", ": bad follower token (redacted)")
    one_line(shared, f"{isolated_user_dirs / '.netrc'}: ~/.netrc access too permissive")
    assert named.exit_code == 0, named.output


def test_mcp_over_http_searches_and_installs_from_a_protected_registry(site: Path, project: Path,
                                                                      isolated_user_dirs: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers.mcp import http_server, session

    async def calls(url: str) -> tuple[Any, Any]:
        async with session(url=url, cwd=project) as client:
            return (await client.call_tool("search_skills", {"query": "csv"}),
                    await client.call_tool("install_skill", {"slug": "csv-profiler"}))

    with RegistryServer(site) as server:
        expected = give("env", server, isolated_user_dirs, monkeypatch)
        with http_server(server.url, "--allow-install", cwd=project) as url:
            found, installed = anyio.run(calls, url)
        sent = set(server.state.authorizations)
    _found_and_installed(found, installed, site, project, sent, expected, isolated_user_dirs)


def _found_and_installed(found: Any, installed: Any, site: Path, project: Path, sent: set[str], expected: str,
                         user_dirs: Path) -> None:
    """MCP's search_skills found the skill and install_skill installed it, with exactly the expected header sent
    and no secret in any file or answer."""
    assert not found.is_error and not installed.is_error, (found.content, installed.content)
    assert "csv-profiler" in [s["slug"] for s in json.loads(found.content[0].text)["skills"]]
    assert tree(project / ".claude/skills/csv-profiler") == source_files(site, "csv-profiler")
    assert sent == {expected}
    assert not leaked([project.parent, user_dirs], [found.content[0].text, installed.content[0].text])
