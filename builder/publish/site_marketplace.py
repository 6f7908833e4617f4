"""The Claude Code marketplace the built site serves (``.claude-plugin/marketplace.json`` at its root), so that
``/plugin marketplace add <site>/.claude-plugin/marketplace.json`` works without cloning the repository.

A marketplace added by URL fetches that one file, so a relative plugin ``source`` cannot resolve: each one the
repository's own file gives becomes a git source of the registry's ``repository`` at the commit the site was built
from (``git-subdir`` with the plugin's folder, or ``url`` for a plugin rooted at the repository's top). Everything
else in the file stays as the repository has it (``skillreg marketplace`` keeps it current); a registry without
that file or without ``repository`` serves none.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..core.bundle import dumps
from ..core.collections import MARKETPLACE_FILE, MAX_JSON_BYTES, entry_folder
from ..core.config import RegistryConfig

SITE_MARKETPLACE = MARKETPLACE_FILE
SITE_MARKETPLACE_DIR = ".claude-plugin"


def git_url(repository: str) -> str:
    """The repository's URL as git clones it: a GitHub web address gets its ``.git``."""
    url = repository.rstrip("/")
    return url + ".git" if url.startswith("https://github.com/") and not url.endswith(".git") else url


def site_marketplace(config: RegistryConfig, commit: str | None) -> bytes | None:
    """The file's bytes for the site, or None when the registry has no marketplace file, no ``repository`` or
    no commit (a git source names one), or its file is not a marketplace."""
    path = config.root / MARKETPLACE_FILE
    if not config.repository or not commit or path.is_symlink() or not path.is_file() \
            or path.stat().st_size > MAX_JSON_BYTES:
        return None
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("plugins"), list):
        return None
    meta = document.get("metadata")
    plugin_root = meta.pop("pluginRoot", "") if isinstance(meta, dict) else ""
    real_root = os.path.realpath(config.root)
    url = git_url(config.repository)
    for entry in document["plugins"]:
        if not isinstance(entry, dict):
            continue
        folder = entry_folder(real_root, entry, plugin_root if isinstance(plugin_root, str) else "")
        if folder is not None:
            source: dict[str, Any] = {"source": "url", "url": url, "sha": commit} if folder == "." else \
                {"source": "git-subdir", "url": url, "path": folder, "sha": commit}
            entry["source"] = source
    return dumps(document)
