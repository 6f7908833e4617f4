"""Discovery: which folders of a repository are skills, in every layout people use, and what it refuses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from builder.core.config import load_config
from builder.core.discovery import discover, discover_paths, group_of, registry_skills
from builder.core.errors import ConfigError, UsageError
from builder.ops.layout import skill_locations


def skill(root: Path, path: str, name: str | None = None) -> Path:
    folder = root / path
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name or folder.name}\ndescription: Does {folder.name}.\n---\n"
                                     f"Body.\n", encoding="utf-8")
    return folder


def paths(root: Path, locations: list[str] | None = None) -> list[str]:
    return [s.path for s in discover(root, locations).skills]


def test_plugin_layout_finds_each_plugins_skills_with_the_plugin_as_group(tmp_path: Path) -> None:
    skill(tmp_path, "plugins/docs/skills/pdf")
    skill(tmp_path, "plugins/docs/skills/docx")
    skill(tmp_path, "plugins/ops/skills/pdf")
    (tmp_path / "plugins/docs/.claude-plugin").mkdir(parents=True)
    (tmp_path / "plugins/docs/.claude-plugin/plugin.json").write_text("{}")
    found = discover(tmp_path)
    assert [(s.path, s.group) for s in found.skills] == [
        ("plugins/docs/skills/docx", "plugins/docs"), ("plugins/docs/skills/pdf", "plugins/docs"),
        ("plugins/ops/skills/pdf", "plugins/ops")]
    assert found.skills[0].folder == tmp_path.resolve() / "plugins/docs/skills/docx"
    assert not found.configured and "plugins/*/skills/" in found.searched


def test_category_folders_and_several_top_level_folders(tmp_path: Path) -> None:
    skill(tmp_path, "engineering/skills/review")
    skill(tmp_path, "writing/skills/notes")
    skill(tmp_path, "skills/pdf")
    skill(tmp_path, ".claude/skills/local")
    assert [(s.path, s.group) for s in discover(tmp_path).skills] == [
        (".claude/skills/local", None), ("engineering/skills/review", "engineering"), ("skills/pdf", None),
        ("writing/skills/notes", "writing")]


def test_dot_folders_below_a_skills_folder_are_searched(tmp_path: Path) -> None:
    skill(tmp_path, "skills/.curated/pdf")
    skill(tmp_path, "skills/.system/creator")
    skill(tmp_path, "skills/.experimental/pdf")
    expected = [("skills/.curated/pdf", "skills/.curated"), ("skills/.experimental/pdf", "skills/.experimental"),
                ("skills/.system/creator", "skills/.system")]
    assert [(s.path, s.group) for s in discover(tmp_path).skills] == expected
    # `skills_dir: skills` finds them too (it used to build none and exit 0)
    assert [(s.path, s.group) for s in discover(tmp_path, ["skills"]).skills] == expected


def test_skill_folders_at_the_top_of_the_repository(tmp_path: Path) -> None:
    skill(tmp_path, "pdf")
    skill(tmp_path, "docx")
    (tmp_path / "README.md").write_text("# skills\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "tool.py").write_text("")
    assert paths(tmp_path) == ["docx", "pdf"]


def test_a_skill_md_at_the_top_is_one_skill_when_nothing_else_is_found(tmp_path: Path) -> None:
    skill(tmp_path, ".")
    skill(tmp_path, "references/inner")
    found = discover(tmp_path)
    assert [(s.path, s.group) for s in found.skills] == [(".", None)]


def test_the_search_of_last_resort_goes_down_a_bounded_depth(tmp_path: Path) -> None:
    skill(tmp_path, "a/b/c/deep")
    skill(tmp_path, "a/b/c/d/e/f/g/h/too-deep")
    found = discover(tmp_path)
    assert [(s.path, s.group) for s in found.skills] == [("a/b/c/deep", "a/b/c")]
    assert any("levels down" in where for where in found.searched)


def test_never_in_git_node_modules_or_a_built_site(tmp_path: Path) -> None:
    skill(tmp_path, "skills/real")
    skill(tmp_path, "node_modules/pkg/skills/vendored")
    skill(tmp_path, "x/node_modules/pkg")
    skill(tmp_path, ".git/skills/inside-git")
    site = tmp_path / "site"
    skill(site, ".well-known/skills/real")
    skill(site, "skills/copy")
    (site / ".nojekyll").write_text("")
    assert paths(tmp_path) == ["skills/real"]
    assert paths(tmp_path, ["**/skills"]) == ["skills/real"]


def test_a_skill_md_inside_a_skills_folder_is_a_file_of_that_skill(tmp_path: Path) -> None:
    skill(tmp_path, "skills/pdf")
    skill(tmp_path, "skills/pdf/references/example")
    skill(tmp_path, "skills/pdf/templates/skills/nested")
    assert paths(tmp_path) == ["skills/pdf"]
    assert paths(tmp_path, ["skills", "skills/pdf/references"]) == ["skills/pdf"]


def test_a_linked_copy_inside_counts_once_and_a_link_outside_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    skill(repo, "skills/pdf")
    skill(tmp_path, "elsewhere/secret")
    (repo / ".claude/skills").mkdir(parents=True)
    os.symlink("../../skills/pdf", repo / ".claude/skills/pdf")
    os.symlink(tmp_path / "elsewhere/secret", repo / ".claude/skills/secret")
    os.symlink(tmp_path / "elsewhere", repo / "skills/outside")
    found = discover(repo)
    assert [s.path for s in found.skills] == ["skills/pdf"]
    assert [str(r) for r in found.refused] == [
        f".claude/skills/secret: a symbolic link to {str(tmp_path / 'elsewhere/secret')!r}, outside the "
        "repository; links are never followed out of it",
        f"skills/outside: a symbolic link to {str(tmp_path / 'elsewhere')!r}, outside the repository; links are "
        "never followed out of it"]


def test_skills_beside_the_usual_folders_are_found_with_them(tmp_path: Path) -> None:
    skill(tmp_path, "skills/pdf")
    skill(tmp_path, "composio-skills/slack")
    skill(tmp_path, "external_plugins/linear/skills/issues")
    skill(tmp_path, "external_plugins/linear/skills/issues/references/example")
    found = discover(tmp_path)
    assert [(s.path, s.group) for s in found.skills] == [
        ("composio-skills/slack", "composio-skills"), ("external_plugins/linear/skills/issues",
                                                       "external_plugins/linear"), ("skills/pdf", None)]
    assert {"composio-skills", "external_plugins/linear/skills", "skills"} <= set(found.scope)


def test_a_linked_skill_md_is_the_skill_it_leads_to_counted_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    skill(repo, "engineering/review")
    skill(repo, "engineering/lint")
    (repo / "agents").mkdir(parents=True)
    (repo / "agents/README.md").write_text("# Personas\n")
    skill(tmp_path, "elsewhere/secret")
    for name, target in (("review", "../../../engineering/review/SKILL.md"), ("README", "../../../agents/README.md"),
                         ("secret", str(tmp_path / "elsewhere/secret/SKILL.md")),
                         ("gone", "../../../engineering/gone/SKILL.md")):
        (repo / ".gemini/skills" / name).mkdir(parents=True)
        os.symlink(target, repo / ".gemini/skills" / name / "SKILL.md")
    found = discover(repo)
    assert [(s.path, s.folder) for s in found.skills] == [
        (".gemini/skills/secret", repo.resolve() / ".gemini/skills/secret"),
        ("engineering/lint", repo.resolve() / "engineering/lint"),
        ("engineering/review", repo.resolve() / "engineering/review")]
    assert [str(r) for r in found.refused] == [
        ".gemini/skills/README: its SKILL.md is a symbolic link to '../../../agents/README.md', which is not a "
        "skill's SKILL.md",
        ".gemini/skills/gone: its SKILL.md is a symbolic link to '../../../engineering/gone/SKILL.md', which leads "
        "nowhere"]
    # one leading out of the repository stays where it is, for the loader's safety error (SK501)
    assert discover(repo, [".gemini/skills/secret"]).skills[0].path == ".gemini/skills/secret"


def test_a_folder_whose_skill_md_is_a_file_is_the_skill_whatever_a_lowercase_link_beside_it(tmp_path: Path) -> None:
    """Only a SKILL.md that is a link leads elsewhere; a lowercase ``skill.md`` link beside a real one does not."""
    skill(tmp_path, "skills/review")
    skill(tmp_path, "skills/lint")
    os.symlink("../review/SKILL.md", tmp_path / "skills/lint/skill.md")
    (tmp_path / "skills/docs").mkdir()
    os.symlink("../review/SKILL.md", tmp_path / "skills/docs/skill.md")  # the only skill file: it leads there
    assert paths(tmp_path) == ["skills/lint", "skills/review"]


def test_a_linked_skill_whose_real_folder_is_not_searched_counts_by_its_real_path(tmp_path: Path) -> None:
    skill(tmp_path, "src/prompts/pdf")
    (tmp_path / ".claude/skills").mkdir(parents=True)
    os.symlink("../../src/prompts/pdf", tmp_path / ".claude/skills/pdf")
    found = discover(tmp_path)
    assert [(s.path, s.folder) for s in found.skills] == [("src/prompts/pdf", tmp_path.resolve() / "src/prompts/pdf")]


def test_a_repository_with_no_skill_is_an_error_that_says_where_it_looked(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# docs\n")
    found = discover(tmp_path)
    assert found.skills == ()
    with pytest.raises(UsageError) as caught:
        found.require()
    message = str(caught.value)
    assert message.startswith(f"no skill found in {tmp_path.resolve()}: a skill is a folder holding SKILL.md; "
                              "looked in the folders agents read: skills/, .agents/skills/, .claude/skills/")
    assert "plugins/*/skills/, */skills/, skill folders at the top, every other folder 6 levels down" in message


def test_configured_globs_name_the_folders_to_search(tmp_path: Path) -> None:
    skill(tmp_path, "plugins/docs/skills/pdf")
    skill(tmp_path, "plugins/ops/skills/deploy")
    skill(tmp_path, "preview/beta")
    skill(tmp_path, "skills/ignored")
    found = discover(tmp_path, ["plugins/*/skills", "preview"])
    assert [(s.path, s.group) for s in found.skills] == [
        ("plugins/docs/skills/pdf", "plugins/docs"), ("plugins/ops/skills/deploy", "plugins/ops"),
        ("preview/beta", "preview")]
    assert found.configured and found.searched == ("plugins/*/skills/", "preview/")
    with pytest.raises(UsageError, match=r"looked in the locations `skills` names in registry.yaml: nowhere/; create one with `skillreg new NAME`$"):
        discover(tmp_path, ["nowhere"]).require()


def test_a_configured_folder_reports_a_sub_folder_without_skill_md_as_a_skill(tmp_path: Path) -> None:
    skill(tmp_path, "skills/good")
    (tmp_path / "skills/misnamed").mkdir()
    (tmp_path / "skills/misnamed/Skill.markdown").write_text("---\nname: misnamed\n---\n")
    (tmp_path / "skills/empty").mkdir()
    (tmp_path / "skills/_drafts/x").mkdir(parents=True)
    (tmp_path / "skills/_drafts/x/notes.md").write_text("")
    assert paths(tmp_path, ["skills"]) == ["skills/good", "skills/misnamed"]
    # the usual folders only report what holds a SKILL.md beyond the top skills/ folder
    (tmp_path / "tools/skills/helper").mkdir(parents=True)
    (tmp_path / "tools/skills/helper/helper.py").write_text("")
    assert paths(tmp_path) == ["skills/good", "skills/misnamed"]


def test_a_plugins_folder_as_skills_dir_descends_into_the_plugins(tmp_path: Path) -> None:
    skill(tmp_path, "plugins/docs/skills/pdf")
    (tmp_path / "plugins/docs/commands").mkdir(parents=True)
    (tmp_path / "plugins/docs/commands/run.md").write_text("")
    assert paths(tmp_path, ["plugins"]) == ["plugins/docs/skills/pdf"]


def test_group_of_names_the_plugin_or_category_folder() -> None:
    assert group_of("skills/pdf") is None
    assert group_of("pdf") is None
    assert group_of(".claude/skills/pdf") is None
    assert group_of("plugins/docs/skills/pdf") == "plugins/docs"
    assert group_of("engineering/skills/pdf") == "engineering"
    assert group_of("skills/.curated/pdf") == "skills/.curated"
    assert group_of("preview/pdf") == "preview"


def test_paths_a_user_names_are_skills_or_folders_of_skills(tmp_path: Path) -> None:
    skill(tmp_path, "skills/pdf")
    skill(tmp_path, "plugins/docs/skills/docx")
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose/README.md").write_text("")
    found = discover_paths([tmp_path / "skills/pdf", tmp_path / "plugins", tmp_path / "loose"], tmp_path)
    assert [s.path for s in found.skills] == ["loose", "plugins/docs/skills/docx", "skills/pdf"]


def test_registry_yaml_skills_list_and_skills_dir(tmp_path: Path) -> None:
    skill(tmp_path, "plugins/docs/skills/pdf")
    skill(tmp_path, "skills/one")
    config_file = tmp_path / "registry.yaml"
    config_file.write_text("skills:\n  - plugins/*/skills\n  - skills\n", encoding="utf-8")
    config = load_config(config_file)
    assert config.locations == ("plugins/*/skills", "skills") and config.skills_dir == "skills"
    assert [s.path for s in registry_skills(config).skills] == ["plugins/docs/skills/pdf", "skills/one"]
    config_file.write_text("skills_dir: plugins\n", encoding="utf-8")
    assert load_config(config_file).locations == ("plugins",)
    config_file.write_text("title: x\n", encoding="utf-8")
    assert load_config(config_file).locations is None
    assert load_config(None, start=tmp_path / "skills").locations is None


@pytest.mark.parametrize(("text", "message"), [
    ("skills: [skills]\nskills_dir: skills\n", "registry.yaml:2: `skills` and `skills_dir` both say where skills "
                                               "live; keep `skills` (a list of folders) and remove `skills_dir`"),
    ("skills: skills\n", "registry.yaml:1: `skills` must be a list of folders or glob patterns relative to "
                         "registry.yaml, such as `[skills, plugins/*/skills]`, got 'skills'"),
    ("skills: []\n", "registry.yaml:1: `skills` must be a list"),
    ("skills:\n  - ../other\n", "registry.yaml:1: `skills[0]` '../other' climbs out of the repository with `..`"),
    ("skills:\n  - /abs\n", "registry.yaml:1: `skills[0]` '/abs' is an absolute path"),
    ("skills_dir: 'plugins/*'\n", "registry.yaml:1: `skills_dir` 'plugins/*' is a pattern"),
])
def test_bad_locations_are_refused_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    config_file = tmp_path / "registry.yaml"
    config_file.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(config_file)
    assert str(caught.value).startswith(f"{config_file}:{message.partition(':')[2]}")


def test_locations_give_a_short_skills_list_that_finds_the_skills_again(tmp_path: Path) -> None:
    for path in ["plugins/docs/skills/pdf", "plugins/ops/skills/deploy", "skills/.curated/x", "skills/y",
                 "engineering/skills/review", "toplevel", ".claude/skills/local"]:
        skill(tmp_path, path)
    found = discover(tmp_path)
    locations = skill_locations(found)
    assert locations == (".claude/skills", "engineering/skills", "plugins/*/skills", "skills", "toplevel")
    assert locations is not None
    assert [s.path for s in discover(tmp_path, locations).skills] == [s.path for s in found.skills]
