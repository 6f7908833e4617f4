"""What a Claude Code plugin root we generate may not hold: the paths where Claude Code finds a plugin's components.

Claude Code loads a plugin's components from fixed places under its root whatever the marketplace entry lists
(its plugins reference, "File locations"): hooks and monitors run commands on session events, ``bin/`` goes on
the Bash tool's PATH, ``.mcp.json`` and ``.lsp.json`` start servers. A root we name as a plugin's ``source``
therefore holds only skill folders; one that also holds any of these paths (a pull request adding
``hooks/hooks.json``, or a skill named ``hooks``) is refused, never published as a plugin. Every generator of
plugin entries or plugin folders checks its roots here.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ConfigError

# (path under the plugin root, what Claude Code makes of it). A folder counts by its first segment: an empty
# ``hooks/`` is one commit away from ``hooks/hooks.json``. Names are compared case-insensitively, as the file
# systems of macOS and Windows, where the plugin is copied to, compare them.
COMPONENT_PATHS: tuple[tuple[str, str], ...] = (
    (".claude-plugin/plugin.json", "manifest"),
    ("skills", "skills folder (loaded besides the skills the entry lists)"),
    ("commands", "commands"),
    ("agents", "agents"),
    ("hooks", "hooks (hooks/hooks.json, run on session events)"),
    ("monitors", "monitors (monitors/monitors.json, background commands)"),
    ("output-styles", "output styles"),
    ("themes", "themes"),
    ("workflows", "workflows"),
    ("bin", "executables (put on the Bash tool's PATH)"),
    (".mcp.json", "MCP servers (started with the plugin)"),
    (".lsp.json", "language servers (started with the plugin)"),
    ("settings.json", "default settings"),
)


def component_paths(root: Path) -> list[tuple[str, str]]:
    """(path below ``root``, what it would be) for each component path ``root`` holds, as Claude Code would find
    it: entries are listed, never followed, so a link counts by its own name."""
    try:
        with os.scandir(root) as entries:
            names = {entry.name.casefold(): entry.name for entry in entries}
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for path, what in COMPONENT_PATHS:
        first, _, rest = path.partition("/")
        name = names.get(first.casefold())
        if name is None:
            continue
        if rest:
            inner = _entry_named(root / name, rest)
            if inner is None:
                continue
            name = f"{name}/{inner}"
        found.append((name, what))
    return found


def _entry_named(folder: Path, name: str) -> str | None:
    """The entry of ``folder`` named ``name`` (case-insensitively), or None."""
    try:
        with os.scandir(folder) as entries:
            return next((e.name for e in entries if e.name.casefold() == name.casefold()), None)
    except (FileNotFoundError, NotADirectoryError):
        return None


def check_plugin_root(root: Path, shown: str, why: str) -> None:
    """Raise ConfigError, one line, when the plugin root ``root`` (``shown``: as the user knows it, ending in '/')
    holds a component path; ``why``: what the refusal stops."""
    found = component_paths(root)
    if found:
        path, what = found[0]
        others = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ConfigError(f"{shown}{path} would be a Claude Code plugin's {what}{others}: {shown} is the root of the "
                          f"generated plugins, which holds skill folders only; {why}. Move it out of {shown}, or "
                          "rename the skill")
