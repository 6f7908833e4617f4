"""The published URL scheme and the fields a publisher and a client read alike: a contract of both sides.

Paths are relative to the site root; the builder writes these files and the client and MCP server fetch them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

API_VERSION = 1
API_ROOT = "api/v1"
INDEX_PATH = f"{API_ROOT}/index.json"
WELL_KNOWN_V1 = ".well-known/skills"
WELL_KNOWN_V2 = ".well-known/agent-skills"


def detail_path(name: str) -> str:
    return f"{API_ROOT}/skills/{name}.json"


def versions_path(name: str) -> str:
    """Every version the registry published of ``name``, newest first (see versions.schema.json)."""
    return f"{API_ROOT}/skills/{name}/versions.json"


def version_bundle_path(name: str, digest: str) -> str:
    """The zip of one version: named by its digest, so it never changes meaning and caches forever."""
    return f"{API_ROOT}/bundles/{name}/{name}-{digest.removeprefix('sha256:')[:12]}.zip"


def raw_path(name: str, path: str) -> str:
    return f"{API_ROOT}/skills/{name}/files/{path}"


def page_path(name: str) -> str:
    return f"skills/{name}/"


def declared_author(frontmatter: Mapping[str, Any]) -> str | None:
    """The author the skill names for itself (``metadata.author``); git's commit authors are its contributors."""
    meta = frontmatter.get("metadata")
    author = meta.get("author") if isinstance(meta, Mapping) else None
    if not isinstance(author, str) or not author.strip():
        return None
    return author.strip()


_OPTIONAL_SITE_FILE = re.compile(r"sitemap-[0-9]+\.xml|robots\.txt")


def optional_site_file(name: str) -> bool:
    """Top-level files the site writer adds only some builds (the parts of a sitemap index, robots.txt for a site
    at the root of its host): a rebuild that no longer writes one must remove the old one."""
    return _OPTIONAL_SITE_FILE.fullmatch(name) is not None
