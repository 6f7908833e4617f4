"""``skillreg new``: a scaffold that fails only on its empty description, passes once described, and refuses bad
names and template text as the description."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from helpers import write_tree

from builder.cli.app import cli

REGISTRY_YAML = """\
title: Test registry
policy: {categories: true, placeholders: true}
categories:
  - slug: data
    title: Data
  - slug: testing
    title: Testing
"""
DESCRIPTION = "Fills PDF forms from a CSV file. Use when someone needs many PDFs filled from one table."


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_tree(tmp_path, {"registry.yaml": REGISTRY_YAML})
    monkeypatch.chdir(tmp_path)
    return tmp_path.resolve()


def skillreg(*args: str) -> Result:
    result = CliRunner().invoke(cli, ["--config", "registry.yaml", *args], prog_name="skillreg")
    assert "Traceback" not in result.output
    assert result.exception is None if result.exit_code == 0 else isinstance(result.exception, SystemExit)
    return result


def tree(root: Path) -> list[tuple[str, bytes]]:
    return sorted((p.relative_to(root).as_posix(), p.read_bytes() if p.is_file() else b"") for p in root.rglob("*"))


def test_new_creates_the_folder(registry: Path) -> None:
    result = skillreg("new", "pdf-tools")
    folder = registry / "skills" / "pdf-tools"
    assert (result.exit_code, result.stdout) == (0, (
        f"Created {folder}/SKILL.md\n"
        f"Edit it, then run: skillreg validate {folder}\n"))
    assert [p for p, _ in tree(folder)] == ["SKILL.md", "references", "scripts"]
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    assert text.startswith("---\nname: pdf-tools\n"
                           'description: ""  # say what this skill does and when an agent should use it\n')
    assert "`scripts/`" in text and "`references/`" in text  # the empty folders are explained in the body


@pytest.mark.parametrize("registry_yaml", [REGISTRY_YAML, "title: No policy\n"])
def test_the_scaffold_as_written_fails_validation_under_any_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   registry_yaml: str) -> None:
    write_tree(tmp_path, {"registry.yaml": registry_yaml})
    monkeypatch.chdir(tmp_path)
    skillreg("new", "pdf-tools")
    for profile in ("spec", "claude-code", "agents"):
        result = skillreg("validate", "--profile", profile, "skills/pdf-tools")
        assert result.exit_code == 1
        assert result.stdout.startswith("skills/pdf-tools/SKILL.md:3: error SK108 `description` must be a "
                                        "non-empty string, got a string ('')\n")


@pytest.mark.parametrize("description", ["TODO", "TODO: later", "TBD", "FIXME describe it", "Replace with text"])
def test_template_text_as_the_description_is_refused_and_nothing_is_written(registry: Path, description: str) -> None:
    result = skillreg("new", "pdf-tools", "--description", description)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --description: ")
    assert "is template text (SK202)" in result.stderr
    assert not (registry / "skills").exists()


def test_the_empty_description_fails_validation(registry: Path) -> None:
    skillreg("new", "pdf-tools")
    result = skillreg("validate", "skills/pdf-tools")
    assert (result.exit_code, result.stdout) == (1, (
        "skills/pdf-tools/SKILL.md:3: error SK108 `description` must be a non-empty string, got a string ('')\n"
        "    hint: Write a value after `description:` as a quoted string, or delete the line.\n"
        "skills/pdf-tools/SKILL.md:5: warning SK305 `metadata.category` is missing "
        "(registry policy `categories`, registry.yaml)\n"
        "    hint: Add `category:` under `metadata:` so the skill is listed in a category.\n"
        "1 error, 1 warning in 1 of 1 skill\n"))


def test_with_a_description_it_passes(registry: Path) -> None:
    assert skillreg("new", "pdf-tools", "--description", DESCRIPTION).exit_code == 0
    result = skillreg("validate", "skills/pdf-tools")
    assert result.exit_code == 0
    assert result.stdout.endswith("0 errors, 1 warning in 1 of 1 skill\n")  # SK305: no category chosen yet


def test_with_description_and_category_it_passes_strict_under_every_profile(registry: Path) -> None:
    assert skillreg("new", "pdf-tools", "--description", DESCRIPTION, "--category", "data").exit_code == 0
    for profile in ("spec", "claude-code", "lenient"):
        result = skillreg("validate", "--strict", "--profile", profile, "skills/pdf-tools")
        assert (result.exit_code, result.stdout) == (0, "The skill is valid.\n")


@pytest.mark.parametrize("description", [
    'Say "hi": then \\ back # not a comment',
    "Two lines.\nThe second one.",
    "Tab\there, unicode café, emoji 🙂, colon: end",
    "  leading and trailing blanks  ",
])
def test_the_description_is_written_exactly(registry: Path, description: str) -> None:
    assert skillreg("new", "pdf-tools", "--description", description).exit_code == 0
    text = (registry / "skills" / "pdf-tools" / "SKILL.md").read_text(encoding="utf-8")
    assert yaml.safe_load(text.split("---\n")[1])["description"] == description


def test_refuses_an_existing_folder_and_leaves_it_alone(registry: Path) -> None:
    write_tree(registry, {"skills/pdf-tools/SKILL.md": "mine\n"})
    before = tree(registry)
    result = skillreg("new", "pdf-tools", "--description", DESCRIPTION)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"Error: {registry}/skills/pdf-tools: already exists; pick another name or edit that skill\n")
    assert tree(registry) == before


def test_refuses_a_dangling_symlink_in_the_way(registry: Path) -> None:
    (registry / "skills").mkdir()
    (registry / "skills" / "pdf-tools").symlink_to(registry / "nowhere")
    result = skillreg("new", "pdf-tools")
    assert (result.exit_code, result.stderr) == (
        2, f"Error: {registry}/skills/pdf-tools: already exists; pick another name or edit that skill\n")
    assert not (registry / "nowhere").exists()


@pytest.mark.parametrize(("name", "message"), [
    ("", "SK102: `name` must be a non-empty string"),
    ("PDF-Tools", "SK104: `name` 'PDF-Tools' has characters outside a-z, 0-9 and '-': 'D' 'F' 'P' 'T'. "
                  "Did you mean `pdf-tools`?"),
    ("My_Skill", "SK104: `name` 'My_Skill' has characters outside a-z, 0-9 and '-': 'M' 'S' '_'. "
                 "Did you mean `my-skill`?"),
    ("pdf_tools", "SK104: `name` 'pdf_tools' has characters outside a-z, 0-9 and '-': '_'. Did you mean `pdf-tools`?"),
    ("café", "SK104: `name` 'café' has characters outside a-z, 0-9 and '-': 'é'. Did you mean `cafe`?"),
    ("../evil", "SK104: `name` '../evil' has characters outside a-z, 0-9 and '-': '.' '/'. Did you mean `evil`?"),
    ("a\nb", "SK104: `name` 'a\\nb' has characters outside a-z, 0-9 and '-': '\\n'. Did you mean `a-b`?"),
    ("_", "SK104: `name` '_' has characters outside a-z, 0-9 and '-': '_'"),  # nothing to suggest
    ("-pdf", "SK105: `name` '-pdf' starts or ends with a hyphen or contains `--`"),
    ("pdf--tools", "SK105: `name` 'pdf--tools' starts or ends with a hyphen or contains `--`"),
    ("a" * 65, "SK103: `name` is 65 characters; the limit is 64"),
    ("my-skill-name", "SK201: `name` is still the template placeholder `my-skill-name`"),
    ("api", "SK603: skill name `api` is reserved for the registry's own pages"),
    ("search", "SK603: skill name `search` is reserved for the registry's own pages"),
])
def test_refuses_invalid_names_with_the_rule(registry: Path, name: str, message: str) -> None:
    result = skillreg("new", "--description", DESCRIPTION, "--", name)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {message}\n")
    assert tree(registry) == [("registry.yaml", REGISTRY_YAML.encode())]


@pytest.mark.parametrize(("category", "message"), [
    ("dta", "Error: SK301: unknown category `dta`. Did you mean `data`? Categories: data, testing.\n"),
    ("Data", "Error: SK301: unknown category `Data`. Did you mean `data`? Categories: data, testing.\n"),
    ("TESTING", "Error: SK301: unknown category `TESTING`. Did you mean `testing`? Categories: data, testing.\n"),
    ("finance", "Error: SK301: unknown category `finance`. Categories: data, testing.\n"),
])
def test_refuses_an_unknown_category_suggesting_the_closest(registry: Path, category: str, message: str) -> None:
    result = skillreg("new", "pdf-tools", "--category", category)
    assert (result.exit_code, result.stderr) == (2, message)
    assert not (registry / "skills").exists()


def test_validate_suggests_the_same_category_as_new(registry: Path) -> None:
    write_tree(registry, {"skills/pdf-tools/SKILL.md": (
        f"---\nname: pdf-tools\ndescription: {DESCRIPTION}\nmetadata:\n  category: Data\n---\n# PDF tools\n")})
    result = skillreg("validate", "skills/pdf-tools")
    assert (result.exit_code, result.stdout) == (1, (
        "skills/pdf-tools/SKILL.md:5: error SK301 unknown category `Data` (registry policy `categories`, "
        "registry.yaml)\n"
        "    hint: Did you mean `data`? Categories: data, testing.\n"
        "1 error, 0 warnings in 1 of 1 skill\n"))


def test_a_name_of_64_characters_is_accepted(registry: Path) -> None:
    name = "a" * 64
    assert skillreg("new", name, "--description", DESCRIPTION, "--category", "data").exit_code == 0
    assert skillreg("validate", "--strict", f"skills/{name}").exit_code == 0
