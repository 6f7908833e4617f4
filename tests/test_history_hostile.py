"""Hostile git history: bytes git allows in names and paths, huge past snapshots, and a planted bundle cache.

Each case is made the way an attacker gets there: commits in a real repository in tmp_path (a pull request
merged into the built branch), then the build run as a user or the Pages workflow runs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from build_helpers import git, skillreg
from click.testing import CliRunner
from conftest import write_tree
from test_history import commit, new_registry, skill_md, versions

from builder.cli.app import cli


def detail(out: Path, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / f"api/v1/skills/{name}.json").read_text())
    return doc


def merge_pull_request(repo: Path, branch: str, date: str) -> str:
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", branch, "-m", f"Merge {branch}", date=date)
    return git(repo, "rev-parse", "HEAD").strip()


# --- names and paths holding the bytes git log output used to be split on ----------------------------------

FORGED = "x\x1e" + "f" * 40 + "\x1f4102444800\x1fMallory"  # what once read as a newer commit by Mallory


@pytest.mark.parametrize(("author", "kept"), [  # git drops newlines, < and > from a name; the rest it keeps
    ("evil\x1fname", "evil\x1fname"), (FORGED, FORGED), ("new\nline", "newline"),
    ("tab\tand <b>markup</b> \x1b[31m", "tab\tand bmarkup/b \x1b[31m")])
def test_an_author_name_never_shifts_the_commit_time_or_contributors_of_provenance(tmp_path: Path, author: str,
                                                                                  kept: str) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    git(repo, "checkout", "-q", "-b", "contribution")
    (repo / "skills/hello/notes.md").write_text("more\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "notes", date="2026-01-05T00:00:00Z", author=author)
    theirs = git(repo, "rev-parse", "HEAD").strip()
    merge = merge_pull_request(repo, "contribution", "2026-01-06T00:00:00Z")
    config = repo / "registry.yaml"
    config.write_text(config.read_text() + "repository: https://example.invalid/org/reg\n")
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["--config", str(config), "build", "--out", str(out), "--no-site"])
    assert result.exit_code == 0, result.output
    prov = detail(out, "hello")["provenance"]
    assert prov["commit"] == theirs and prov["updated"] == "2026-01-05T00:00:00Z"
    assert prov["created"] == "2026-01-01T00:00:00Z"
    assert prov["authors"] == sorted(["Ada Lovelace", kept])
    assert prov["source_url"] == f"https://example.invalid/org/reg/tree/{theirs}/skills/hello"
    index = json.loads((out / "api/v1/index.json").read_text())
    assert index["source"]["commit"] == merge


def test_an_author_name_reaches_the_page_escaped_as_text(tmp_path: Path) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    (repo / "skills/hello/notes.md").write_text("more\n")
    git(repo, "add", "-A")
    # git drops < and > from a name; an ampersand and quotes are what is left to escape.
    git(repo, "commit", "-q", "-m", "notes", author='Tom & "Jerry" &lt;script')
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["--config", str(repo / "registry.yaml"), "build", "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "skills/hello/index.html").read_text()
    assert "Ada Lovelace, Tom &amp; &#34;Jerry&#34; &amp;lt;script <span" in page


@pytest.mark.parametrize("odd", ["notes\x1e.md", "a\x1fb.md", "line\nbreak.md", "\x1e"])
def test_a_path_in_history_holding_separator_bytes_withdraws_its_version_and_the_build_succeeds(
        tmp_path: Path, odd: str) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    write_tree(repo / "skills/hello", {f"references/{odd}": "x\n"})
    write_tree(repo / f"elsewhere/{odd}", {"f": "outside the skills folder\n"})
    bad = commit(repo, "an odd name", "2026-01-02T00:00:00Z")
    (repo / "skills/hello/references" / odd).unlink()
    (repo / "skills/hello/SKILL.md").write_text(skill_md("hello", "1.1.0"))
    commit(repo, "fixed", "2026-01-03T00:00:00Z")
    out = tmp_path / "site"
    done = skillreg(["build", "--out", str(out), "--no-site"], cwd=repo)
    assert done.returncode == 0, done.stderr
    fixed, odd_version, first = versions(out, "hello")["versions"]
    assert odd_version["commit"] == bad and odd_version["status"] == "withdrawn" and odd_version["rules"]
    assert (fixed["version"], first["version"]) == ("1.1.0", "1.0.0")
    assert detail(out, "hello")["provenance"]["created"] == "2026-01-01T00:00:00Z"


def test_a_commit_dated_past_the_year_9999_is_shown_at_the_end_of_the_calendar(tmp_path: Path) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    (repo / "skills/hello/SKILL.md").write_text(skill_md("hello", "1.1.0"))
    commit(repo, "from the far future", "@99999999999999 +0000")
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["--config", str(repo / "registry.yaml"), "build", "--out", str(out), "--no-site"])
    assert result.exit_code == 0, result.output
    assert detail(out, "hello")["provenance"]["updated"] == "9999-12-31T23:59:59Z"
    assert [v["time"] for v in versions(out, "hello")["versions"]] == ["9999-12-31T23:59:59Z", "2026-01-01T00:00:00Z"]
