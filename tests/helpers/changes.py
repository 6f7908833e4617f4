"""Test support for --changed-since and the workflows that run it: a registry committed in a real git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from builder.core.config import load_config
from builder.core.loader import load_skill
from helpers import REPO, write_tree

SKILLS = ["csv-profiler", "secret-scanner", "log-summarizer", "changelog-from-git"]


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.invalid",
           "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.invalid",
           "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def adoptable(root: Path, files: dict[str, str], origin: str | None = None) -> Path:
    """A repository holding ``files`` in one commit on `main`, with ``origin`` as its remote when given: what a
    maintainer adopting it with `skillreg init` starts from."""
    write_tree(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "skills")
    if origin:
        git(root, "remote", "add", "origin", origin)
    return root


def make_repo(root: Path, names: list[str] = SKILLS) -> Path:
    """registry.yaml and a few of the bundled skills, committed on `main`."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "registry.yaml", root / "registry.yaml")
    for name in names:
        shutil.copytree(REPO / "skills" / name, root / "skills" / name)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def digest_of(folder: Path) -> str:
    return load_skill(folder, load_config(folder.parent.parent / "registry.yaml")).skill.digest
