"""A cloned repository whose committed symbolic links lead out of the project: the client writes and deletes only
below the project's real path (or the home folder's, for ``--global``). Driven through a real ``git clone``, real
installs from a registry served on 127.0.0.1, the CLI and the MCP server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest
from helpers.client import GIT_ENV, RegistryServer, commit, run, tree

SKILL = "csv-profiler"


@pytest.fixture
def server(site: Path):
    with RegistryServer(site) as running:
        yield running


@pytest.fixture
def locked(server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """A real skills-lock.json naming .claude/skills/csv-profiler, made by a real install elsewhere."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.chdir(scratch)
    assert run("install", SKILL, "--registry", server.url).exit_code == 0
    return (scratch / "skills-lock.json").read_bytes()


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder outside every project: someone's config, with a file and a skill-named folder of their own."""
    folder = tmp_path / "victim" / ".config"
    (folder / SKILL).mkdir(parents=True)
    (folder / "autostart.sh").write_text("#!/bin/sh\necho mine\n")
    (folder / SKILL / "notes.txt").write_text("not a skill\n")
    return folder


def checkout(tmp_path: Path, links: dict[str, str], files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> Path:
    """Commit ``links`` (path -> link text) and ``files`` in a repository, clone it, and work in the clone."""
    origin = tmp_path / "origin"
    origin.mkdir()
    for rel, data in files.items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin / rel).write_bytes(data)
    for rel, target in links.items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, origin / rel)
    (origin / "README").write_text("a project\n")
    commit(origin, "a project with links")
    clone = tmp_path / "work" / "project"
    clone.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, env={**os.environ, **GIT_ENV})
    for rel in links:
        assert (clone / rel).is_symlink()
    monkeypatch.chdir(clone)
    return clone


def refused(args: list[str], message: str = "outside the project") -> None:
    result = run(*args)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert message in result.stderr, result.stderr
    assert "refusing to install or remove anything there" in result.stderr


# The committed link, relative to the clone at tmp_path/work/project, leading to tmp_path/victim/.config.
LINKS = {
    "skills folder": {".claude/skills": "../../../victim/.config"},
    "intermediate folder": {".claude": "../../victim/.config/dot-claude"},
    "skill folder": {f".claude/skills/{SKILL}": f"../../../../victim/.config/{SKILL}"},
}


@pytest.mark.parametrize("case", sorted(LINKS))
@pytest.mark.parametrize("command", [["install", "--frozen"], ["install"], ["install", "--force"],
                                     ["remove", SKILL, "--force"], ["update", "--force"], ["verify"]])
def test_a_committed_link_never_carries_a_lock_target_out(case: str, command: list[str], locked: bytes,
                                                          victim: Path, server: RegistryServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (victim / "dot-claude" / "skills").mkdir(parents=True)
    before = tree(victim.parent)
    project = checkout(tmp_path, LINKS[case], {"skills-lock.json": locked}, monkeypatch)
    lock_before = (project / "skills-lock.json").read_bytes()
    refused([*command, "--registry", server.url] if command[0] in ("install", "update") else command)
    assert tree(victim.parent) == before
    assert sorted(p.name for p in victim.iterdir()) == ["autostart.sh", "csv-profiler", "dot-claude"]
    assert (project / "skills-lock.json").read_bytes() == lock_before


@pytest.mark.parametrize("agent, link", [("codex", ".agents/skills"), ("claude", ".claude/skills"),
                                         ("gemini", ".gemini")])
def test_installing_into_an_agent_folder_that_links_out_is_refused(agent: str, link: str, victim: Path,
                                                                   server: RegistryServer, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    before = tree(victim.parent)
    depth = "../" * (link.count("/") + 2)
    project = checkout(tmp_path, {link: f"{depth}victim/.config"}, {}, monkeypatch)
    refused(["install", "log-summarizer", "--agent", agent, "--registry", server.url])
    refused(["install", "log-summarizer", "--dir", f"{link}/x", "--registry", server.url])
    assert tree(victim.parent) == before
    assert not (project / "skills-lock.json").exists()


def test_a_link_that_stays_inside_the_project_is_followed(server: RegistryServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    project = checkout(tmp_path, {".claude/skills": "../shared/skills"}, {"shared/skills/.keep": b""}, monkeypatch)
    assert run("install", SKILL, "--registry", server.url).exit_code == 0
    assert (project / "shared/skills" / SKILL / "SKILL.md").is_file()
    assert run("verify").exit_code == 0
    assert run("remove", SKILL).exit_code == 0
    assert not (project / "shared/skills" / SKILL).exists()


def test_global_installs_stay_in_the_home_folder(server: RegistryServer, tmp_path: Path, victim: Path) -> None:
    before = tree(victim.parent)
    home = Path(os.environ["HOME"])
    os.symlink(victim, home / ".claude")
    result = run("install", SKILL, "--global", "--registry", server.url)
    assert result.exit_code == 1 and "outside your home folder" in result.stderr, result.output
    assert tree(victim.parent) == before


def test_the_mcp_install_tool_refuses_an_agent_folder_that_links_out(server: RegistryServer, victim: Path,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers.client import mcp_session

    before = tree(victim.parent)
    project = checkout(tmp_path, {".agents/skills": "../../../victim/.config"}, {}, monkeypatch)
    _, results = anyio.run(mcp_session, server.url, project, [
        ("install_skill", {"slug": "log-summarizer", "target": "codex"}),
        ("install_skill", {"slug": "log-summarizer", "target": "agents"}),
    ])
    for result in results:
        assert result.is_error
        assert "outside the project" in result.content[0].text, result.content[0].text
    assert tree(victim.parent) == before
    assert not (project / "skills-lock.json").exists()
