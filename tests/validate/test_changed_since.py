"""``skillreg validate --changed-since REF`` in real git repositories made in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.changes import SKILLS, digest_of, git, make_repo

from builder.cli.app import cli
from builder.core.config import load_config
from builder.core.loader import load_skill
from builder.publish.schemas import load_schema
from builder.validate.changes import tree_files, validate_changes


def skill_md(name: str, *, category: str | None = "data", body: str = "Do the thing, step by step.\n") -> str:
    meta = f"metadata:\n  category: {category}\n  version: \"1.0.0\"\n" if category else ""
    return f"---\nname: {name}\ndescription: Checks a thing when the user asks for it.\n{meta}---\n# Title\n\n{body}"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository on `main`, and the current folder, as in CI (findings name paths relative to it)."""
    root = make_repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    return root


def changes(repo: Path, ref: str = "main"):
    return validate_changes(load_config(repo / "registry.yaml"), ref)


def test_added_modified_removed_and_renamed_skills_with_old_and_new_digests(repo: Path, tmp_path: Path) -> None:
    base = {name: digest_of(repo / "skills" / name) for name in SKILLS}
    git(repo, "checkout", "-q", "-b", "pr")
    write_tree(repo / "skills", {"new-skill/SKILL.md": skill_md("new-skill")})
    edited = repo / "skills/csv-profiler/SKILL.md"
    edited.write_text(edited.read_text().replace('version: "1.0.0"', 'version: "1.1.0"', 1) + "\nOne more line.\n")
    git(repo, "rm", "-rq", "skills/log-summarizer")
    git(repo, "mv", "skills/changelog-from-git", "skills/git-changelog")
    md = repo / "skills/git-changelog/SKILL.md"
    md.write_text(md.read_text().replace("name: changelog-from-git", "name: git-changelog", 1)
                  .replace('version: "1.0.0"', 'version: "1.0.1"', 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pr")

    result = changes(repo)
    assert result.base == git(repo, "rev-parse", "main").strip()
    assert [(c.name, c.status, c.old_name, c.old_digest, c.new_digest) for c in result.changes] == [
        ("skills/csv-profiler", "modified", None, base["csv-profiler"], digest_of(repo / "skills/csv-profiler")),
        ("skills/git-changelog", "renamed", "skills/changelog-from-git", base["changelog-from-git"],
         digest_of(repo / "skills/git-changelog")),
        ("skills/log-summarizer", "removed", None, base["log-summarizer"], None),
        ("skills/new-skill", "added", None, None, digest_of(repo / "skills/new-skill")),
    ]
    assert base["csv-profiler"] != digest_of(repo / "skills/csv-profiler")
    assert sorted(s.name for s in result.report.skills) == ["csv-profiler", "git-changelog", "new-skill"]
    assert result.report.diagnostics == ()


def test_uncommitted_and_untracked_changes_count_as_changed(repo: Path) -> None:
    with open(repo / "skills/secret-scanner/SKILL.md", "a", encoding="utf-8") as fh:
        fh.write("\nAn unstaged edit.\n")
    write_tree(repo / "skills", {"draft/SKILL.md": skill_md("draft")})
    result = changes(repo, "HEAD")
    assert [(c.name, c.status) for c in result.changes] == [("skills/draft", "added"),
                                                            ("skills/secret-scanner", "modified")]


def test_only_changed_skills_are_checked_fully_but_names_are_checked_against_all(repo: Path) -> None:
    # An unchanged skill with a warning stays quiet; a new skill reusing its name is caught.
    write_tree(repo / "skills", {"quiet/SKILL.md": skill_md("quiet", category=None)})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a skill without a category")
    git(repo, "checkout", "-q", "-b", "pr")
    write_tree(repo / "skills", {"zz-copy/SKILL.md": skill_md("csv-profiler")})

    result = changes(repo)
    assert [(d.code, d.file, d.line) for d in result.report.diagnostics] == [
        ("SK106", "skills/zz-copy/SKILL.md", 2),
        ("SK601", "skills/zz-copy/SKILL.md", 2),
    ]
    assert result.report.diagnostics[1].message == ("skill name `csv-profiler` is also used by skills/csv-profiler; "
                                                    "each publishes under its own slug")

    registry = repo / "registry.yaml"  # a registry.yaml change can invalidate any skill: all are checked
    registry.write_text(registry.read_text() + "\n# touched\n")
    result = changes(repo)
    assert result.config_changed
    assert "SK305" in {d.code for d in result.report.diagnostics}
    assert len(result.report.skills) == len(SKILLS) + 2


def test_old_files_come_from_the_tree_with_executable_bits(repo: Path) -> None:
    config = load_config(repo / "registry.yaml")
    files = tree_files(repo, git(repo, "rev-parse", "HEAD").strip(), ["skills/csv-profiler"], config)
    on_disk = load_skill(repo / "skills/csv-profiler", config).skill.files
    assert [(f.path, f.data, f.executable) for f in files["skills/csv-profiler"]] == \
        [(f.path, f.data, f.executable) for f in on_disk]
    assert any(f.executable for f in files["skills/csv-profiler"])


@pytest.mark.parametrize(("args", "message"), [
    (["--changed-since", "nope"], "Error: unknown git revision 'nope'; fetch it first "
                                  "(in GitHub Actions, check out with `fetch-depth: 0`)\n"),
    (["--changed-since", "main", "skills/csv-profiler"],
     "Error: --changed-since finds the skills itself; give it no PATHS\n"),
])
def test_usage_errors_exit_2(repo: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["validate", *args])
    assert (result.exit_code, result.output) == (2, message)


def test_outside_git_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {"registry.yaml": "title: T\n", "skills/a/SKILL.md": skill_md("a", category=None)})
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["validate", "--changed-since", "main"])
    assert result.exit_code == 2
    assert result.output.startswith("Error: --changed-since needs a git repository")


def test_text_and_json_output(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    result = CliRunner().invoke(cli, ["validate", "--changed-since", "main"])
    assert (result.exit_code, result.output) == (
        0, f"No skill changed since main (merge base {base[:12]}).\n0 errors, 0 warnings in 0 of 0 skills\n")

    removed = digest_of(repo / "skills/log-summarizer")
    git(repo, "rm", "-rq", "skills/log-summarizer")
    result = CliRunner().invoke(cli, ["validate", "--changed-since", "main", "--format", "json"])
    data = json.loads(result.output)
    assert result.exit_code == 0
    jsonschema.validate(data, load_schema("validate"))
    assert data["changed_since"] == {"ref": "main", "base": base, "config_changed": False, "skills": [
        {"name": "skills/log-summarizer", "status": "removed", "old_name": None, "new_digest": None,
         "old_digest": removed}]}


def test_text_output_says_which_changed_skills_have_findings(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    old = digest_of(repo / "skills/csv-profiler")
    git(repo, "checkout", "-q", "-b", "pr")
    edited = repo / "skills/csv-profiler/SKILL.md"
    edited.write_text(edited.read_text().replace('version: "1.0.0"', 'version: "1.0.1"', 1) + "\nOne more line.\n")
    write_tree(repo / "skills", {"new-skill/SKILL.md": skill_md("new-skill", category="nope")})
    new = digest_of(repo / "skills/new-skill")
    result = CliRunner().invoke(cli, ["validate", "--changed-since", "main"])
    assert result.exit_code == 1
    assert result.output.splitlines()[:3] == [
        f"Changed since main (merge base {base[:12]}): 2 skills",
        f"  skills/csv-profiler  modified {old[:19]} -> {digest_of(repo / 'skills/csv-profiler')[:19]}  "
        "[no findings]",
        f"  skills/new-skill     added {new[:19]}  [1 error: SK301]",
    ]
