"""``verify`` and the local-modification check see every file an installed skill did not ship, the folders and
files a loader would skip as junk included: Python runs a planted ``__pycache__/*.pyc`` instead of its ``.py``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.client import RegistryServer, run

TARGET = ".claude/skills/csv-profiler"
PLANTED = ["scripts/__pycache__/profile_csv.cpython-311.pyc", ".DS_Store", "references/.DS_Store",
           "extra/deeper/notes.md", ".git/config", "Thumbs.db"]


@pytest.fixture
def server(site: Path):
    with RegistryServer(site) as running:
        yield running


@pytest.mark.parametrize("planted", PLANTED)
def test_verify_reports_a_file_the_skill_did_not_ship(planted: str, server: RegistryServer, project: Path) -> None:
    assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    assert run("verify").exit_code == 0
    path = project / TARGET / planted
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00planted")
    result = run("verify")
    assert (result.exit_code, result.stdout) == (1, f"modified  csv-profiler  {TARGET}\n"
                                                    f"    added: {planted}\n"
                                                    "1 of 1 installed folder(s) differ from skills-lock.json\n"
                                                    "`skillreg install --force` restores the locked files, "
                                                    "discarding the local changes above\n")


@pytest.mark.parametrize("planted", PLANTED[:2])
def test_a_planted_junk_file_counts_as_a_local_change(planted: str, server: RegistryServer, project: Path) -> None:
    assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    path = project / TARGET / planted
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00planted")
    why = (f"Error: csv-profiler was changed locally ({TARGET}: added: {planted}); {{}} would lose those changes. "
           "Use --force to do it anyway\n")
    removed = run("remove", "csv-profiler")
    assert (removed.exit_code, removed.stderr) == (1, why.format("removing it"))
    restored = run("install", "--registry", server.url)
    assert (restored.exit_code, restored.stderr) == (1, why.format("restoring"))
    assert path.read_bytes() == b"\x00planted"
    assert run("install", "--force", "--registry", server.url).exit_code == 0
    assert not path.exists() and run("verify").exit_code == 0


@pytest.mark.parametrize("change", ["modified", "missing"])
def test_verify_names_the_command_that_restores_and_that_command_does(change: str, server: RegistryServer,
                                                                       project: Path) -> None:
    assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    if change == "modified":
        (project / TARGET / "SKILL.md").write_text("mine\n", encoding="utf-8")
    else:
        shutil.rmtree(project / TARGET)
    told = run("verify")
    assert told.exit_code == 1
    command = told.stdout.splitlines()[-1].split("`")[1]
    assert command == {"modified": "skillreg install --force", "missing": "skillreg install"}[change]
    # The lock's registry is on this machine, so it is named again, as the restore itself asks.
    assert run(*command.split()[1:], "--registry", server.url).exit_code == 0
    assert run("verify").exit_code == 0
