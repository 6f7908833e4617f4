"""``.claude-plugin/marketplace.json``: the registry repository as a Claude Code plugin marketplace.

With this file committed, ``/plugin marketplace add <owner>/<repo>`` works on the registry's repository. A file the
maintainer already has is theirs: ``skillreg marketplace`` keeps what they wrote and only completes it
(``marketplace_keep``). Without one, it is generated from the collections: one plugin per plugin or category
folder, and one per registry.yaml category (``uncategorized`` for the rest) for the skills of a plain skills
folder. A generated plugin's ``source`` is the folder holding its skills, never a plugin's own root: Claude Code
loads hooks, commands, MCP servers... from fixed paths under a plugin's root, so such a root must hold skill
folders only, and one that also holds one of those paths is refused (``core.plugin_root``). Only skills the build
publishes are listed: a skill failing validation never is.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..core.collections import MARKETPLACE_FILE, read_collections
from ..core.config import RegistryConfig
from ..core.diagnostics import Severity
from ..core.discovery import Discovery, FoundSkill, registry_skills
from ..core.errors import ConfigError
from ..core.loader import display_path
from ..core.plugin_root import check_plugin_root, component_paths
from ..validate.run import ValidationRun

MARKETPLACE_PATH = MARKETPLACE_FILE
UNCATEGORIZED = "uncategorized"
# Names Claude Code keeps for Anthropic's own marketplaces (its docs on plugin marketplaces and Anthropic's
# marketplaces); a generated file never takes one. A maintainer's own file keeps whatever name it has.
RESERVED_NAMES = frozenset({
    "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "claude-community",
    "anthropic-marketplace", "anthropic-plugins", "agent-skills", "anthropic-agent-skills", "knowledge-work-plugins",
    "life-sciences",
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


@dataclass(frozen=True)
class Published:
    """The skills the build would publish, and what discovery found."""

    discovery: Discovery
    skills: tuple[FoundSkill, ...]
    categories: dict[str, str | None]  # path -> metadata.category

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(s.path for s in self.skills)


def published_skills(config: RegistryConfig) -> Published:
    """The skills the build publishes: those without an error. An error the registry's baseline holds fails no
    check, but its skill is left out all the same, so it is not listed either."""
    found = registry_skills(config).require()
    run = ValidationRun([], config, keep_skills=True)
    failing = {d.file for d in run if d.severity is Severity.ERROR}
    categories = {display_path(s.folder): s.category for s in run.skills}
    kept, by_path = [], {}
    for skill in found.skills:
        shown = display_path(skill.folder)
        if not any(f == shown or f.startswith(shown + "/") for f in failing):
            kept.append(skill)
            by_path[skill.path] = categories.get(shown)
    return Published(found, tuple(kept), by_path)


def _source(folder: str) -> str:
    return "./" if folder in ("", ".") else f"./{folder}"


def generated_plugins(config: RegistryConfig, published: Published, skills: Sequence[FoundSkill] | None = None,
                      refused: list[str] | None = None) -> list[dict[str, Any]]:
    """One plugin per collection folder and, for skills in no such folder, one per category (``uncategorized``
    for the rest), each rooted at the folder holding its skills and listing them sorted; ``skills``: only these
    (default: every published skill). Each root is checked to hold skill folders only: one that does not stops
    the command, or, given ``refused``, leaves its plugin out with the line that says why."""
    collections = read_collections(config, published.discovery, published.categories)
    by_folder = {c.folder: c for c in collections.items if c.folder not in (None, ".")}
    categories = {c.slug: c.description or c.title for c in config.categories}
    plugins: dict[tuple[str, str], dict[str, Any]] = {}
    for skill in sorted(skills if skills is not None else published.skills, key=lambda s: s.path):
        parent = posixpath.dirname(skill.path) if skill.path != "." else "."
        collection = by_folder.get(skill.group or "")
        if collection is not None:
            name, description = collection.name, collection.description or f"Skills of {collection.folder}/."
        else:
            category = published.categories.get(skill.path)
            name = category if category in categories else UNCATEGORIZED
            description = categories.get(name) or "Skills that name no category of this registry."
        entry = plugins.setdefault((name, parent), {"name": name, "source": _source(parent),
                                                    "description": description, "strict": False, "skills": []})
        entry["skills"].append("./" + posixpath.basename(skill.path) if skill.path != "." else "./")
    names: set[str] = set()
    for (name, parent), entry in sorted(plugins.items()):
        shown = "./" if parent in ("", ".") else f"{parent}/"
        if refused is not None and component_paths(config.root / parent):
            path, what = component_paths(config.root / parent)[0]
            refused.append(f"{', '.join(entry['skills'])} in {shown} is published but no plugin lists it: a plugin "
                           f"rooted at {shown} would load {shown}{path} as its {what}")
            del plugins[(name, parent)]
            continue
        check_plugin_root(config.root / parent, shown, f"no {MARKETPLACE_PATH} is generated or accepted for it")
        unique, n = name, 2
        while unique in names:
            unique, n = f"{name}-{n}", n + 1
        names.add(unique)
        entry["name"] = unique
        entry["skills"].sort()
    return [plugins[key] for key in sorted(plugins)]


def generated_document(config: RegistryConfig, published: Published) -> dict[str, Any]:
    parts = _repository_parts(config)
    owner = parts[0] if len(parts) >= 2 else config.title
    return {"name": marketplace_name(config), "owner": {"name": owner},
            "metadata": {"description": marketplace_description(config)},
            "plugins": generated_plugins(config, published)}


def marketplace_description(config: RegistryConfig) -> str:
    """registry.yaml's ``description`` on one line, else one made from the title: Claude Code's validator warns
    on a marketplace without one, and a generated file passes it with no warning."""
    return " ".join(config.description.split()) or f"Agent Skills of {config.title}."


def marketplace_document(config: RegistryConfig) -> dict[str, Any]:
    """The file generated for the registry as it is, whether or not it has one."""
    return generated_document(config, published_skills(config))


@dataclass(frozen=True)
class MarketplacePlan:
    """What ``skillreg marketplace`` would write, and why."""

    path: Path
    data: bytes  # the file's content after the command
    current: bytes | None  # its content now (None: no file)
    changes: tuple[str, ...] = ()  # each change to a maintainer's file, as printed
    warnings: tuple[str, ...] = ()
    kept: bool = False  # a maintainer's file, completed; False: generated

    @property
    def unchanged(self) -> bool:
        return self.current == self.data
