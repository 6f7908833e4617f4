"""``python -m bench.rebuild_git``: the repository it measures rebuilds in holds the corpus's first skills,
committed, with the lean settings the scale benchmark uses."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import REPO

from bench.rebuild_git import make_repository
from builder.core.config import load_config


def test_the_measured_repository_commits_the_first_skills_with_lean_settings(tmp_path: Path) -> None:
    repo = tmp_path / "registry"
    assert make_repository(REPO / "skills", repo, 2) == 2
    first_two = sorted(p.name for p in (REPO / "skills").iterdir() if p.is_dir())[:2]
    assert sorted(p.name for p in (repo / "skills").iterdir()) == first_two
    tracked = subprocess.run(["git", "ls-files", "skills"], cwd=repo, capture_output=True, text=True, check=True)
    assert {line.split("/")[1] for line in tracked.stdout.splitlines()} == set(first_two)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    assert status.stdout == ""  # registry.yaml committed too: the rebuilds start from a clean work tree
    config = load_config(repo / "registry.yaml")
    assert config.profile == "agents" and not config.publish.json_bundles and not config.publish.well_known_skills
