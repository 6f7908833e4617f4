"""A lock's ``registry`` is data from the checkout: one on this machine, a local network or a folder is used only
when the user names it (--registry or $SKILLREG_REGISTRY), so a cloned lock cannot make the client send requests
to local services. Driven through a real ``git clone`` and a registry served on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.client import GIT_ENV, RegistryServer, commit, run


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
    return project


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
