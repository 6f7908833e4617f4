"""Outside a registry (no registry.yaml in the folder or a parent), the commands that write into one refuse and
say how to get one; validating named folders keeps working anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_tree

from builder.cli.app import cli

SKILL = ("---\nname: demo\ndescription: Reads demo files when the user asks what a demo file holds.\n---\n"
         "# Demo\n\nRead the file.\n")


def no_registry(folder: Path, command: str, does: str = "writes into") -> str:
    return (f"Error: no registry.yaml in {folder} or a parent folder, and `skillreg {command}` {does} a "
            "registry; run it in a registry's checkout, pass --config FILE, or make a git repository of skills a "
            "registry with `skillreg init`\n")


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder with no registry.yaml above it, made the current folder."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert not any((parent / "registry.yaml").exists() for parent in (folder, *folder.parents))
    return folder


@pytest.mark.parametrize("args", [
    ["new", "foo"], ["new", "foo", "--category", "data"], ["import", "-"], ["build"], ["build", "--no-site"],
    ["marketplace"], ["marketplace", "--check"], ["serve", "--port", "0"],
], ids=" ".join)
def test_commands_that_write_a_registry_refuse_outside_one_and_write_nothing(elsewhere: Path,
                                                                           args: list[str]) -> None:
    result = CliRunner().invoke(cli, args, input=SKILL)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", no_registry(elsewhere, args[0]))
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("args", [["prompt"], ["prompt", "foo"]], ids=" ".join)
def test_prompt_outside_a_registry_says_where_the_skills_would_come_from(elsewhere: Path, args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", no_registry(elsewhere, "prompt", "reads the skills of"))


def test_a_named_registry_yaml_is_used_from_anywhere(elsewhere: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    registry = write_tree(tmp_path / "registry", {"registry.yaml": "title: T\n"})
    result = CliRunner().invoke(cli, ["--config", str(registry / "registry.yaml"), "new", "foo"])
    assert (result.exit_code, result.stdout.splitlines()[0]) == (0, f"Created {registry}/skills/foo/SKILL.md")
    monkeypatch.setenv("SKILLREG_CONFIG", str(registry / "registry.yaml"))
    result = CliRunner().invoke(cli, ["new", "bar"])
    assert (result.exit_code, result.stdout.splitlines()[0]) == (0, f"Created {registry}/skills/bar/SKILL.md")
    assert list(elsewhere.iterdir()) == []


def test_in_a_subfolder_of_a_registry_new_writes_into_that_registry(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    registry = write_tree(tmp_path / "registry", {"registry.yaml": "title: T\n", "docs/notes.md": "x\n"})
    monkeypatch.chdir(registry / "docs")
    result = CliRunner().invoke(cli, ["new", "foo"])
    assert (result.exit_code, result.stdout.splitlines()[0]) == (0, f"Created {registry}/skills/foo/SKILL.md")
    assert sorted(p.name for p in (registry / "docs").iterdir()) == ["notes.md"]


def test_validating_named_folders_works_outside_a_registry(elsewhere: Path) -> None:
    write_tree(elsewhere, {"work/demo/SKILL.md": SKILL})
    for args in (["work/demo"], ["work"], ["work/demo/SKILL.md"]):
        result = CliRunner().invoke(cli, ["validate", *args])
        assert (result.exit_code, result.output) == (0, "The skill is valid.\n"), args


def test_validate_without_paths_outside_a_registry_says_what_to_name(elsewhere: Path) -> None:
    result = CliRunner().invoke(cli, ["validate"])
    assert (result.exit_code, result.stderr) == (2, (
        f"Error: no registry.yaml in {elsewhere} or a parent folder, and no skill here (looked in skills/, "
        ".agents/skills/, .claude/skills/, .cursor/skills/, .gemini/skills/, .github/skills/, .opencode/skills/, "
        "plugins/*/skills/, */skills/, skill folders at the top, every other folder 6 levels down (never .git or "
        "node_modules)); name the skill folders to check (`skillreg validate PATH ...`), or run it in a "
        "registry's checkout or with --config FILE\n"))


def test_validate_without_paths_checks_a_skills_folder_here_as_before(elsewhere: Path) -> None:
    write_tree(elsewhere, {"skills/demo/SKILL.md": SKILL})
    result = CliRunner().invoke(cli, ["validate"])
    assert (result.exit_code, result.output) == (0, "The skill is valid.\n")


def test_building_a_registry_without_its_skills_folder_says_how_to_start_one(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {"registry.yaml": "title: T\n"})
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["build"])
    assert (result.exit_code, result.stderr) == (2, (
        f"Error: no skill found in {tmp_path.resolve()}: a skill is a folder holding SKILL.md; looked in the folders "
        "agents read: skills/, .agents/skills/, .claude/skills/, .cursor/skills/, .gemini/skills/, .github/skills/, "
        ".opencode/skills/, plugins/*/skills/, */skills/, skill folders at the top, every other folder 6 levels down "
        "(never .git or node_modules); create one with `skillreg new NAME`\n"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["registry.yaml"]
    write_tree(tmp_path, {"registry.yaml": "title: T\nskills_dir: skills\n"})
    result = CliRunner().invoke(cli, ["build"])
    assert (result.exit_code, result.stderr) == (2, (
        "Error: skills: no such folder, so there is no skill to build (the registry's skills go there, "
        "`skills_dir` in registry.yaml); create the first with `skillreg new NAME`\n"))
