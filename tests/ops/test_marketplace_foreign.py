"""The real agents read the marketplaces ``skillreg marketplace`` writes or keeps: Claude Code (pinned in
tests/foreign) validates each file, adds it and installs every plugin of it, whose inventory lists exactly the
skills the file gives it; Codex CLI adds the Codex marketplace from the registry's folder, installs a plugin and
shows its skills in the prompt it would send. Both run with a home folder in tmp_path, logged out, with nothing
reached beyond 127.0.0.1."""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.client import RegistryServer
from helpers.foreign import agent_run
from helpers.history import commit
from helpers.plugins import hand_made_marketplace, plugin_repository

from builder.cli.app import cli
from builder.core.config import load_config
from builder.publish.build import BuildOptions, build

pytestmark = pytest.mark.slow

PLUGINS = "title: Plugins\nrepository: https://github.com/acme/plugin-skills\nmarketplaces: [claude, copilot, codex]\n"
CATEGORIES = """\
title: Demo Registry
repository: https://github.com/acme/demo-skills
categories:
  - {slug: git, title: Git, description: Working with history.}
  - {slug: data, title: Data, description: Inspecting data files.}
"""
HAND_MADE = hand_made_marketplace("keith-skills")


def skill(name: str, category: str | None = None) -> str:
    meta = f"metadata:\n  category: {category}\n" if category else ""
    return f"---\nname: {name}\ndescription: Does {name} when asked.\n{meta}---\nSteps.\n"


def category_registry(root: Path) -> Path:
    return write_tree(root, {"registry.yaml": CATEGORIES, "skills/blame/SKILL.md": skill("blame", "git"),
                             "skills/rebase/SKILL.md": skill("rebase", "git"),
                             "skills/rows/SKILL.md": skill("rows", "data"), "skills/loose/SKILL.md": skill("loose")})


def hand_made_registry(root: Path) -> Path:
    """A maintainer's file with a custom grouping, a skill in two plugins and a key of their own; ``extra`` is
    in no plugin, so ``skillreg marketplace`` adds it."""
    write_tree(root, {"registry.yaml": "title: Hand made\n",
                      ".claude-plugin/marketplace.json": json.dumps(HAND_MADE, indent=4) + "\n"})
    for name in ("art", "pdf", "xlsx", "extra"):
        write_tree(root, {f"skills/{name}/SKILL.md": skill(name)})
    return root


def marketplace(repo: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["--config", str(repo / "registry.yaml"), "marketplace"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads((repo / ".claude-plugin/marketplace.json").read_text())
    return document


def validate(claude: list[str], home: Path, path: Path) -> dict[str, Any]:
    """Claude Code's report on ``path``; it must pass (exit 0)."""
    done = agent_run(claude, home, path.parent, "plugin", "validate", "--json", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["success"] and report["manifest"]["errors"] == [], report
    return report


def installed_skills(claude: list[str], home: Path, cwd: Path, plugin: str, market: str) -> list[str]:
    """Install ``plugin@market`` and read back the skills Claude Code's inventory of it lists."""
    done = agent_run(claude, home, cwd, "plugin", "install", f"{plugin}@{market}")
    assert done.returncode == 0, done.stdout + done.stderr
    details = agent_run(claude, home, cwd, "plugin", "details", f"{plugin}@{market}")
    assert details.returncode == 0, details.stdout + details.stderr
    match = re.search(r"^\s*Skills \((\d+)\)[ \t]*(.*)$", details.stdout, re.M)
    assert match, details.stdout
    names = [n.strip() for n in match.group(2).split(",") if n.strip()]
    assert len(names) == int(match.group(1)), details.stdout
    return sorted(names)


def listed(entry: dict[str, Any]) -> list[str]:
    return sorted(posixpath.basename(p.rstrip("/")) for p in entry["skills"])


def add_and_install_all(claude: list[str], home: Path, cwd: Path, source: str, document: dict[str, Any]) -> None:
    done = agent_run(claude, home, cwd, "plugin", "marketplace", "add", source)
    assert done.returncode == 0, done.stdout + done.stderr
    for entry in document["plugins"]:
        assert installed_skills(claude, home, cwd, entry["name"], document["name"]) == listed(entry), entry["name"]


@pytest.mark.parametrize("layout", ["plugins", "categories"])
def test_claude_code_passes_and_installs_every_plugin_of_a_generated_marketplace(
        layout: str, claude_cli: list[str], tmp_path: Path) -> None:
    repo = plugin_repository(tmp_path / "repo", PLUGINS) if layout == "plugins" \
        else category_registry(tmp_path / "repo")
    document = marketplace(repo)
    home = tmp_path / "home"
    # What we generate draws no warning either: --strict fails on any.
    for rel in (".claude-plugin/marketplace.json", ".github/plugin/marketplace.json"):
        if (repo / rel).exists():
            done = agent_run(claude_cli, home, repo, "plugin", "validate", "--strict", str(repo / rel))
            assert done.returncode == 0, done.stdout + done.stderr
    add_and_install_all(claude_cli, home, tmp_path, str(repo), document)


def test_claude_code_installs_each_plugin_of_a_kept_hand_made_marketplace(claude_cli: list[str],
                                                                         tmp_path: Path) -> None:
    repo = hand_made_registry(tmp_path / "repo")
    document = marketplace(repo)
    assert [p["name"] for p in document["plugins"]] == ["example-skills", "document-skills", "uncategorized"]
    home = tmp_path / "home"
    report = validate(claude_cli, home, repo / ".claude-plugin/marketplace.json")
    # The maintainer's own key is the one thing Claude Code remarks on, and it ignores it.
    assert [w["path"] for w in report["manifest"]["warnings"]] == ["plugins[1].x-curated-by"]
    add_and_install_all(claude_cli, home, tmp_path, str(repo), document)


def test_claude_code_adds_the_site_marketplace_by_url_and_installs_from_git(claude_cli: list[str],
                                                                            tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    plugin_repository(repo, f"title: Plugins\nrepository: file://{repo}\n")
    marketplace(repo)
    commit(repo, "marketplace", "2026-01-02T00:00:00Z")
    out = tmp_path / "site"
    build(load_config(repo / "registry.yaml"), out, BuildOptions(site=False, jobs=1))
    served = json.loads((out / ".claude-plugin/marketplace.json").read_text())
    assert {p["source"]["source"] for p in served["plugins"]} == {"git-subdir"}
    home = tmp_path / "home"
    done = agent_run(claude_cli, home, tmp_path, "plugin", "validate", "--strict",
                     str(out / ".claude-plugin/marketplace.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    with RegistryServer(out) as server:
        add_and_install_all(claude_cli, home, tmp_path, f"{server.url}.claude-plugin/marketplace.json", served)
        assert (".claude-plugin/marketplace.json", 200) in server.state.paths()


def test_codex_adds_the_codex_marketplace_from_the_folder_and_installs_a_plugin(codex_cli: list[str],
                                                                                tmp_path: Path) -> None:
    repo = plugin_repository(tmp_path / "repo", PLUGINS)
    marketplace(repo)
    codex = json.loads((repo / ".agents/plugins/marketplace.json").read_text())
    home = tmp_path / "home"
    done = agent_run(codex_cli, home, tmp_path, "plugin", "marketplace", "add", "--json", str(repo))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["marketplaceName"] == codex["name"] == "plugin-skills"
    listing = agent_run(codex_cli, home, tmp_path, "plugin", "list")
    assert listing.returncode == 0, listing.stdout + listing.stderr
    shown = re.findall(r"^(\S+@plugin-skills)\s", listing.stdout, re.M)
    assert shown == [f"{p['name']}@plugin-skills" for p in codex["plugins"]] == ["docs@plugin-skills",
                                                                               "ops@plugin-skills"]
    added = agent_run(codex_cli, home, tmp_path, "plugin", "add", "docs@plugin-skills")
    assert added.returncode == 0, added.stdout + added.stderr
    [root] = re.findall(r"Installed plugin root: (\S+)", added.stdout)
    assert sorted(p.name for p in (Path(root) / "skills").iterdir()) == ["docx", "pdf"]
    # What the model would be shown: the plugin's skills, each once, by Codex's own offline rendering.
    prompt = agent_run(codex_cli, home, tmp_path, "debug", "prompt-input", "hello")
    assert prompt.returncode == 0, prompt.stdout + prompt.stderr
    assert sorted(re.findall(r"- docs:([a-z0-9-]+): ", prompt.stdout)) == ["docx", "pdf"]
