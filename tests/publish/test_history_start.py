"""registry.yaml's ``history.start``: a fork that deletes the skills it came with and starts its own publishes
none of them, not even as withdrawn versions, and each versions.json records where its history starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import write_tree
from helpers.build import git, skillreg
from helpers.history import commit

UPSTREAM = "title: Upstream\npolicy:\n  categories: true\ncategories:\n  - slug: data\n    title: Data\n"
FORK = "title: Fork\npolicy:\n  categories: true\ncategories:\n  - slug: writing\n    title: Writing\n"


def skill(name: str, category: str, version: str = "1.0.0") -> str:
    return (f"---\nname: {name}\ndescription: Says hello in {name}; use it when a greeting is wanted.\n"
            f"metadata:\n  category: {category}\n  version: \"{version}\"\n---\n# {name}\n\nSay hello.\n")


def fork(root: Path) -> tuple[str, str]:
    """An upstream registry of three skills, then a fork's commit that deletes one, keeps one as it was and moves
    one to its own category, then a fork commit changing that one: (upstream commit, the fork's first commit)."""
    write_tree(root, {"registry.yaml": UPSTREAM, "skills/gone/SKILL.md": skill("gone", "data"),
                      "skills/kept/SKILL.md": skill("kept", "writing"),
                      "skills/mine/SKILL.md": skill("mine", "data")})
    git(root, "init", "-q", "-b", "main")
    upstream = commit(root, "upstream", "2026-01-01T00:00:00Z")
    git(root, "rm", "-q", "-r", "skills/gone")
    write_tree(root, {"registry.yaml": FORK, "skills/mine/SKILL.md": skill("mine", "writing")})
    start = commit(root, "fork: our own registry", "2026-02-01T00:00:00Z")
    write_tree(root, {"skills/mine/SKILL.md": skill("mine", "writing", "1.1.0")})
    commit(root, "mine 1.1.0", "2026-03-01T00:00:00Z")
    return upstream, start


def versions(out: Path, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / f"api/v1/skills/{name}/versions.json").read_text(encoding="utf-8"))
    return doc


def test_a_fork_without_a_start_publishes_the_deleted_skills_as_withdrawn(tmp_path: Path) -> None:
    fork(tmp_path)
    done = skillreg(["build", "--no-site", "--out", "out"], tmp_path)
    assert done.returncode == 0, done.stderr
    gone = versions(tmp_path / "out", "gone")
    assert [v["status"] for v in gone["versions"]] == ["withdrawn"]  # what the start below leaves out
    assert "history_start" not in gone


def test_a_fork_with_a_start_publishes_only_its_own_history(tmp_path: Path) -> None:
    upstream, start = fork(tmp_path)
    (tmp_path / "registry.yaml").write_text(f"{FORK}history:\n  start: \"{start[:12]}\"\n", encoding="utf-8")
    done = skillreg(["build", "--no-site", "--out", "out"], tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    assert not (out / "api/v1/skills/gone").exists() and not (out / "api/v1/skills/gone.json").exists()
    mine, kept = versions(out, "mine"), versions(out, "kept")
    assert mine["history_start"] == kept["history_start"] == start
    assert [(v["version"], v["commit"], v["status"]) for v in mine["versions"]] == [
        ("1.1.0", git(tmp_path, "rev-parse", "HEAD").strip(), "available"), ("1.0.0", start, "available")]
    # A skill the fork kept as it was: its state at the start is its first version, dated by its own commit.
    assert [(v["commit"], v["status"]) for v in kept["versions"]] == [(upstream, "available")]


def test_a_start_that_is_not_a_commit_of_the_branch_stops_the_build_with_its_line(tmp_path: Path) -> None:
    fork(tmp_path)
    (tmp_path / "registry.yaml").write_text(f"{FORK}history:\n  start: \"abcdef1\"\n", encoding="utf-8")
    done = skillreg(["build", "--no-site", "--out", "out"], tmp_path)
    assert (done.returncode, done.stderr) == (1, (
        f"Error: {tmp_path / 'registry.yaml'}:8: history.start: abcdef1 is not a commit of this repository (in a "
        "shallow clone, fetch the whole history: git fetch --unshallow, or actions/checkout with fetch-depth: 0)\n"))
    assert not (tmp_path / "out").exists()
