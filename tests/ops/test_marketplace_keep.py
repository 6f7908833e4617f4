"""A maintainer's own marketplace file is kept: what they wrote stays byte for byte when it lists every published
skill, and is only completed (a skill added, one no longer published dropped, each change printed) otherwise."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
from click.testing import CliRunner
from helpers import write_tree
from helpers.plugins import hand_made_marketplace

from builder.cli.app import cli

SCHEMA = json.loads((Path(__file__).parent / "schemas/claude-plugin-marketplace.schema.json").read_text())
HAND_MADE = hand_made_marketplace("anthropic-agent-skills")  # reserved for a generated file; the maintainer's own stays


def skill(name: str, description: str | None = None) -> str:
    return f"---\nname: {name}\ndescription: {description or f'Does {name} when asked.'}\n---\nSteps.\n"


def repository(tmp_path: Path, document: dict = HAND_MADE, indent: int = 4,
               repository_url: str = "https://github.com/anthropics/skills") -> Path:
    text = json.dumps(document, indent=indent) + "\n"
    return write_tree(tmp_path / "repo", {
        "registry.yaml": f"title: Hand made\nrepository: {repository_url}\n", ".claude-plugin/marketplace.json": text,
        "skills/art/SKILL.md": skill("art"), "skills/pdf/SKILL.md": skill("pdf"), "skills/xlsx/SKILL.md": skill("xlsx"),
    })


def marketplace(repo: Path, *args: str) -> tuple[int, str]:
    """The exit code and standard output (warnings go to standard error: ``warnings``)."""
    return run(repo, *args)[:2]


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--config", str(repo / "registry.yaml"), "marketplace", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_kept_name_claude_code_reserves_warns_outside_anthropics_github(tmp_path: Path) -> None:
    """Claude Code's `plugin marketplace add` refuses a reserved name from any other source: the file is kept, and
    the maintainer told."""
    repo = repository(tmp_path, repository_url="https://github.com/someone/skills-fork")
    before = (repo / ".claude-plugin/marketplace.json").read_bytes()
    code, _, err = run(repo, "--check")
    assert code == 0 and err.splitlines()[0] == (
        "warning: the marketplace name 'anthropic-agent-skills' is reserved: Claude Code adds this file only from a "
        "GitHub repository of the anthropics organization, so users of this one cannot add it; rename it")
    assert (repo / ".claude-plugin/marketplace.json").read_bytes() == before


def test_a_hand_made_file_listing_every_published_skill_is_kept_byte_for_byte(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    before = (repo / ".claude-plugin/marketplace.json").read_bytes()
    assert run(repo, "--check") == (0, ".claude-plugin/marketplace.json is up to date\n", (
        "warning: 2 kept plugin(s) hold paths Claude Code loads besides their skills (./skills); they are the "
        "maintainer's, and this registry does not check them\n"))
    code, output = marketplace(repo)
    assert (code, output.splitlines()[-1]) == (0, f"Unchanged: {repo / '.claude-plugin/marketplace.json'}")
    assert (repo / ".claude-plugin/marketplace.json").read_bytes() == before


def test_it_is_completed_keeping_what_the_maintainer_wrote_and_twice_is_unchanged(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    write_tree(repo, {"skills/notes/SKILL.md": skill("notes")})
    shutil.rmtree(repo / "skills/xlsx")
    path = repo / ".claude-plugin/marketplace.json"
    code, _, output = run(repo, "--check")
    assert code == 1 and "dropped ./skills/xlsx from plugin document-skills (no longer there)" in output
    code, output = marketplace(repo)
    assert code == 0
    assert output.splitlines() == [
        "dropped ./skills/xlsx from plugin document-skills (no longer there)",
        "added plugin uncategorized (./skills) with ./notes", f"Wrote {path}"]
    document = json.loads(path.read_text())
    expected = json.loads(json.dumps(HAND_MADE))
    expected["plugins"][1]["skills"] = ["./skills/pdf"]
    expected["plugins"].append({"name": "uncategorized", "source": "./skills",
                                "description": "Skills that name no category of this registry.", "strict": False,
                                "skills": ["./notes"]})
    assert document == expected
    assert list(document) == list(HAND_MADE)  # the maintainer's key order
    assert path.read_text() == json.dumps(expected, indent=4) + "\n"  # and indentation
    # what was added is valid (the maintainer's name is one Anthropic keeps, and their extra key is theirs)
    jsonschema.validate({**document, "name": "kept", "plugins": document["plugins"][-1:]}, SCHEMA)
    written = path.read_bytes()
    code, output = marketplace(repo)
    assert (code, output) == (0, f"Unchanged: {path}\n") and path.read_bytes() == written
    assert marketplace(repo, "--check") == (0, ".claude-plugin/marketplace.json is up to date\n")


def test_a_skill_failing_validation_is_never_listed(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    write_tree(repo, {"skills/pdf/SKILL.md": "---\nname: pdf\n---\nNo description.\n",
                      "skills/broken/SKILL.md": "---\nname: Broken Name!\n---\n"})
    code, output = marketplace(repo)
    assert code == 0
    assert output.splitlines()[:2] == ["dropped ./skills/pdf from plugin example-skills (fails validation)",
                                       "dropped ./skills/pdf from plugin document-skills (fails validation)"]
    listed = [p for plugin in json.loads((repo / ".claude-plugin/marketplace.json").read_text())["plugins"]
              for p in plugin["skills"]]
    assert listed == ["./skills/art", "./skills/xlsx"]


def test_plugin_folders_without_skill_lists_are_complete_and_a_failing_skill_is_a_warning(tmp_path: Path) -> None:
    document = {"name": "workflows", "owner": {"name": "Seth"}, "plugins": [
        {"name": "agent-teams", "source": "./plugins/agent-teams", "version": "1.0.3", "category": "workflows"},
        {"name": "docs", "source": "./plugins/docs"}]}
    repo = write_tree(tmp_path / "repo", {
        "registry.yaml": "title: Plugins\n",
        ".claude-plugin/marketplace.json": json.dumps(document, indent=2),
        "plugins/agent-teams/.claude-plugin/plugin.json": '{"name": "agent-teams"}',
        "plugins/agent-teams/commands/run.md": "Run.\n",
        "plugins/agent-teams/skills/review/SKILL.md": skill("review"),
        "plugins/docs/.claude-plugin/plugin.json": '{"name": "docs"}',
        "plugins/docs/skills/pdf/SKILL.md": skill("pdf"),
        "plugins/docs/skills/bad/SKILL.md": "---\nname: bad\n---\n",
    })
    code, _, output = run(repo, "--check")
    assert code == 0, output
    assert "warning: plugin docs: plugins/docs/skills/bad fails validation, but Claude Code loads every skill of " \
           "plugins/docs/skills/" in output
    assert output.startswith("warning: 2 kept plugin(s) hold paths Claude Code loads besides their skills ("
                             "plugins/agent-teams/.claude-plugin/plugin.json, plugins/agent-teams/skills, "
                             "plugins/agent-teams/commands and 2 more); ")


def test_a_file_that_is_not_json_is_one_line(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    (repo / ".claude-plugin/marketplace.json").write_text("{\n  \"name\": \n")
    code, _, output = run(repo)
    assert code == 1 and output.startswith("Error: .claude-plugin/marketplace.json: not valid JSON (Expecting value: line 3")
    assert output.endswith("; fix it, or delete it to have one generated\n") and output.count("\n") == 1


def test_a_skill_only_a_plugin_rooted_beside_components_could_list_is_a_warning(tmp_path: Path) -> None:
    """anthropics/skills' ``template/`` sits at the top, beside ``skills/``: a plugin rooted there would load
    every skill of skills/ too, so it is not added, and the maintainer's file stays current."""
    repo = repository(tmp_path)
    write_tree(repo, {"template/SKILL.md": skill("template")})
    code, out, err = run(repo, "--check")
    assert (code, out) == (0, ".claude-plugin/marketplace.json is up to date\n")
    assert err.splitlines()[-1] == ("warning: ./template in ./ is published but no plugin lists it: a plugin rooted "
                                    "at ./ would load ./skills as its skills folder (loaded besides the skills the "
                                    "entry lists)")
