"""Test support for the build tests: a registry as a real git repository, and `skillreg` as a real process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import REPO

SKILLS = ["csv-profiler", "secret-scanner", "changelog-from-git"]
SKILLREG = Path(sys.executable).parent / "skillreg"


def git(repo: Path, *args: str, date: str = "2026-01-02T03:04:05Z", author: str = "Ada Lovelace") -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": "ada@example.invalid",
           "GIT_COMMITTER_NAME": author, "GIT_COMMITTER_EMAIL": "ada@example.invalid",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def make_registry(root: Path, names: list[str] = SKILLS, *, commit: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "registry.yaml", root / "registry.yaml")
    for name in names:
        shutil.copytree(REPO / "skills" / name, root / "skills" / name)
    if commit:
        commit_all(root)
    return root


def commit_all(root: Path) -> None:
    """``root`` made a git repository whose one commit holds every file in it."""
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


def all_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def skillreg_command() -> list[str]:
    return [str(SKILLREG)] if SKILLREG.exists() else [sys.executable, "-m", "builder.cli.app"]


def skillreg(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``skillreg ARGS`` run in ``cwd`` as its own process, as a user or CI runs it."""
    return subprocess.run(skillreg_command() + args, cwd=cwd, env=os.environ.copy(), capture_output=True, text=True,
                          timeout=120, **kwargs)


def start_skillreg(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(skillreg_command() + args, cwd=cwd, env=os.environ.copy(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def leftovers(folder: Path, out_name: str) -> list[str]:
    """Folders the build machinery makes beside an output (temporary, backup, trash, old) still present."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{out_name}."))


def build_of(root: Path, out: Path, site: bool = False) -> Path:
    """The registry at ``root`` built into ``out`` in this process (the website only with ``site``)."""
    from builder.core.config import load_config
    from builder.publish.build import BuildOptions, build

    build(load_config(root / "registry.yaml"), out, BuildOptions(site=site))
    return out


def detail_of(out: Path, name: str) -> dict[str, Any]:
    """The published detail document of skill ``name`` in the output ``out``."""
    from builder.core.urls import detail_path

    data: dict[str, Any] = json.loads((out / detail_path(name)).read_text(encoding="utf-8"))
    return data

