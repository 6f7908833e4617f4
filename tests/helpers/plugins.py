"""A registry in the plugin layout, a real git repository: two plugins (one manifest Claude Code's, one Agent
Plugins'), each holding a skill named ``pdf``, and a category folder."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import write_tree
from helpers.build import git
from helpers.history import commit, skill_md

PLUGIN = json.dumps({"name": "docs", "description": "Document skills.", "version": "1.0.0",
                     "author": {"name": "Ada"}, "homepage": "https://example.com"})
SKILLS = ("plugins/docs/skills/pdf", "plugins/docs/skills/docx", "plugins/ops/skills/pdf", "writing/skills/notes")


def plugin_repository(root: Path, registry: str = "title: Plugins\n") -> Path:
    write_tree(root, {"registry.yaml": registry, "plugins/docs/.claude-plugin/plugin.json": PLUGIN,
                      "plugins/ops/plugin.json": json.dumps({"name": "ops"})})
    for folder in SKILLS:
        write_tree(root / folder, {"SKILL.md": skill_md(folder.rsplit("/", 1)[1], "1.0.0")})
    git(root, "init", "-q", "-b", "main")
    commit(root, "first", "2026-01-01T00:00:00Z")
    return root


def hand_made_marketplace(name: str) -> dict[str, object]:
    """A maintainer's own marketplace file: an owner, metadata, two plugins of their grouping (one skill in both),
    rooted at the repository's top with `strict: false`, and a key of their own (`x-curated-by`)."""
    return {
        "name": name,
        "owner": {"name": "Keith", "email": "keith@example.com"},
        "metadata": {"description": "Example skills", "version": "1.0.0"},
        "plugins": [
            {"name": "example-skills", "description": "Examples.", "source": "./", "strict": False,
             "skills": ["./skills/art", "./skills/pdf"]},
            {"name": "document-skills", "description": "Documents.", "source": "./", "strict": False,
             "skills": ["./skills/xlsx", "./skills/pdf"], "x-curated-by": "keith"},
        ],
    }
