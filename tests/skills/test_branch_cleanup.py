"""Tests for skills/branch-cleanup/scripts/stale_branches.sh (uses a throwaway git repo)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.scripts import git_env, run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "branch-cleanup" / "scripts" / "stale_branches.sh"
NOW = "1717977600"  # 2024-06-10T00:00:00Z


@pytest.fixture()
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    env = git_env(tmp_path, "Ann", "ann@example.invalid")

    def git(*args: str, date: str | None = None) -> None:
        run_env = dict(env, **({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}))
        subprocess.run(["git", *args], cwd=path, env=run_env, check=True, capture_output=True)

    git("init", "-q")
    git("checkout", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "init", date="2024-01-01T00:00:00Z")
    git("branch", "feature/done")
    git("branch", "release/1.0")
    git("branch", "develop")
    git("checkout", "-q", "-b", "spike/old")
    git("commit", "-q", "--allow-empty", "-m", "spike", date="2024-01-02T00:00:00Z")
    git("checkout", "-q", "-b", "feature/new", "main")
    git("commit", "-q", "--allow-empty", "-m", "new", date="2024-06-01T00:00:00Z")
    git("checkout", "-q", "main")
    return path, env


def run(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, cwd=cwd, env=env)


def branches(path: Path, env: dict) -> list[str]:
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname:short)", "refs/heads/"], cwd=path, env=env,
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def test_help_exits_zero(tmp_path):
    result = run("--help", cwd=tmp_path)
    assert result.returncode == 0
    assert "Usage: stale_branches.sh" in result.stdout


def test_report_lists_merged_and_stale_without_deleting(repo):
    path, env = repo
    result = run("--now", NOW, "--keep", "release/*", cwd=path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "base: main\n\n"
        "merged into main (safe to delete): 1\n"
        "  feature/done                   2024-01-01  Ann\n\n"
        "stale, not merged (no commits for 90+ days; review first): 1\n"
        "  spike/old                      2024-01-02  Ann\n\n"
        "protected: develop main release/1.0\n\n"
        "to delete the merged branches run:\n"
        "  git branch -d feature/done\n")
    assert "feature/done" in branches(path, env)


def test_days_threshold_and_current_branch_protection(repo):
    path, env = repo
    subprocess.run(["git", "checkout", "-q", "spike/old"], cwd=path, env=env, check=True)
    result = run("--now", NOW, "--days", "5", cwd=path, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "merged into main (safe to delete): 2" in lines  # feature/done and release/1.0
    assert "stale, not merged (no commits for 5+ days; review first): 1" in lines
    assert any(line.startswith("  feature/new ") for line in lines)
    assert "protected: develop main spike/old" in lines


def test_delete_removes_only_merged_branches(repo):
    path, env = repo
    result = run("--now", NOW, "--delete", cwd=path, env=env)
    assert result.returncode == 0, result.stderr
    assert branches(path, env) == ["develop", "feature/new", "main", "spike/old"]


def test_errors_exit_two(repo, tmp_path):
    path, env = repo
    result = run("--base", "nope", cwd=path, env=env)
    assert result.returncode == 2
    assert "error: base branch 'nope' does not exist" in result.stderr
    result = run("--days", "soon", cwd=path, env=env)
    assert result.returncode == 2
    assert "needs a whole number of days" in result.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run(cwd=plain, env=env)
    assert result.returncode == 2
    assert "not a git repository" in result.stderr
