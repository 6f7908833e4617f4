"""Completing a maintainer's own ``.claude-plugin/marketplace.json``: everything they wrote stays (owner, name,
plugin grouping and order, sources, ``strict``, versions, keys this tool does not know, indentation and key order);
a published skill no plugin lists is added, a listed skill that is no longer published is dropped, each change
said in one line. A file that lists every published skill is left byte for byte as it is.

Where the skills go: a missing skill joins the plugin the generator would put it in (by name and source) when the
file has it, else that plugin is added at the end. A plugin that names no ``skills`` loads its ``skills/`` folder
whatever the file says, so nothing is added to or dropped from it; a skill there that fails validation is a
warning. A plugin rooted at the folder of the skills it lists (each one folder below it: the form the generator
writes) must hold skill folders only, as a generated one (``core.plugin_root``); the component paths under any
other kept plugin's root are the maintainer's own, shown as a warning.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any
from urllib.parse import urlparse

from ..core.collections import entry_draft, entry_folder, repository_path
from ..core.config import RegistryConfig
from ..core.errors import ConfigError
from ..core.plugin_root import check_plugin_root, component_paths
from .marketplace import (
    MARKETPLACE_PATH,
    RESERVED_NAMES,
    MarketplacePlan,
    Published,
    generated_plugins,
    marketplace_path,
)


def _style(text: str) -> dict[str, Any]:
    """How the maintainer's JSON is written, as far as ``json.dumps`` can say it again."""
    match = re.search(r"\n([ \t]+)\S", text)
    indent: str | int = match.group(1) if match else 2
    return {"indent": indent, "ensure_ascii": "\\u" in text, "newline": text.endswith("\n")}


def _dumps(document: Any, style: dict[str, Any]) -> bytes:
    text = json.dumps(document, indent=style["indent"], ensure_ascii=style["ensure_ascii"])
    return (text + ("\n" if style["newline"] else "")).encode("utf-8")


def _skills_only(entry: dict[str, Any]) -> bool:
    """Whether the entry is rooted at the folder of the skills it lists (``source`` + ``./<skill>``)."""
    listed = entry.get("skills")
    return isinstance(listed, list) and bool(listed) and all(
        isinstance(p, str) and p.startswith("./") and "/" not in p[2:].strip("/") for p in listed)


def _parse(config: RegistryConfig, current: bytes) -> tuple[dict[str, Any], str]:
    shown = MARKETPLACE_PATH
    try:
        text = current.decode("utf-8")
        document = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{shown}: not valid JSON ({str(exc).splitlines()[0]}); fix it, or delete it to have "
                          "one generated") from None
    if not isinstance(document, dict) or not isinstance(document.get("plugins"), list):
        raise ConfigError(f"{shown}: not a Claude Code marketplace (no `plugins` list); fix it, or delete it to "
                          "have one generated")
    return document, text


def complete(config: RegistryConfig, published: Published, current: bytes) -> MarketplacePlan:
    document, text = _parse(config, current)
    root = published.discovery.root
    real_root = os.path.realpath(root)
    found = [s.path for s in published.discovery.skills]
    meta = document.get("metadata")
    plugin_root = meta.get("pluginRoot") if isinstance(meta, dict) else None
    changes: list[str] = []
    warnings: list[str] = []
    covered: set[str] = set()
    components: list[tuple[str, str, str]] = []  # (plugin, its root, a component path under it)
    for entry in document["plugins"]:
        folder = entry_folder(real_root, entry, plugin_root if isinstance(plugin_root, str) else "") \
            if isinstance(entry, dict) else None
        if folder is None or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        shown = "./" if folder == "." else f"{folder}/"
        if _skills_only(entry):
            check_plugin_root(root / folder, shown, f"no {MARKETPLACE_PATH} is generated or accepted for it")
        else:
            components += [(name, shown, path) for path, _ in component_paths(root / folder)]
        listed = entry.get("skills")
        if isinstance(listed, list):
            entry["skills"] = _kept_paths(real_root, folder, listed, published, name, changes)
        draft, problem = entry_draft(root, real_root, found, entry, folder)
        warnings += [problem] if problem else []
        covered |= draft.skills
        if not isinstance(listed, list):
            warnings += [f"plugin {name}: {path} fails validation, but Claude Code loads every skill of "
                         f"{shown}skills/" for path in sorted(draft.skills - published.paths)]
    if components:
        warnings.insert(0, _components_line(components))
    if (reserved := _reserved_name(config, document.get("name"))) is not None:
        warnings.insert(0, reserved)
    _add_missing(config, published, document, covered, changes, warnings)
    data = current if not changes else _dumps(document, _style(text))
    return MarketplacePlan(marketplace_path(config), data, current, tuple(changes), tuple(warnings), kept=True)


def _reserved_name(config: RegistryConfig, name: object) -> str | None:
    """A kept name Claude Code reserves is the maintainer's, but Claude Code adds such a marketplace only from a
    GitHub repository of Anthropic's organization (``plugin marketplace add`` refuses it from anywhere else)."""
    url = urlparse(config.repository)
    parts = [p for p in url.path.split("/") if p]
    if name not in RESERVED_NAMES or (url.netloc == "github.com" and parts[:1] == ["anthropics"]):
        return None
    return (f"the marketplace name {name!r} is reserved: Claude Code adds this file only from a GitHub repository "
            "of the anthropics organization, so users of this one cannot add it; rename it")


def _components_line(components: list[tuple[str, str, str]]) -> str:
    """One line for the component paths under the kept plugins' roots: what Claude Code loads besides skills."""
    plugins = list(dict.fromkeys(name for name, _, _ in components))
    paths = list(dict.fromkeys(f"{root}{path}" for _, root, path in components))
    shown = paths[:3]
    more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
    return (f"{len(plugins)} kept plugin(s) hold paths Claude Code loads besides their skills ({', '.join(shown)}"
            f"{more}); they are the maintainer's, and this registry does not check them")


def _kept_paths(real_root: str, folder: str, listed: list[Any], published: Published, plugin: str,
                changes: list[str]) -> list[Any]:
    """The entry's ``skills`` without those no longer published: a path to a folder that is no published skill
    and holds none. Anything else (not a string, out of the repository) is the maintainer's and stays."""
    kept = []
    paths = published.paths
    for written in listed:
        path = repository_path(real_root, folder, written)
        if path is None or path in paths or any(p.startswith(path + "/") for p in paths):
            kept.append(written)
            continue
        why = "fails validation" if path in {s.path for s in published.discovery.skills} else "no longer there"
        changes.append(f"dropped {written} from plugin {plugin} ({why})")
    return kept


def _add_missing(config: RegistryConfig, published: Published, document: dict[str, Any], covered: set[str],
                 changes: list[str], warnings: list[str]) -> None:
    """Add the published skills no plugin lists; one that only a plugin rooted where Claude Code would load other
    components could hold is left out, with a warning."""
    missing = [s for s in published.skills if s.path not in covered]
    if not missing:
        return
    entries = [e for e in document["plugins"] if isinstance(e, dict)]
    for plugin in generated_plugins(config, published, missing, warnings):
        same = next((e for e in entries if e.get("name") == plugin["name"] and e.get("source") == plugin["source"]
                     and isinstance(e.get("skills"), list)), None)
        if same is None:
            names = {e.get("name") for e in document["plugins"] if isinstance(e, dict)}
            base, n = plugin["name"], 2
            while plugin["name"] in names:
                plugin["name"], n = f"{base}-{n}", n + 1
            document["plugins"].append(plugin)
            changes.append(f"added plugin {plugin['name']} ({plugin['source']}) with {', '.join(plugin['skills'])}")
            continue
        for path in plugin["skills"]:
            same["skills"].append(path)
            changes.append(f"added {path} to plugin {plugin['name']}")
