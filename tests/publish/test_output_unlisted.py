"""The folders a build makes beside its output (staging, backup, trash) never show in ``git status`` of the
repository the output sits in, and the output itself never gets their ``.gitignore``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.build import git, make_registry, skillreg

from builder.publish.transaction import output_place, staging

pytestmark = pytest.mark.slow  # two builds in a real repository


def status(repo: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def test_a_build_in_progress_and_a_rebuild_leave_git_status_clean(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "registry")
    (repo / ".gitignore").write_text("/site/\n", encoding="utf-8")  # the output, as `skillreg init` ignores it
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore the output")
    assert skillreg(["build", "--no-site"], repo).returncode == 0
    with staging(output_place(repo / "site")) as tmp:  # what a rebuild writes into before it swaps
        (tmp / "index.json").write_text("{}", encoding="utf-8")
        assert tmp.parent == repo and tmp.name.startswith(".site.tmp-")
        assert status(repo) == ""
    (repo / "skills/csv-profiler/notes.md").write_text("More.\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a change to rebuild")
    done = skillreg(["build", "--no-site"], repo)
    assert done.returncode == 0, done.stderr
    assert status(repo) == ""  # the replaced files' backup and trash, if still there, are not listed
    assert not (repo / "site/.gitignore").exists()
