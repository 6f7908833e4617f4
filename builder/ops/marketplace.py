"""``.claude-plugin/marketplace.json``: the registry repository as a Claude Code plugin marketplace.

With this file committed, ``/plugin marketplace add <owner>/<repo>`` works on the registry's repository.
Each category of registry.yaml becomes one plugin (``source: "./"``, ``strict: false``) that lists its
skills' folders, so users install a category by name. Skills without a known category go into one
``uncategorized`` plugin. The file is generated, never edited: ``skillreg marketplace --check`` fails
when the committed copy no longer matches the skills.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..core.config import RegistryConfig
from ..core.discovery import registry_skills
from ..core.errors import ConfigError
from ..core.fs import write_atomic
from ..core.loader import load_skill

MARKETPLACE_PATH = ".claude-plugin/marketplace.json"
UNCATEGORIZED = "uncategorized"
# Names Claude Code refuses for a marketplace because official marketplaces use them.
RESERVED_NAMES = frozenset({
    "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "anthropic-marketplace",
    "anthropic-plugins", "agent-skills", "anthropic-agent-skills", "life-sciences",
})


def _slug(text: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-")


def _repository_parts(config: RegistryConfig) -> list[str]:
    return [p for p in urlparse(config.repository).path.removesuffix(".git").split("/") if p]


def marketplace_name(config: RegistryConfig) -> str:
    """The repository's name (``owner/<name>``), else the registry title, as a kebab-case slug."""
    parts = _repository_parts(config)
    name = _slug(parts[-1] if parts else config.title) or "skill-registry"
    if name in RESERVED_NAMES:
        raise ConfigError(f"{config.path or 'registry.yaml'}: the marketplace name {name!r} is reserved by "
                          "Claude Code; rename the repository or change `title`")
    return name


def marketplace_path(config: RegistryConfig) -> Path:
    return config.root / MARKETPLACE_PATH


def marketplace_document(config: RegistryConfig) -> dict[str, Any]:
    """One plugin per category that holds skills, each listing ``./<path>`` of its skills (their folders in the
    repository, as discovery finds them), sorted."""
    by_category: dict[str, list[str]] = {}
    slugs = set(config.category_slugs)
    for found in registry_skills(config).skills:
        if found.path == ".":
            continue  # a repository that is one skill is no marketplace of skills
        skill = load_skill(found.folder, config).skill
        if skill.file(skill.skill_md) is None:  # nothing Claude Code could load
            continue
        category = skill.category if skill.category in slugs else UNCATEGORIZED
        by_category.setdefault(category, []).append(f"./{found.path}")
    descriptions = {c.slug: c.description or c.title for c in config.categories}
    descriptions.setdefault(UNCATEGORIZED, "Skills that name no category of this registry.")
    plugins = [
        {"name": slug, "source": "./", "description": descriptions[slug], "strict": False,
         "skills": sorted(paths)}
        for slug, paths in sorted(by_category.items())
    ]
    parts = _repository_parts(config)
    owner = parts[0] if len(parts) >= 2 else config.title
    document: dict[str, Any] = {"name": marketplace_name(config), "owner": {"name": owner}, "plugins": plugins}
    if config.description:
        document["metadata"] = {"description": " ".join(config.description.split())}
    return document


def render(config: RegistryConfig) -> bytes:
    """The file's exact bytes: sorted keys, two-space indent, trailing newline."""
    return (json.dumps(marketplace_document(config), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_marketplace(config: RegistryConfig) -> tuple[Path, bool]:
    """Write the file when its content differs; returns the path and whether it was written."""
    path = marketplace_path(config)
    data = render(config)
    if path.is_file() and path.read_bytes() == data:
        return path, False
    write_atomic(path, data)
    return path, True


def stale_reason(config: RegistryConfig) -> str | None:
    """Why the committed file does not match the skills, or None when it does."""
    path = marketplace_path(config)
    if not path.is_file():
        return f"{MARKETPLACE_PATH} does not exist"
    current = path.read_bytes()
    expected = render(config)
    if current == expected:
        return None
    try:
        old = {p["name"]: set(p.get("skills", [])) for p in json.loads(current).get("plugins", [])}
    except (ValueError, TypeError, AttributeError, KeyError):
        return f"{MARKETPLACE_PATH} is not the generated JSON"
    new = {p["name"]: set(p["skills"]) for p in json.loads(expected)["plugins"]}
    added = sorted(f"{s} in {name}" for name, skills in new.items() for s in skills - old.get(name, set()))
    gone = sorted(f"{s} in {name}" for name, skills in old.items() for s in skills - new.get(name, set()))
    detail = "; ".join(filter(None, [f"missing {', '.join(added)}" if added else "",
                                     f"lists {', '.join(gone)}, no longer there" if gone else ""]))
    return f"{MARKETPLACE_PATH} is out of date" + (f" ({detail})" if detail else "")
