"""A lock's ``registry`` is data from the checkout: one on this machine, a local network or a folder is used only
when the user names it (--registry or $SKILLREG_REGISTRY), so a cloned lock cannot make the client send requests
to local services, however the address is spelled and whatever a name resolves to. Driven through a real
``git clone`` and a registry served on 127.0.0.1; a made-up name gets its address from the transport's resolver."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from helpers.client import GIT_ENV, RegistryServer, commit, run

from builder.client import reach

SPELLED = ["https://127.1:{port}/", "http://2130706433:{port}/", "http://0x7f000001:{port}/"]


@pytest.fixture
def server(site: Path):
    with RegistryServer(site) as running:
        yield running


def cloned_with_registry(server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         registry: str | None) -> Path:
    """A project whose committed skills-lock.json (from a real install) names ``registry`` for its skill."""
    origin = tmp_path / "origin"
    origin.mkdir()
    monkeypatch.chdir(origin)
    assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    lock = json.loads((origin / "skills-lock.json").read_text())
    if registry is not None:
        lock["skills"]["csv-profiler"]["registry"] = registry
    (origin / "skills-lock.json").write_text(json.dumps(lock, indent=2))
    (origin / ".claude").rename(tmp_path / "installed-elsewhere")  # the clone has the lock, not the folder
    commit(origin, "a project with a lock")
    project = tmp_path / "project"
    subprocess.run(["git", "clone", "-q", str(origin), str(project)], check=True, env={**os.environ, **GIT_ENV})
    monkeypatch.chdir(project)
    server.state.log.clear()
    server.state.connections = 0
    return project


def resolving(monkeypatch: pytest.MonkeyPatch, name: str, address: str) -> None:
    """The transport's resolver answers ``address`` for the made-up ``name`` (every other host as the system does)."""
    real = reach.resolve_host

    def resolve(host: str, port: int) -> reach.Resolved:
        if host != name:
            return real(host, port)
        return [(socket.AF_INET6 if ":" in address else socket.AF_INET, (address, port))]

    monkeypatch.setattr(reach, "resolve_host", resolve)


@pytest.mark.parametrize("command", [["install"], ["install", "--frozen"], ["update"]])
def test_a_cloned_lock_naming_a_registry_on_this_machine_sends_no_request(
        command: list[str], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = cloned_with_registry(server, tmp_path, monkeypatch, None)
    lock = (project / "skills-lock.json").read_bytes()
    result = run(*command)
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: skills-lock.json names the registry {server.url}, on this machine; a registry from a lock file is "
        f"used only when it is public. To use it, name it: --registry {server.url}\n"))
    assert server.state.log == []
    assert not (project / ".claude").exists()
    assert (project / "skills-lock.json").read_bytes() == lock


@pytest.mark.parametrize("registry, where", [
    ("http://localhost:{port}/", "on this machine"),
    ("http://[::1]:{port}/", "on this machine"),
    ("https://10.1.2.3/registry/", "on a local network"),
    ("https://169.254.169.254/latest/", "on a local network"),
    ("file:///etc/", "a folder on this machine"),
    ("site", "a folder on this machine"),
])
def test_every_local_registry_in_a_lock_is_refused(registry: str, where: str, server: RegistryServer,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = registry.format(port=server.port)
    cloned_with_registry(server, tmp_path, monkeypatch, registry)
    result = run("install")
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: skills-lock.json names the registry {registry}, {where}; a registry from a lock file is used only "
        f"when it is public. To use it, name it: --registry {registry}\n"))
    assert server.state.log == []


def test_a_registry_the_user_names_restores_the_lock(server: RegistryServer, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    project = cloned_with_registry(server, tmp_path, monkeypatch, None)
    named = run("install", "--registry", server.url)
    assert named.exit_code == 0, named.output
    assert (project / ".claude/skills/csv-profiler/SKILL.md").is_file()
    monkeypatch.setenv("SKILLREG_REGISTRY", server.url)
    assert run("update").exit_code == 0


@pytest.mark.parametrize("command", [["install"], ["update"]])
@pytest.mark.parametrize("spelled", SPELLED)
def test_this_machine_spelled_another_way_in_a_lock_is_refused(
        spelled: str, command: list[str], server: RegistryServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    registry = spelled.format(port=server.port)
    project = cloned_with_registry(server, tmp_path, monkeypatch, registry)
    lock = (project / "skills-lock.json").read_bytes()
    result = run(*command)
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: skills-lock.json names the registry {registry}, the address 127.0.0.1, on this machine; a registry "
        f"from a lock file is used only when it is public. To use it, name it: --registry {registry}\n"))
    assert server.state.connections == 0
    assert not (project / ".claude").exists()
    assert (project / "skills-lock.json").read_bytes() == lock


@pytest.mark.parametrize("command", [["install"], ["update"]])
@pytest.mark.parametrize("address, shown, where", [
    ("127.0.0.1", "127.0.0.1", "on this machine"),
    ("10.0.0.7", "10.0.0.7", "on a local network"),
    ("::ffff:169.254.169.254", "::ffff:a9fe:a9fe (169.254.169.254)", "on a local network"),
])
def test_a_name_in_a_lock_is_judged_by_the_address_it_resolves_to_before_connecting(
        address: str, shown: str, where: str, command: list[str], server: RegistryServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    registry = f"https://registry.example.test:{server.port}/"
    project = cloned_with_registry(server, tmp_path, monkeypatch, registry)
    lock = (project / "skills-lock.json").read_bytes()
    resolving(monkeypatch, "registry.example.test", address)
    result = run(*command)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith(f"Error: {registry}api/v1/"), result.stderr
    assert result.stderr.endswith(
        f": registry.example.test resolves to {shown}, {where}; a registry from a lock "
        f"file is used only when it is public. To use it, name it: --registry {registry}\n"), result.stderr
    assert server.state.connections == 0
    assert not (project / ".claude").exists()
    assert (project / "skills-lock.json").read_bytes() == lock


@pytest.mark.parametrize("spelled", ["http://127.0.0.1:{port}/", "http://2130706433:{port}/"])
def test_the_registry_the_user_names_is_used_however_it_is_spelled(
        spelled: str, server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal's advice works: --registry with the lock's own spelling restores the clone."""
    registry = spelled.format(port=server.port)
    project = cloned_with_registry(server, tmp_path, monkeypatch, registry)
    named = run("install", "--registry", registry)
    assert named.exit_code == 0, named.output
    assert (project / ".claude/skills/csv-profiler/SKILL.md").is_file()
    assert server.state.connections >= 1
