"""Registries in the layouts people keep skills in, each a real git repository in tmp_path: what discovery finds
is what the build publishes, each skill under its slug, with its own history."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.build import all_files, git
from helpers.history import commit, skill_md, versions

from builder.cli.app import cli
from builder.core.config import load_config
from builder.core.diagnostics import RULES, Severity
from builder.core.discovery import registry_skills
from builder.core.errors import UsageError
from builder.publish.build import BuildOptions, BuildResult, build


def repository(root: Path, skills: dict[str, str], config: str = "title: Layout test\n") -> Path:
    """A git repository holding registry.yaml and a SKILL.md (declaring ``name``) in each folder of ``skills``."""
    write_tree(root, {"registry.yaml": config})
    for folder, name in skills.items():
        write_tree(root / folder, {"SKILL.md": skill_md(name, "1.0.0")})
    git(root, "init", "-q", "-b", "main")
    commit(root, "first", "2026-01-01T00:00:00Z")
    return root


def run_build(repo: Path, out: Path, **options: object) -> BuildResult:
    return build(load_config(repo / "registry.yaml"), out, BuildOptions(site=False, jobs=1, **options))  # type: ignore[arg-type]


def found(repo: Path) -> list[str]:
    return [s.path for s in registry_skills(load_config(repo / "registry.yaml")).skills]


def detail(out: Path, slug: str) -> dict[str, object]:
    return json.loads((out / f"api/v1/skills/{slug}.json").read_text())  # type: ignore[no-any-return]


def test_plugin_layout_publishes_every_plugins_skills(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"plugins/docs/skills/pdf-tools": "pdf-tools",
                                          "plugins/docs/skills/docx": "docx", "plugins/ops/skills/deploy": "deploy"})
    assert found(repo) == ["plugins/docs/skills/docx", "plugins/docs/skills/pdf-tools", "plugins/ops/skills/deploy"]
    result = run_build(repo, tmp_path / "site")
    assert result.published == ("deploy", "docx", "pdf-tools")
    assert detail(tmp_path / "site", "docx")["provenance"]["source_path"] == "plugins/docs/skills/docx"  # type: ignore[index]
    assert [v["commit"] is not None for v in versions(tmp_path / "site", "deploy")["versions"]] == [True]


def test_category_folders_and_several_top_level_folders(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"engineering/skills/review": "review", "writing/skills/notes": "notes",
                                          "skills/pdf": "pdf", ".claude/skills/local": "local"})
    assert found(repo) == [".claude/skills/local", "engineering/skills/review", "skills/pdf", "writing/skills/notes"]
    assert run_build(repo, tmp_path / "site").published == ("local", "notes", "pdf", "review")


def test_dot_folders_publish_with_skills_dir_skills(tmp_path: Path) -> None:
    """openai/skills keeps its skills in skills/.curated and skills/.system: `skills_dir: skills` used to build none."""
    repo = repository(tmp_path / "repo", {"skills/.curated/pdf": "pdf", "skills/.system/creator": "creator"},
                      "title: T\nskills_dir: skills\n")
    assert found(repo) == ["skills/.curated/pdf", "skills/.system/creator"]
    assert run_build(repo, tmp_path / "site").published == ("creator", "pdf")


def test_root_level_skill_folders(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"pdf": "pdf", "docx": "docx"})
    write_tree(repo, {"README.md": "# Skills\n", "scripts/check.py": "print('ok')\n"})
    assert found(repo) == ["docx", "pdf"]
    assert run_build(repo, tmp_path / "repo" / "site").published == ("docx", "pdf")
    assert found(repo) == ["docx", "pdf"]  # the site built inside the repository holds copies, never skills


def test_skills_globs_in_registry_yaml(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"plugins/a/skills/one": "one", "plugins/b/skills/two": "two",
                                          "preview/three": "three", "skills/ignored": "ignored"},
                      "title: T\nskills:\n  - plugins/*/skills\n  - preview\n")
    assert found(repo) == ["plugins/a/skills/one", "plugins/b/skills/two", "preview/three"]
    assert run_build(repo, tmp_path / "site").published == ("one", "three", "two")


def test_a_skill_md_under_references_is_a_file_of_its_skill(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"skills/pdf": "pdf", "skills/pdf/references/example": "example"})
    assert found(repo) == ["skills/pdf"]
    result = run_build(repo, tmp_path / "site")
    assert result.published == ("pdf",)
    files = [f["path"] for f in detail(tmp_path / "site", "pdf")["files"]]  # type: ignore[union-attr]
    assert files == ["SKILL.md", "references/example/SKILL.md"]
    assert [v["status"] for v in versions(tmp_path / "site", "pdf")["versions"]] == ["available"]


def test_symlinked_copies_inside_count_once_and_a_link_outside_is_refused_in_one_line(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"skills/pdf": "pdf"})
    write_tree(tmp_path / "outside/secret", {"SKILL.md": skill_md("secret", "1.0.0"), "key.txt": "secret\n"})
    (repo / ".claude/skills").mkdir(parents=True)
    os.symlink("../../skills/pdf", repo / ".claude/skills/pdf")
    os.symlink(tmp_path / "outside/secret", repo / ".claude/skills/secret")
    commit(repo, "links", "2026-01-02T00:00:00Z")
    assert found(repo) == ["skills/pdf"]
    result = run_build(repo, tmp_path / "site")
    assert result.published == ("pdf",)
    assert [(d.code, d.severity) for d in result.report.diagnostics] == [("SK608", Severity.WARNING)]
    assert result.warnings == (f"left out .claude/skills/secret: a symbolic link to "
                               f"{str(tmp_path / 'outside/secret')!r}, outside the repository; links are never "
                               "followed out of it",)
    assert not (tmp_path / "site/api/v1/skills/secret.json").exists()


def test_a_repository_with_no_skill_says_where_it_looked(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_tree(repo, {"registry.yaml": "title: T\n", "docs/index.md": "# Docs\n"})
    with pytest.raises(UsageError, match=r"^no skill found in .*: a skill is a folder holding SKILL.md; looked in "
                                         r"the folders agents read: skills/, .*plugins/\*/skills/, \*/skills/"):
        run_build(repo, tmp_path / "site")
    write_tree(repo, {"registry.yaml": "title: T\nskills:\n  - plugins/*/skills\n"})
    result = CliRunner().invoke(cli, ["--config", str(repo / "registry.yaml"), "build", "--out",
                                      str(tmp_path / "site")])
    assert (result.exit_code, result.stderr) == (2, (
        f"Error: no skill found in {repo.resolve()}: a skill is a folder holding SKILL.md; looked in the locations "
        "`skills` names in registry.yaml: plugins/*/skills/; create one with `skillreg new NAME`\n"))
    assert not (tmp_path / "site").exists()


def test_two_plugins_with_one_skill_name_publish_both_the_first_keeping_the_slug(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"plugins/zeta/skills/pdf": "pdf"})
    write_tree(repo / "plugins/alpha/skills/pdf", {"SKILL.md": skill_md("pdf", "2.0.0")})
    commit(repo, "a second pdf", "2026-01-02T00:00:00Z")
    out = tmp_path / "site"
    result = run_build(repo, out)
    assert result.published == ("alpha-pdf", "pdf")  # zeta's came first: it keeps `pdf`, although `alpha` sorts first
    assert [d.code for d in result.report.diagnostics] == ["SK601"]  # a warning: both publish
    assert detail(out, "pdf")["provenance"]["source_path"] == "plugins/zeta/skills/pdf"  # type: ignore[index]
    assert detail(out, "alpha-pdf")["version"] == "2.0.0"
    assert [v["version"] for v in versions(out, "alpha-pdf")["versions"]] == ["2.0.0"]  # its own history
    # a third `pdf` in a plugin that sorts before both takes neither slug
    write_tree(repo / "plugins/aaa/skills/pdf", {"SKILL.md": skill_md("pdf", "3.0.0")})
    commit(repo, "a third pdf", "2026-01-03T00:00:00Z")
    again = run_build(repo, out)
    assert again.published == ("aaa-pdf", "alpha-pdf", "pdf")
    assert detail(out, "alpha-pdf")["version"] == "2.0.0" and detail(out, "pdf")["version"] == "1.0.0"
    fresh = tmp_path / "fresh"
    run_build(repo, fresh)
    assert all_files(out) == all_files(fresh)  # no state file: a cold build of the commit gives the same bytes


def test_a_name_that_is_not_a_slug_publishes_under_a_derived_one_beside_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an agents-compatible profile publishes (names with `_` or capitals, a name that is not its folder's):
    here the two rules are made warnings, as such a profile makes them."""
    for code in ("SK104", "SK106"):
        monkeypatch.setitem(RULES, code, dataclasses.replace(RULES[code], severity=Severity.WARNING))
    repo = repository(tmp_path / "repo", {"skills/New_Bad_Skill": "New_Bad_Skill", "skills/pdf-v2": "pdf",
                                          "skills/plain": "plain"})
    out = tmp_path / "site"
    result = run_build(repo, out)
    assert result.published == ("new-bad-skill", "pdf", "plain")
    index = {e["name"]: e for e in json.loads((out / "api/v1/index.json").read_text())["skills"]}
    assert index["new-bad-skill"]["declared_name"] == "New_Bad_Skill"
    assert "declared_name" not in index["pdf"] and "declared_name" not in index["plain"]
    assert detail(out, "new-bad-skill")["declared_name"] == "New_Bad_Skill"
    assert [v["status"] for v in versions(out, "pdf")["versions"]] == ["available"]
    assert sorted(p.name for p in (out / "api/v1/skills").iterdir() if p.suffix == ".json") == [
        "new-bad-skill.json", "pdf.json", "plain.json"]  # nothing left of the first guesses (folder names)
    fresh = tmp_path / "fresh"
    run_build(repo, fresh)
    assert all_files(out) == all_files(fresh)


def test_a_skill_moved_unchanged_keeps_its_slug_and_versions(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"skills/pdf": "pdf"})
    md = repo / "skills/pdf/SKILL.md"
    md.write_text(skill_md("pdf", "1.1.0"))
    commit(repo, "1.1.0", "2026-01-02T00:00:00Z")
    (repo / "plugins/docs/skills").mkdir(parents=True)
    shutil.move(repo / "skills/pdf", repo / "plugins/docs/skills/pdf")
    commit(repo, "moved", "2026-01-03T00:00:00Z")
    out = tmp_path / "site"
    result = run_build(repo, out)
    assert result.published == ("pdf",) and result.retired == ()
    assert [v["version"] for v in versions(out, "pdf")["versions"]] == ["1.1.0", "1.0.0"]
    assert detail(out, "pdf")["provenance"]["created"] == "2026-01-01T00:00:00Z"  # type: ignore[index]


def test_a_skill_deleted_from_a_plugin_keeps_its_versions(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"plugins/docs/skills/pdf": "pdf", "plugins/docs/skills/docx": "docx"},
                      "title: T\nskills: [plugins/*/skills]\n")
    shutil.rmtree(repo / "plugins/docs/skills/docx")
    commit(repo, "docx retired", "2026-01-02T00:00:00Z")
    result = run_build(repo, tmp_path / "site")
    assert result.published == ("pdf",) and result.retired == ("docx",)
    assert [v["version"] for v in versions(tmp_path / "site", "docx")["versions"]] == ["1.0.0"]


def test_a_skill_moved_and_changed_in_one_commit_is_a_new_skill_and_the_old_slug_stays_with_the_old(
        tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo", {"skills/pdf": "pdf"})
    (repo / "plugins/docs/skills").mkdir(parents=True)
    shutil.move(repo / "skills/pdf", repo / "plugins/docs/skills/pdf")
    (repo / "plugins/docs/skills/pdf/SKILL.md").write_text(skill_md("pdf", "2.0.0"))
    commit(repo, "moved and changed", "2026-01-02T00:00:00Z")
    out = tmp_path / "site"
    result = run_build(repo, out)
    assert result.published == ("docs-pdf",) and result.retired == ("pdf",)
    assert [v["version"] for v in versions(out, "pdf")["versions"]] == ["1.0.0"]
    assert [v["version"] for v in versions(out, "docs-pdf")["versions"]] == ["2.0.0"]
