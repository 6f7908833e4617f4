"""Collections: plugins (their manifests or the marketplace's entries), category folders and registry.yaml's
categories, each with the skills in it; and a name people type resolved to one skill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import write_tree

from builder.core.collections import Candidate, read_collections, resolve_name
from builder.core.config import load_config
from builder.core.discovery import discover
from builder.core.errors import UsageError


def skill(name: str, category: str | None = None) -> str:
    meta = f"metadata:\n  category: {category}\n" if category else ""
    return f"---\nname: {name}\ndescription: Does {name}.\n{meta}---\nBody.\n"


def collections(root: Path, categories: dict[str, str | None] | None = None) -> list[dict]:
    config = load_config(root / "registry.yaml") if (root / "registry.yaml").exists() else load_config(None, root)
    found = read_collections(config, discover(root), categories)
    return [{"name": c.name, "kind": c.kind, "folder": c.folder, "skills": list(c.skills), "version": c.version,
             "author": c.author, "description": c.description, "homepage": c.homepage} for c in found.items]


def test_plugin_folders_are_collections_with_what_their_manifests_say(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "plugins/docs/.claude-plugin/plugin.json": json.dumps({
            "name": "docs", "description": "Documents.", "version": "1.2.0",
            "author": {"name": "Ada", "email": "ada@example.com"}, "homepage": "https://example.com/docs"}),
        "plugins/docs/skills/pdf/SKILL.md": skill("pdf"),
        "plugins/ops/.codex-plugin/plugin.json": json.dumps({"name": "Ops Tools", "author": "Bob"}),
        "plugins/ops/skills/pdf/SKILL.md": skill("pdf"),
        "plugins/bare/skills/notes/SKILL.md": skill("notes"),
    })
    assert collections(tmp_path) == [
        {"name": "bare", "kind": "category", "folder": "plugins/bare", "skills": ["plugins/bare/skills/notes"],
         "version": None, "author": None, "description": "", "homepage": None},
        {"name": "docs", "kind": "plugin", "folder": "plugins/docs", "skills": ["plugins/docs/skills/pdf"],
         "version": "1.2.0", "author": "Ada", "description": "Documents.", "homepage": "https://example.com/docs"},
        {"name": "ops-tools", "kind": "plugin", "folder": "plugins/ops", "skills": ["plugins/ops/skills/pdf"],
         "version": None, "author": "Bob", "description": "", "homepage": None},
    ]


def test_marketplace_entries_group_skills_as_the_maintainer_wrote_them(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        ".claude-plugin/marketplace.json": json.dumps({"name": "m", "owner": {"name": "o"}, "plugins": [
            {"name": "document-skills", "source": "./", "strict": False, "description": "Docs.",
             "skills": ["./skills/pdf", "./skills/xlsx"]},
            {"name": "examples", "source": "./", "strict": False, "skills": ["./skills/art", "./skills/pdf"]},
            {"name": "elsewhere", "source": {"source": "github", "repo": "o/r"}},
            {"name": "escape", "source": "./", "skills": ["../outside", "/etc"]},
        ]}),
        "skills/pdf/SKILL.md": skill("pdf"),
        "skills/xlsx/SKILL.md": skill("xlsx"),
        "skills/art/SKILL.md": skill("art"),
    })
    found = [(c["name"], c["folder"], c["skills"], c["description"]) for c in collections(tmp_path)]
    assert found == [
        ("document-skills", ".", ["skills/pdf", "skills/xlsx"], "Docs."),
        ("examples", ".", ["skills/art", "skills/pdf"], ""),  # a skill two plugins list is in both
        ("escape", ".", [], ""),
    ]


def test_a_marketplace_entry_without_skills_holds_its_folders_skills_and_merges_its_manifest(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        ".claude-plugin/marketplace.json": json.dumps({"name": "m", "owner": {"name": "o"}, "plugins": [
            {"name": "teams", "source": "./plugins/agent-teams", "version": "2.0.0"}]}),
        "plugins/agent-teams/.claude-plugin/plugin.json": json.dumps({"name": "agent-teams", "version": "1.0.0",
                                                                      "description": "Teams."}),
        "plugins/agent-teams/skills/review/SKILL.md": skill("review"),
        "plugins/agent-teams/skills/debug/SKILL.md": skill("debug"),
    })
    assert [(c["name"], c["kind"], c["skills"], c["version"], c["description"]) for c in collections(tmp_path)] == [
        ("teams", "plugin", ["plugins/agent-teams/skills/debug", "plugins/agent-teams/skills/review"], "2.0.0",
         "Teams.")]


def test_registry_categories_are_collections_and_names_stay_unique(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "registry.yaml": "title: T\ncategories:\n  - {slug: git, title: Git, description: History.}\n",
        "git/skills/blame/SKILL.md": skill("blame"),
        "skills/log/SKILL.md": skill("log", "git"),
    })
    found = collections(tmp_path, {"skills/log": "git", "git/skills/blame": None})
    assert [(c["name"], c["kind"], c["folder"], c["skills"], c["description"]) for c in found] == [
        ("git", "category", "git", ["git/skills/blame"], ""),
        ("git-2", "category", None, ["skills/log"], "History."),
    ]


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "x" * (1 << 20 + 1)])
def test_a_broken_manifest_is_a_warning_naming_the_file(tmp_path: Path, text: str) -> None:
    write_tree(tmp_path, {"plugins/docs/plugin.json": text, "plugins/docs/skills/pdf/SKILL.md": skill("pdf")})
    found = read_collections(load_config(None, tmp_path), discover(tmp_path))
    assert [(c.name, c.kind) for c in found.items] == [("docs", "category")]
    assert len(found.warnings) == 1 and found.warnings[0].startswith("plugins/docs/plugin.json: ")


CANDIDATES = [Candidate("pdf", None, ("docs",)), Candidate("ops-pdf", "pdf", ("ops",)),
              Candidate("xlsx-tools", "xlsx", ("docs",)), Candidate("notes", None, ())]


@pytest.mark.parametrize(("query", "slug"), [
    ("pdf", "pdf"), ("ops-pdf", "ops-pdf"), ("ops/pdf", "ops-pdf"), ("docs/pdf", "pdf"), ("xlsx", "xlsx-tools"),
    ("notes", "notes"),
])
def test_a_name_resolves_to_one_slug(query: str, slug: str) -> None:
    assert resolve_name(query, CANDIDATES) == slug


def test_a_name_two_skills_have_is_an_error_listing_both() -> None:
    candidates = [Candidate("docs-pdf", "pdf", ("docs",)), Candidate("ops-pdf", "pdf", ("ops",))]
    with pytest.raises(UsageError) as caught:
        resolve_name("pdf", candidates)
    assert str(caught.value) == ("`pdf` names 2 skills: docs-pdf (docs), ops-pdf (ops); install one by its slug or "
                                 "as COLLECTION/NAME")
    with pytest.raises(UsageError, match="no skill named `pdf` in collection `other`"):
        resolve_name("other/pdf", candidates)
