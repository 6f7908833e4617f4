"""Registry policy versus the open standard, and the version-bump rule of `validate --changed-since`.

Semantic versions, categories, tags and template text are this registry's conventions, not the standard's:
they are checked only where registry.yaml's `policy:` switches them on, and findings say where they come from.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from helpers import REPO, write_tree
from helpers.changes import git, make_repo

from builder.cli.app import cli
from builder.core.config import Policy, load_config
from builder.core.diagnostics import POLICY_RULES, RULES
from builder.core.errors import ConfigError
from builder.publish.schemas import load_schema
from builder.validate.changes import validate_changes

SKILL = """---
name: demo
description: TODO describe it. Checks a thing when asked.
metadata:
  version: "1.0"
  category: nowhere
  tags: Not A Slug
---
# Demo

Do it.
"""
CATEGORIES = "categories:\n  - slug: data\n    title: Data\n"
ALL_ON = "policy:\n  semver: true\n  categories: true\n  tags: true\n  placeholders: true\n"


def registry(tmp_path: Path, yaml_text: str) -> Path:
    write_tree(tmp_path, {"registry.yaml": yaml_text, "skills/demo/SKILL.md": SKILL})
    return tmp_path


def validate(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--config", str(root / "registry.yaml"), "validate", *args,
                                      str(root / "skills")])
    return result.exit_code, result.output


def test_spec_without_policy_reports_only_the_standard(tmp_path: Path) -> None:
    root = registry(tmp_path, "title: T\n" + CATEGORIES)
    assert validate(root, "--profile", "spec")[0] == 0


def test_policy_switched_on_reports_each_rule_and_says_where_it_comes_from(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    root = registry(tmp_path, "title: T\n" + CATEGORIES + ALL_ON)
    monkeypatch.chdir(root)
    code, out = validate(root)
    assert code == 1
    lines = [line for line in out.splitlines() if not line.startswith("    hint:")]
    assert lines[:4] == [
        "skills/demo/SKILL.md:3: error SK202 `description` still contains template text: 'TODO' "
        "(registry policy `placeholders`, registry.yaml)",
        "skills/demo/SKILL.md:5: error SK304 `metadata.version` '1.0' is not a semantic version "
        "(registry policy `semver`, registry.yaml)",
        "skills/demo/SKILL.md:6: error SK301 unknown category `nowhere` (registry policy `categories`, registry.yaml)",
        "skills/demo/SKILL.md:7: error SK303 tag 'Not A Slug' is not a lowercase slug "
        "(registry policy `tags`, registry.yaml)",
    ]
    data = json.loads(validate(root, "--format", "json")[1])
    jsonschema.validate(data, load_schema("validate"))
    assert {d["code"]: d["source"] for d in data["diagnostics"]} == {
        "SK202": "registry policy", "SK304": "registry policy", "SK301": "registry policy",
        "SK303": "registry policy"}
    annotation = validate(root, "--format", "github")[1].splitlines()[1]
    assert annotation.startswith("::error file=skills/demo/SKILL.md,line=5,title=SK304::`metadata.version` '1.0' is "
                                 "not a semantic version (registry policy `semver`, registry.yaml) (Use MAJOR")


@pytest.mark.parametrize("key", sorted(Policy.__dataclass_fields__))
def test_each_policy_switches_on_only_its_own_rules(tmp_path: Path, key: str) -> None:
    if key == "version_bump":  # a rule of --changed-since: below
        return
    root = registry(tmp_path, f"title: T\n{CATEGORIES}policy:\n  {key}: true\n")
    data = json.loads(validate(root, "--format", "json")[1])
    codes = {d["code"] for d in data["diagnostics"]}
    assert codes and {POLICY_RULES[c] for c in codes} == {key}


def test_standard_findings_name_their_source_in_json(tmp_path: Path) -> None:
    write_tree(tmp_path, {"registry.yaml": "title: T\n",
                          "skills/demo/SKILL.md": "---\nname: demo\ndescription: x\nmodel: 4\nmetadata:\n  v: 1.10\n"
                                                  "---\n[gone](missing.md)\n"})
    data = json.loads(validate(tmp_path, "--format", "json", "--profile", "claude-code")[1])
    jsonschema.validate(data, load_schema("validate"))
    assert {d["code"]: d["source"] for d in data["diagnostics"]} == {
        "SK113": "standard", "SK122": "claude-code", "SK404": "registry"}


def test_every_rule_has_a_source_and_policy_rules_name_their_switch() -> None:
    for rule in RULES.values():
        assert rule.source in ("standard", "claude-code", "registry", "registry policy")
        assert bool(rule.policy) == (rule.source == "registry policy")
        assert not rule.policy or rule.policy in Policy.__dataclass_fields__
    assert set(POLICY_RULES.values()) == set(Policy.__dataclass_fields__)


def test_this_repository_switches_on_every_policy_it_uses() -> None:
    assert load_config(REPO / "registry.yaml").policy == Policy(True, True, True, True, True)


@pytest.mark.parametrize(("policy", "message"), [
    ("policy:\n  semver: true\n  semvar: true\n",
     "registry.yaml:4: unknown policy `semvar`; did you mean `semver`? known: semver, categories, tags, "
     "placeholders, version_bump"),
    ("policy:\n  semver: yes please\n", "registry.yaml:3: `policy.semver` must be true or false, got 'yes please'"),
    ("policy: [semver]\n", "registry.yaml:2: `policy` must be a mapping of rule sets to true or false, "
                           "e.g. `semver: true`"),
    ("policy:\n  categories: true\n", "registry.yaml:3: `policy.categories` is on but `categories` lists none; "
                                      "add the categories or switch the policy off"),
])
def test_a_bad_policy_names_registry_yaml_and_the_line(tmp_path: Path, policy: str, message: str) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text("title: T\n" + policy)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{tmp_path}/{message}"
    result = CliRunner().invoke(cli, ["--config", str(path), "validate"])
    assert (result.exit_code, result.output) == (1, f"Error: {tmp_path}/{message}\n")


# The version-bump rule, in a real git repository.

def skill_md(version: str | None, body: str = "Do the thing.\n", name: str = "csv-tool") -> str:
    meta = f"  version: \"{version}\"\n" if version is not None else ""
    return (f"---\nname: {name}\ndescription: Profiles a CSV file when the user asks.\nmetadata:\n  category: data\n"
            f"{meta}---\n# Title\n\n{body}")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_repo(tmp_path / "repo", [])
    write_tree(root / "skills", {"csv-tool/SKILL.md": skill_md("1.2.0")})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "csv-tool 1.2.0")
    git(root, "checkout", "-q", "-b", "pr")
    monkeypatch.chdir(root)
    return root


def bump_findings(repo: Path) -> list[tuple[int, str]]:
    result = validate_changes(load_config(repo / "registry.yaml"), "main")
    return [(d.line, d.message) for d in result.report.diagnostics if d.code == "SK306"]


@pytest.mark.parametrize(("version", "expected"), [
    ("1.2.1", []),
    ("2.0.0-rc.1", []),
    ("1.2.0", [(6, "csv-tool: files changed since main but metadata.version is still 1.2.0; raise it, e.g. to 1.2.1")]),
    ("1.2.0+build.7", [(6, "csv-tool: files changed since main but metadata.version is 1.2.0+build.7, the same "
                           "version as 1.2.0; raise it, e.g. to 1.2.1")]),
    ("1.1.9", [(6, "csv-tool: metadata.version went down from 1.2.0 at main to 1.1.9; versions only go up: raise it "
                   "above 1.2.0, e.g. to 1.2.1")]),
    ("1.2.0-rc.1", [(6, "csv-tool: metadata.version went down from 1.2.0 at main to 1.2.0-rc.1; versions only go "
                        "up: raise it above 1.2.0, e.g. to 1.2.1")]),
    (None, [(4, "csv-tool: files changed since main but it has no `metadata.version` (it was 1.2.0 at main); add "
                "one, e.g. `version: \"1.2.1\"` under `metadata:`")]),
])
def test_a_changed_skill_must_raise_its_version(repo: Path, version: str | None,
                                                 expected: list[tuple[int, str]]) -> None:
    (repo / "skills/csv-tool/SKILL.md").write_text(skill_md(version, "Do the thing, then check it.\n"))
    assert bump_findings(repo) == expected


def test_a_change_to_another_file_of_the_skill_counts_too(repo: Path) -> None:
    write_tree(repo / "skills/csv-tool", {"scripts/run.py": "print(1)\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add a script")
    assert [m for _, m in bump_findings(repo)] == [
        "csv-tool: files changed since main but metadata.version is still 1.2.0; raise it, e.g. to 1.2.1"]


def test_an_unchanged_or_new_skill_needs_no_bump_but_a_new_one_needs_a_version(repo: Path) -> None:
    assert bump_findings(repo) == []
    write_tree(repo / "skills", {"fresh/SKILL.md": skill_md("0.1.0", name="fresh"),
                                 "bare/SKILL.md": skill_md(None, name="bare")})
    assert bump_findings(repo) == [
        (4, "bare: is new but it has no `metadata.version`; add one, e.g. `version: \"1.0.0\"` under `metadata:`")]


def test_a_renamed_skill_compares_with_its_old_folder(repo: Path) -> None:
    git(repo, "mv", "skills/csv-tool", "skills/csv-kit")
    (repo / "skills/csv-kit/SKILL.md").write_text(skill_md("1.2.0", name="csv-kit"))
    assert [m for _, m in bump_findings(repo)] == [
        "csv-kit: files changed since main but metadata.version is still 1.2.0; raise it, e.g. to 1.2.1"]


def test_the_rule_is_off_unless_registry_yaml_switches_it_on(repo: Path) -> None:
    config = repo / "registry.yaml"
    config.write_text(config.read_text().replace("version_bump: true", "version_bump: false"))
    (repo / "skills/csv-tool/SKILL.md").write_text(skill_md("1.2.0", "Changed.\n"))
    assert bump_findings(repo) == []


def test_the_cli_fails_the_pull_request_and_shows_the_fix(repo: Path) -> None:
    (repo / "skills/csv-tool/SKILL.md").write_text(skill_md("1.2.0", "Changed.\n"))
    result = CliRunner().invoke(cli, ["validate", "--changed-since", "main"])
    assert result.exit_code == 1
    assert ("skills/csv-tool/SKILL.md:6: error SK306 csv-tool: files changed since main but metadata.version is "
            "still 1.2.0; raise it, e.g. to 1.2.1 (registry policy `version_bump`, registry.yaml)") in result.output
