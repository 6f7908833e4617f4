"""The built site serves the registry's Claude Code marketplace with git sources of its repository, since a
marketplace added by URL fetches only that file: each source, cloned at its commit, holds the skills listed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
from click.testing import CliRunner
from helpers.build import git
from helpers.history import commit
from helpers.plugins import plugin_repository

from builder.cli.app import cli
from builder.core.config import load_config
from builder.publish.build import BuildOptions, build

SCHEMA = json.loads((Path(__file__).parents[1] / "ops/schemas/claude-plugin-marketplace.schema.json").read_text())


def test_the_site_marketplace_names_git_sources_that_hold_its_skills(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    plugin_repository(repo, f"title: Plugins\nrepository: file://{repo}\n")
    result = CliRunner().invoke(cli, ["--config", str(repo / "registry.yaml"), "marketplace"])
    assert result.exit_code == 0, result.output
    commit(repo, "marketplace", "2026-01-02T00:00:00Z")
    head = git(repo, "rev-parse", "HEAD").strip()
    out = tmp_path / "site"
    build(load_config(repo / "registry.yaml"), out, BuildOptions(site=False, jobs=1))

    served = json.loads((out / ".claude-plugin/marketplace.json").read_text())
    jsonschema.validate(served, SCHEMA)
    kept = json.loads((repo / ".claude-plugin/marketplace.json").read_text())
    assert [p["name"] for p in served["plugins"]] == [p["name"] for p in kept["plugins"]]
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", f"file://{repo}", str(clone)], check=True)
    for plugin in served["plugins"]:
        source = plugin["source"]
        assert (source["source"], source["url"], source["sha"]) == ("git-subdir", f"file://{repo}", head)
        assert f"./{source['path']}" == next(p["source"] for p in kept["plugins"] if p["name"] == plugin["name"])
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", source["sha"]], check=True)
        for skill in plugin["skills"]:
            assert (clone / source["path"] / skill / "SKILL.md").is_file(), (plugin["name"], skill)


def test_no_repository_no_site_marketplace(tmp_path: Path) -> None:
    repo = plugin_repository(tmp_path / "repo")
    CliRunner().invoke(cli, ["--config", str(repo / "registry.yaml"), "marketplace"])
    commit(repo, "marketplace", "2026-01-02T00:00:00Z")
    build(load_config(repo / "registry.yaml"), tmp_path / "site", BuildOptions(site=False, jobs=1))
    assert not (tmp_path / "site/.claude-plugin").exists()
