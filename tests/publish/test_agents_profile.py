"""The `agents` profile publishes what Claude Code, Codex and Gemini CLI load: a generated collection written the
way real repositories are (flow-style lists, metadata that is not text, Claude Code's fields, names that are not
their folders') builds whole, each skill saying in its documents how it departs from the open standard; `spec`
leaves the same skills out, and the build's summary says how many and why in a line each."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from helpers import write_tree

from builder.cli.app import cli
from builder.publish.schemas import load_schema

COUNT = 12


def generated(i: int) -> str:
    """One skill of a generated collection, as a converter from another format writes it."""
    return (f"---\nname: tool-{i:02d}\ndescription: Runs tool {i} when the user asks for it.\n"
            f"argument-hint: \"[file]\"\nmodel: sonnet\ndisable-model-invocation: {'true' if i % 2 else 'false'}\n"
            f"arguments: [file, mode]\nshell: bash\n"
            f"metadata:\n  tags: [generated, tool-{i}]\n  version: {i}.0\n  updated: 2025-0{1 + i % 9}-01\n"
            f"---\n# Tool {i}\n\nRead [the notes](${{CLAUDE_SKILL_DIR}}/references/notes.md) first.\n")


@pytest.fixture
def collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    files: dict[str, str | bytes] = {"registry.yaml": "title: Generated\nprofile: agents\n"}
    for i in range(COUNT):
        files[f"skills/tool-{i:02d}/SKILL.md"] = generated(i)
        files[f"skills/tool-{i:02d}/references/notes.md"] = "Notes.\n"
    files["skills/odd-name/SKILL.md"] = ("---\nname: Odd_Name_Skill\ndescription: Has a name agents accept.\n---\n"
                                         "See [the shared notes](../tool-00/references/notes.md).\n")
    files["skills/plain/SKILL.md"] = "---\nname: plain\ndescription: Meets the standard. Use when asked.\n---\nDo it.\n"
    root = write_tree(tmp_path / "repo", files)
    monkeypatch.chdir(root)
    return root


def build(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["build", "--out", "site", "--no-site", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def document(root: Path, path: str) -> dict[str, object]:
    return json.loads((root / "site" / path).read_text(encoding="utf-8"))


def test_a_generated_collection_with_list_metadata_and_flow_yaml_publishes_under_agents(collection: Path) -> None:
    code, output = build()
    assert code == 0, output
    lines = output.splitlines()
    assert "warning SK113" not in output  # counted, not listed: `validate` lists them
    assert lines[-2:] == [
        f"Published with warnings: {COUNT + 1} skills of {COUNT + 2} (SK013 in {COUNT}, SK113 in {COUNT}, "
        "SK104 in 1, SK106 in 1, SK405 in 1); `skillreg validate` or --verbose shows them",
        f"Built {COUNT + 2} skills into site/ (not a git repository: no provenance) ({COUNT + 2} written, 0 unchanged)",
    ]
    index = document(collection, "api/v1/index.json")
    jsonschema.validate(index, load_schema("index"))
    rows = {row["name"]: row for row in index["skills"]}  # type: ignore[index]
    assert rows["tool-03"]["tags"] == ["generated", "tool-3"] and rows["tool-03"]["meets_standard"] is False
    assert rows["plain"]["meets_standard"] is True
    detail = document(collection, "api/v1/skills/tool-03.json")
    jsonschema.validate(detail, load_schema("detail"))
    assert detail["frontmatter"]["metadata"] == {"tags": ["generated", "tool-3"], "version": 3.0,  # type: ignore[index]
                                                 "updated": "2025-04-01"}
    assert detail["frontmatter"]["arguments"] == ["file", "mode"]  # type: ignore[index]
    assert detail["fields_outside_standard"] == ["argument-hint", "arguments", "disable-model-invocation", "model",
                                                 "shell"]
    assert [(f["code"], f["file"], f["line"], f["source"]) for f in detail["findings"]] == [  # type: ignore[union-attr]
        ("SK013", "SKILL.md", 7, "standard"), ("SK113", "SKILL.md", 10, "standard"),
        ("SK013", "SKILL.md", 10, "standard"), ("SK113", "SKILL.md", 11, "standard"),
        ("SK113", "SKILL.md", 12, "standard"),
    ]
    odd = document(collection, "api/v1/skills/odd-name-skill.json")  # the slug derived from its own name
    assert (odd["name"], odd["declared_name"]) == ("odd-name-skill", "Odd_Name_Skill")
    assert [f["code"] for f in odd["findings"]] == ["SK104", "SK106", "SK405"]  # type: ignore[union-attr]
    assert "it will not work once the skill is installed" in odd["findings"][2]["message"]  # type: ignore[index]
    plain = document(collection, "api/v1/skills/plain.json")
    assert (plain["meets_standard"], plain["findings"], plain["fields_outside_standard"]) == (True, [], [])


def test_the_same_collection_under_spec_is_left_out_with_a_count_and_a_few_names(collection: Path) -> None:
    code, output = build("--profile", "spec")
    assert code == 1 and not (collection / "site").exists()
    code, output = build("--profile", "spec", "--keep-going")
    assert code == 0
    left = [line for line in output.splitlines() if line.startswith("Left out")]
    assert left == [f"Left out {COUNT + 1} invalid skills: skills/odd-name, skills/tool-00, skills/tool-01, skills/tool-02, skills/tool-03 and "
                    f"{COUNT - 4} more (--verbose lists them) (errors: SK013 in {COUNT}, SK113 in {COUNT}, "
                    f"SK120 in {COUNT}, SK404 in {COUNT}, SK104 in 1 and 2 more rules)"]
    # A rule a skill breaks more than three times is one line with a count.
    assert "(and 4 more like it in skill `skills/tool-00`; --verbose shows every one)" in output
    code, verbose = build("--profile", "spec", "--keep-going", "--verbose")
    assert f"tool-{COUNT - 1:02d}" in [line for line in verbose.splitlines() if line.startswith("Left out")][0]
    assert "more like it" not in verbose
    assert [row["name"] for row in document(collection, "api/v1/index.json")["skills"]] == ["plain"]  # type: ignore


def test_claude_codes_fields_are_accepted_and_type_checked(collection: Path) -> None:
    write_tree(collection, {"skills/typed/SKILL.md": (
        "---\nname: typed\ndescription: Has a wrong type.\ndisable-model-invocation: \"yes\"\nshell: zsh\n"
        "effort: high\ncontext: fork\nagent: Explore\nbackground: false\ndisallowed-tools: [Bash]\n"
        "user-invocable: false\npaths: \"src/**\"\nhooks: {}\nwhen_to_use: When asked.\n---\nDo it.\n")})
    result = CliRunner().invoke(cli, ["validate", "skills/typed"])
    errors = [line for line in result.output.splitlines() if " error " in line]
    assert errors == [
        "skills/typed/SKILL.md:4: error SK122 `disable-model-invocation` must be true or false, got a string ('yes')",
        "skills/typed/SKILL.md:5: error SK122 `shell` must be `bash` or `powershell`, got a string ('zsh')",
    ]
    assert "SK120" not in result.output


def test_links_under_agents_say_they_break_once_installed_and_spec_keeps_its_errors(collection: Path) -> None:
    write_tree(collection, {"skills/links/SKILL.md": (
        "---\nname: links\ndescription: Links around.\n---\n[a](${CLAUDE_SKILL_DIR}/scripts/run.py) "
        "[b](${CLAUDE_SKILL_DIR}/missing.md) [c](../plain/SKILL.md)\n"), "skills/links/scripts/run.py": "print(1)\n"})
    agents = CliRunner().invoke(cli, ["validate", "skills/links"]).output.splitlines()
    assert agents[0:4:2] == [
        "skills/links/SKILL.md:5:41: warning SK404 link target `${CLAUDE_SKILL_DIR}/missing.md` does not exist in the "
        "skill; it will not work once the skill is installed",
        "skills/links/SKILL.md:5:77: warning SK405 link `../plain/SKILL.md` leaves the skill folder; it will not work "
        "once the skill is installed",
    ]
    spec = CliRunner().invoke(cli, ["validate", "--profile", "spec", "skills/links"]).output
    assert "error SK404 link target `${CLAUDE_SKILL_DIR}/scripts/run.py` does not exist in the skill\n" in spec
    assert "error SK405 link `../plain/SKILL.md` leaves the skill folder\n" in spec


def test_a_known_error_leaves_its_skill_out_without_stopping_the_build(collection: Path) -> None:
    write_tree(collection, {"skills/long/SKILL.md": f"---\nname: long\ndescription: {'x' * 1100}\n---\nDo it.\n"})
    assert build()[0] == 1  # SK109: Codex refuses a description over 1,024 characters
    assert CliRunner().invoke(cli, ["baseline"]).exit_code == 0
    code, output = build()
    assert code == 0 and "Left out 1 invalid skill: skills/long (errors: SK109 in 1; 1 of them with errors the baseline " \
                         "holds)" in output
    write_tree(collection, {"skills/longer/SKILL.md": f"---\nname: longer\ndescription: {'y' * 1100}\n---\nDo it.\n"})
    code, output = build()
    assert code == 1 and "skills/longer/SKILL.md:3: error SK109" in output  # a new error still stops it


def test_tags_written_as_a_list_are_the_tags_and_keep_the_tag_policy(collection: Path) -> None:
    (collection / "registry.yaml").write_text("title: T\nprofile: agents\npolicy: {tags: true}\n", encoding="utf-8")
    write_tree(collection, {"skills/tagged/SKILL.md": "---\nname: tagged\ndescription: Tagged.\nmetadata:\n"
                                                      "  tags: [csv, Big Data]\n---\nDo it.\n"})
    result = CliRunner().invoke(cli, ["validate", "skills/tagged"])
    assert [line.split(": ", 1)[1] for line in result.output.splitlines() if line.startswith("skills/")] == [
        "warning SK113 `metadata.tags` must be a string, got a list",
        "error SK303 tag 'Big Data' is not a lowercase slug (registry policy `tags`, registry.yaml)",
        "warning SK013 the frontmatter uses a flow-style list `[...]`",
    ]
