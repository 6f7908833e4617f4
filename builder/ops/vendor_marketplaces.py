"""The marketplace files of the other agents (registry.yaml's ``marketplaces:``), for the collections they can
express.

Agent Plugins 1.0.0 defines a plugin as a folder (``plugin.json``, ``skills/*/SKILL.md``) and leaves marketplaces
to each vendor: GitHub Copilot reads ``.github/plugin/marketplace.json`` (Claude Code's format), Codex
``.agents/plugins/marketplace.json`` with each plugin's ``.codex-plugin/plugin.json``. Their clients find a
plugin's skills only as direct children of its ``skills/`` and follow no ``source: "./"``, so only a plugin folder
whose skills all sit there is listed, and only when every skill there is published (a vendor would load one that
fails validation). A registry of plain skills folders or category folders without manifests has none: it gets
Claude Code's file alone, whose entries can list skills anywhere. ``agent-plugins`` writes a ``plugin.json`` into
each such folder that has no manifest, which makes a category folder of that shape a plugin too.

A vendor's marketplace file the repository already has is regenerated only when every plugin it lists is one of
the registry's own plugin folders; any other is the maintainer's and kept as written.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.collections import PLUGIN, PLUGIN_MANIFESTS, Collection, read_collections
from ..core.config import RegistryConfig
from .marketplace import MarketplacePlan, Published, _repository_parts, marketplace_description, marketplace_name

COPILOT_PATH = ".github/plugin/marketplace.json"
CODEX_PATH = ".agents/plugins/marketplace.json"
CODEX_MANIFEST = ".codex-plugin/plugin.json"
AGENT_PLUGIN_MANIFEST = "plugin.json"


def _dumps(document: Any) -> bytes:
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def expressible(config: RegistryConfig, published: Published, warnings: list[str]) -> list[Collection]:
    """The plugin folders a vendor can list: every member directly in ``<folder>/skills/``, every skill there
    published. With ``agent-plugins``, category folders of that shape count (they get a plugin.json)."""
    kinds = {PLUGIN} | ({"category"} if "agent-plugins" in config.marketplaces else set())
    found = [s.path for s in published.discovery.skills]
    chosen = []
    for collection in read_collections(config, published.discovery, published.categories).items:
        folder = collection.folder
        if collection.kind not in kinds or folder in (None, "."):
            continue
        assert folder is not None
        below = [p for p in found if posixpath.dirname(p) == f"{folder}/skills"]
        if not below or any(posixpath.dirname(p) != f"{folder}/skills" for p in collection.skills):
            continue
        failing = sorted(set(below) - published.paths)
        if failing:
            warnings.append(f"{folder}/ is left out of the Copilot and Codex marketplaces: {', '.join(failing)} "
                            "fails validation, and their clients load every skill of a plugin's skills/")
            continue
        chosen.append(collection)
    return chosen


def _regenerable(path: Path, ours: set[str]) -> bool:
    """Whether the file at ``path`` is absent, or lists only plugins of the registry's own folders."""
    try:
        document = json.loads(path.read_bytes())
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    plugins = document.get("plugins") if isinstance(document, dict) else None
    return isinstance(plugins, list) and all(isinstance(p, dict) and p.get("name") in ours for p in plugins)


def _plan(config: RegistryConfig, rel: str, data: bytes, ours: set[str], warnings: list[str]) -> MarketplacePlan:
    path = config.root / rel
    current = path.read_bytes() if path.is_file() else None
    if current is not None and not _regenerable(path, ours):
        warnings.append(f"{rel} lists plugins of its own: kept as the maintainer wrote it")
        return MarketplacePlan(path, current, current, kept=True)
    return MarketplacePlan(path, data, current)


def copilot_document(config: RegistryConfig, plugins: Sequence[Collection]) -> dict[str, Any]:
    parts = _repository_parts(config)
    return {"name": marketplace_name(config), "owner": {"name": parts[0] if len(parts) >= 2 else config.title},
            "metadata": {"description": marketplace_description(config)},
            "plugins": [{"name": c.name, "source": f"./{c.folder}", "description": c.description or c.title,
                         **({"version": c.version} if c.version else {})} for c in plugins]}


def codex_document(config: RegistryConfig, plugins: Sequence[Collection]) -> dict[str, Any]:
    return {"name": marketplace_name(config), "interface": {"displayName": config.title},
            "plugins": [{"name": c.name, "source": {"source": "local", "path": f"./{c.folder}"},
                         "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                         "category": "Productivity"} for c in plugins]}


def _manifest(collection: Collection, **more: str) -> bytes:
    return _dumps({"name": collection.name, "version": collection.version or "0.1.0",
                   "description": collection.description or f"Skills of {collection.folder}/.", **more})


def vendor_plans(config: RegistryConfig, published: Published) -> tuple[list[MarketplacePlan], list[str]]:
    """The files of each vendor ``marketplaces:`` names besides Claude Code, and the warnings."""
    warnings: list[str] = []
    vendors = [v for v in config.marketplaces if v != "claude"]
    if not vendors:
        return [], warnings
    plugins = expressible(config, published, warnings)
    if not plugins:
        warnings.append("no plugin folder whose skills all sit in its skills/: Copilot and Codex list only such "
                        "folders, so only Claude Code's marketplace is written")
        return [], warnings
    ours = {c.name for c in plugins}
    plans = []
    if "agent-plugins" in vendors:
        for c in plugins:
            if not any((config.root / str(c.folder) / name).exists() for name in PLUGIN_MANIFESTS):
                plans.append(_plan(config, f"{c.folder}/{AGENT_PLUGIN_MANIFEST}", _manifest(c), ours, warnings))
    if "copilot" in vendors:
        plans.append(_plan(config, COPILOT_PATH, _dumps(copilot_document(config, plugins)), ours, warnings))
    if "codex" in vendors:
        plans.append(_plan(config, CODEX_PATH, _dumps(codex_document(config, plugins)), ours, warnings))
        for c in plugins:
            manifest = config.root / str(c.folder) / CODEX_MANIFEST
            if not manifest.exists():
                plans.append(_plan(config, f"{c.folder}/{CODEX_MANIFEST}", _manifest(c, skills="./skills/"), ours,
                                   warnings))
    return plans, warnings
