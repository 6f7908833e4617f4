"""Collections in the API: listed in index.json, one document each, both valid against their schemas; two skills
of one name in two plugins are both published."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
from helpers import write_tree
from helpers.build import git
from helpers.history import commit, skill_md
from helpers.plugins import plugin_repository

from builder.core.config import load_config
from builder.publish.build import BuildOptions, build
from builder.publish.schemas import load_schema


def test_collections_are_listed_in_the_index_and_published_one_document_each(tmp_path: Path) -> None:
    repo = plugin_repository(tmp_path / "repo")
    out = tmp_path / "site"
    result = build(load_config(repo / "registry.yaml"), out, BuildOptions(site=False, jobs=1))
    assert result.published == ("docx", "notes", "ops-pdf", "pdf")  # one name in two plugins: both published
    index = json.loads((out / "api/v1/index.json").read_text())
    jsonschema.validate(index, load_schema("index"))
    assert [(c["name"], c["kind"], c["folder"], c["skills"]) for c in index["collections"]] == [
        ("docs", "plugin", "plugins/docs", ["docx", "pdf"]), ("ops", "plugin", "plugins/ops", ["ops-pdf"]),
        ("writing", "category", "writing", ["notes"])]
    docs = json.loads((out / "api/v1/collections/docs.json").read_text())
    jsonschema.validate(docs, load_schema("collection"))
    assert {k: docs[k] for k in ("title", "description", "version", "author", "homepage")} == {
        "title": "docs", "description": "Document skills.", "version": "1.0.0", "author": "Ada",
        "homepage": "https://example.com"}
    assert docs["links"] == {"docx": "api/v1/skills/docx.json", "pdf": "api/v1/skills/pdf.json"}
    assert sorted(p.name for p in (out / "api/v1/collections").iterdir()) == ["docs.json", "ops.json",
                                                                             "writing.json"]


def test_a_rebuild_drops_the_document_of_a_collection_that_is_gone(tmp_path: Path) -> None:
    repo = plugin_repository(tmp_path / "repo")
    out = tmp_path / "site"
    build(load_config(repo / "registry.yaml"), out, BuildOptions(site=False, jobs=1))
    shutil.rmtree(repo / "writing")
    commit(repo, "drop writing", "2026-01-02T00:00:00Z")
    build(load_config(repo / "registry.yaml"), out, BuildOptions(site=False, jobs=1))
    assert sorted(p.name for p in (out / "api/v1/collections").iterdir()) == ["docs.json", "ops.json"]
    assert [c["name"] for c in json.loads((out / "api/v1/index.json").read_text())["collections"]] == ["docs", "ops"]


def test_registry_categories_are_collections_of_the_skills_naming_them(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_tree(root, {"registry.yaml": "title: C\ncategories:\n  - {slug: git, title: Git, description: History.}\n",
                      "skills/blame/SKILL.md": "---\nname: blame\ndescription: Blames lines.\nmetadata:\n"
                                               "  category: git\n---\nBody.\n",
                      "skills/other/SKILL.md": skill_md("other", "1.0.0")})
    git(root, "init", "-q", "-b", "main")
    commit(root, "first", "2026-01-01T00:00:00Z")
    build(load_config(root / "registry.yaml"), tmp_path / "site", BuildOptions(site=False, jobs=1))
    index = json.loads((tmp_path / "site/api/v1/index.json").read_text())
    assert [(c["name"], c["kind"], c["folder"], c["skills"], c["description"]) for c in index["collections"]] == [
        ("git", "category", None, ["blame"], "History.")]


def test_a_registry_without_collections_publishes_no_collections_key(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_tree(root, {"registry.yaml": "title: Plain\n", "skills/one/SKILL.md": skill_md("one", "1.0.0")})
    git(root, "init", "-q", "-b", "main")
    commit(root, "first", "2026-01-01T00:00:00Z")
    build(load_config(root / "registry.yaml"), tmp_path / "site", BuildOptions(site=False, jobs=1))
    assert "collections" not in json.loads((tmp_path / "site/api/v1/index.json").read_text())
    assert not (tmp_path / "site/api/v1/collections").exists()
