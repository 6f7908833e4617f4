"""Registries with a history for the version tests: skills committed one version after another, with fixed dates,
in real git repositories made in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from builder.publish.schemas import load_schema
from helpers import write_tree
from helpers.build import git


def skill_md(name: str, version: str, extra: str = "") -> str:
    return (f"---\nname: {name}\ndescription: Says hello in {name}; use it when a greeting is wanted.\n"
            f"metadata:\n  version: \"{version}\"\n---\n# {name}\n\nSay hello.{extra}\n")


def new_registry(root: Path, skills: dict[str, str]) -> Path:
    """A git repository holding registry.yaml and ``skills`` (name -> version), one commit."""
    write_tree(root, {"registry.yaml": "title: History test\nbase_url: https://example.invalid/r/\n"})
    for name, version in skills.items():
        write_tree(root / "skills" / name, {"SKILL.md": skill_md(name, version)})
    git(root, "init", "-q", "-b", "main")
    commit(root, "first", "2026-01-01T00:00:00Z")
    return root


def commit(repo: Path, message: str, date: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD").strip()


def versions(out: Path, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / f"api/v1/skills/{name}/versions.json").read_text())
    jsonschema.validate(doc, load_schema("versions"))
    return doc
