"""Tests for skills/changelog-from-git/scripts/build_changelog.py (uses a throwaway git repo)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.scripts import git_env as isolated_git_env
from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "changelog-from-git" / "scripts" / "build_changelog.py"


def git_env(home: Path) -> dict[str, str]:
    return isolated_git_env(home, "Test Author", "author@example.invalid", "Test Committer",
                            "committer@example.invalid")


@pytest.fixture()
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    env = git_env(tmp_path)

    def git(*args: str, date: str | None = None) -> str:
        run_env = dict(env)
        if date:
            run_env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        return subprocess.run(["git", *args], cwd=path, env=run_env, check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q")
    history = [
        ("2024-01-01T10:00:00Z", ["chore: initial commit"]),
        ("2024-01-02T10:00:00Z", ["feat(api): add pagination to list endpoints (#12)"]),
        ("2024-01-03T10:00:00Z", ["fix: handle empty config file"]),
        ("2024-01-04T10:00:00Z", ["feat!: drop Python 3.8 support"]),
        ("2024-01-05T10:00:00Z", ["refactor(db): extract query builder",
                                  "BREAKING CHANGE: Query.run() now returns a list"]),
        ("2024-01-06T10:00:00Z", ["Update README"]),
        ("2024-01-07T10:00:00Z", ["ci: cache pip downloads"]),
    ]
    shas = []
    for index, (date, messages) in enumerate(history):
        args = ["commit", "-q", "--allow-empty"]
        for message in messages:
            args += ["-m", message]
        git(*args, date=date)
        shas.append(git("rev-parse", "--short", "HEAD"))
        if index == 0:
            git("tag", "v1.0.0")
    return path, shas, env


def run(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, cwd=cwd, env=env)


def test_help_exits_zero(tmp_path):
    result = run("--help", cwd=tmp_path, env=git_env(tmp_path))
    assert result.returncode == 0
    assert "Conventional Commits" in result.stdout


def test_groups_commits_since_latest_tag(repo):
    path, s, env = repo
    result = run("--version", "1.1.0", cwd=path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"""## 1.1.0 (2024-01-07)

### BREAKING CHANGES

- **db:** Query.run() now returns a list ({s[4]})
- drop Python 3.8 support ({s[3]})

### Features

- drop Python 3.8 support ({s[3]})
- **api:** add pagination to list endpoints (#12) ({s[1]})

### Bug Fixes

- handle empty config file ({s[2]})

### Refactoring

- **db:** extract query builder ({s[4]})

### Other Changes

- Update README ({s[5]})
"""


def test_explicit_range_types_links_and_date(repo):
    path, s, env = repo
    result = run(f"{s[0]}..{s[2]}", "-C", str(path), "--types", "feat,ci", "--no-other", "--date", "2024-02-01",
                 "--repo-url", "https://example.invalid/acme/app/", cwd=path.parent, env=env)
    assert result.returncode == 0, result.stderr
    full = subprocess.run(["git", "rev-parse", s[1]], cwd=path, env=env, capture_output=True,
                          text=True).stdout.strip()
    assert result.stdout == (
        "## Unreleased (2024-02-01)\n\n### Features\n\n"
        "- **api:** add pagination to list endpoints ([#12](https://example.invalid/acme/app/pull/12)) "
        f"([{s[1]}](https://example.invalid/acme/app/commit/{full}))\n")


def test_json_output_and_empty_selection(repo):
    path, s, env = repo
    result = run("v1.0.0..HEAD", "--json", cwd=path, env=env)
    data = json.loads(result.stdout)
    assert [(c["type"], c["scope"]) for c in data["commits"]] == [
        ("ci", None), (None, None), ("refactor", "db"), ("feat", None), ("fix", None), ("feat", "api")]
    only_ci = run(f"{s[5]}..HEAD", "--no-other", cwd=path, env=env)
    assert only_ci.stdout == "## Unreleased (2024-01-07)\n\nNo notable changes.\n"


def test_errors_exit_two_with_message(repo, tmp_path):
    path, _, env = repo
    result = run("nope..HEAD", cwd=path, env=env)
    assert result.returncode == 2
    assert "error: bad revision 'nope..HEAD'" in result.stderr
    outside = tmp_path / "plain"
    outside.mkdir()
    result = run(cwd=outside, env=env)
    assert result.returncode == 2
    assert "not a git repository" in result.stderr
    result = run("--types", "feat,bogus", cwd=path, env=env)
    assert result.returncode == 2
    assert "unknown type(s) in --types: bogus" in result.stderr
