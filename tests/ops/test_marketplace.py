"""``skillreg marketplace``: .claude-plugin/marketplace.json, generated, committed and valid for Claude Code."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from helpers import REPO, write_tree

from builder.cli.app import cli
from builder.core.config import load_config
from builder.ops.marketplace import MARKETPLACE_PATH, marketplace_document, render, stale_reason

SCHEMA = json.loads((Path(__file__).parent / "schemas/claude-plugin-marketplace.schema.json").read_text())
REGISTRY = """\
title: Demo Registry
description: >-
  Skills for
  testing.
repository: https://github.com/acme/demo-skills
categories:
  - {slug: git, title: Git, description: Working with history.}
  - {slug: data, title: Data, description: Inspecting data files.}
  - {slug: writing, title: Writing, description: Clear prose.}
"""


def skill(name: str, category: str | None) -> str:
    meta = f"metadata:\n  category: {category}\n" if category else ""
    return f"---\nname: {name}\ndescription: Does {name} when asked.\n{meta}---\nSteps.\n"


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "reg", {
        "registry.yaml": REGISTRY,
        "skills/zeta/SKILL.md": skill("zeta", "git"),
        "skills/alpha/SKILL.md": skill("alpha", "git"),
        "skills/rows/SKILL.md": skill("rows", "data"),
        "skills/loose/SKILL.md": skill("loose", None),
        "skills/odd/SKILL.md": skill("odd", "no-such-category"),
    })


def test_one_plugin_per_category_with_skills_sorted(registry: Path) -> None:
    document = marketplace_document(load_config(registry / "registry.yaml"))
    assert document == {
        "name": "demo-skills",
        "owner": {"name": "acme"},
        "metadata": {"description": "Skills for testing."},
        "plugins": [
            {"name": "data", "source": "./", "description": "Inspecting data files.", "strict": False,
             "skills": ["./skills/rows"]},
            {"name": "git", "source": "./", "description": "Working with history.", "strict": False,
             "skills": ["./skills/alpha", "./skills/zeta"]},
            {"name": "uncategorized", "source": "./", "description": "Skills that name no category of this registry.",
             "strict": False, "skills": ["./skills/loose", "./skills/odd"]},
        ],
    }
    jsonschema.validate(document, SCHEMA)
    text = render(load_config(registry / "registry.yaml")).decode()
    assert text == json.dumps(document, indent=2, sort_keys=True) + "\n"


def test_every_listed_skill_path_exists_from_the_marketplace_root(registry: Path) -> None:
    document = marketplace_document(load_config(registry / "registry.yaml"))
    for plugin in document["plugins"]:
        for path in plugin["skills"]:
            assert (registry / plugin["source"] / path / "SKILL.md").is_file()


def test_cli_writes_then_check_passes_then_fails_when_a_skill_is_added(registry: Path) -> None:
    runner = CliRunner()
    config = ["--config", str(registry / "registry.yaml")]
    result = runner.invoke(cli, [*config, "marketplace", "--check"])
    assert (result.exit_code, result.output) == (
        1, f"Error: {MARKETPLACE_PATH} does not exist. Run `skillreg marketplace` and commit {MARKETPLACE_PATH}.\n")

    result = runner.invoke(cli, [*config, "marketplace"])
    assert (result.exit_code, result.output) == (0, f"Wrote {registry / MARKETPLACE_PATH}\n")
    written = (registry / MARKETPLACE_PATH).read_bytes()
    result = runner.invoke(cli, [*config, "marketplace"])
    assert (result.exit_code, result.output) == (0, f"Unchanged: {registry / MARKETPLACE_PATH}\n")
    assert (registry / MARKETPLACE_PATH).read_bytes() == written
    result = runner.invoke(cli, [*config, "marketplace", "--check"])
    assert (result.exit_code, result.output) == (0, f"{MARKETPLACE_PATH} is up to date\n")

    write_tree(registry, {"skills/beta/SKILL.md": skill("beta", "git")})
    (registry / "skills/rows/SKILL.md").unlink()
    (registry / "skills/rows").rmdir()
    result = runner.invoke(cli, [*config, "marketplace", "--check"])
    assert (result.exit_code, result.output) == (
        1, f"Error: {MARKETPLACE_PATH} is out of date (missing ./skills/beta in git; lists ./skills/rows in data, "
           f"no longer there). Run `skillreg marketplace` and commit {MARKETPLACE_PATH}.\n")


@pytest.mark.parametrize("break_it", [
    lambda d: d.pop("owner"),
    lambda d: d.update(name="agent-skills"),
    lambda d: d.update(name="Demo Skills"),
    lambda d: d["plugins"][0].update(skils=["./skills/rows"]),
    lambda d: d["plugins"][0].update(skills=["skills/rows"]),
    lambda d: d["plugins"][0].update(strict="false"),
    lambda d: d["plugins"][0].pop("source"),
], ids=["no-owner", "reserved-name", "not-kebab", "typo-field", "not-relative", "strict-string", "no-source"])
def test_the_schema_rejects_what_claude_code_documents_as_invalid(registry: Path, break_it) -> None:
    document = copy.deepcopy(marketplace_document(load_config(registry / "registry.yaml")))
    break_it(document)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, SCHEMA)


def test_the_committed_marketplace_file_is_current_and_valid() -> None:
    reason = stale_reason(load_config(REPO / "registry.yaml"))
    assert reason is None, f"{reason}: run `skillreg marketplace` and commit {MARKETPLACE_PATH}"
    jsonschema.validate(json.loads((REPO / MARKETPLACE_PATH).read_text(encoding="utf-8")), SCHEMA)
