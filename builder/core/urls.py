"""The published URL scheme and the fields a publisher and a client read alike: a contract of both sides.

Paths are relative to the site root; the builder writes these files and the client and MCP server fetch them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

API_VERSION = 1
API_ROOT = "api/v1"
INDEX_PATH = f"{API_ROOT}/index.json"
# The registry's state in a few bytes: a digest over every skill's (name, latest). A client that finds it
# unchanged (HTTP 304) knows no installed skill has a new version, whatever the registry's size.
STATE_PATH = f"{API_ROOT}/state.json"
WELL_KNOWN_V1 = ".well-known/skills"
WELL_KNOWN_V2 = ".well-known/agent-skills"
# Every skill's frontmatter and file list in shards of a few thousand skills (skills-manifest.schema.json):
# what a listing with files reads (the MCP Skills extension's skills/list), one shard a page.
SKILLS_MANIFEST_PATH = f"{API_ROOT}/skills-manifest.json"
SKILLS_MANIFEST_ROOT = f"{API_ROOT}/skills-manifest"
# One document per collection (a plugin or a category): its fields and its skills' slugs.
COLLECTIONS_DIR = f"{API_ROOT}/collections"
# A signed registry's TUF metadata: every root version, the targets, bins, snapshot and timestamp.
TUF_DIR = f"{API_ROOT}/tuf"


def detail_path(name: str) -> str:
    return f"{API_ROOT}/skills/{name}.json"


def collection_path(name: str) -> str:
    return f"{COLLECTIONS_DIR}/{name}.json"


def skill_units(name: str) -> tuple[str, ...]:
    """The paths a skill owns in the output; each is replaced as a whole, and a signed registry's digests.json covers
    every file in them but itself."""
    return (detail_path(name), f"{API_ROOT}/skills/{name}", f"{API_ROOT}/bundles/{name}", f"{WELL_KNOWN_V1}/{name}")


def scoped_discovery_path(name: str) -> str:
    """A discovery v0.2 index of ``name`` alone, under the folder ``skills add <registry>/api/v1/skills/<name>``
    names: vercel's skills CLI then fetches this index and one archive, where with the registry's root index it
    downloads every skill's archive to pick one."""
    return f"{API_ROOT}/skills/{name}/{WELL_KNOWN_V2}/index.json"


def versions_path(name: str) -> str:
    """Every version the registry published of ``name``, newest first (see versions.schema.json)."""
    return f"{API_ROOT}/skills/{name}/versions.json"


def head_path(name: str) -> str:
    """What ``update`` needs of ``name`` in a few hundred bytes: its digest, version and ``latest``."""
    return f"{API_ROOT}/skills/{name}/head.json"


def state_digest(latest: Mapping[str, str | None]) -> str:
    """The digest state.json publishes: over each skill's name and latest digest ("-" for none), sorted by name.
    No commit or date goes in, so a build that changes no skill's latest publishes the same bytes."""
    text = "".join(f"{name} {latest[name] or '-'}\n" for name in sorted(latest))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def version_bundle_path(name: str, digest: str) -> str:
    """The zip of one version: named by its digest, so it never changes meaning and caches forever."""
    return f"{API_ROOT}/bundles/{name}/{name}-{digest.removeprefix('sha256:')[:12]}.zip"


def raw_path(name: str, path: str) -> str:
    """The API's own place for a skill's raw file, used where discovery v0.1 does not publish the skill's files."""
    return f"{API_ROOT}/skills/{name}/files/{path}"


def discovery_file_path(name: str, path: str) -> str:
    """Where discovery v0.1 publishes a skill's file (its clients fetch every file listed in its index)."""
    return f"{WELL_KNOWN_V1}/{name}/{path}"


def raw_copy_path(name: str, path: str, *, in_discovery: bool) -> str:
    """Where the one raw copy of a skill's file lives: its discovery v0.1 copy when that index publishes the skill's
    files, else under the API's ``files/``. Each raw byte is published once; readers follow the detail document's
    ``raw`` field, never this rule."""
    return discovery_file_path(name, path) if in_discovery else raw_path(name, path)


_SKILL_FILE = re.compile(rf"{re.escape(API_ROOT)}/skills/[^/]+/files/.+|{re.escape(WELL_KNOWN_V1)}/[^/]+/.+")


def is_skill_file(path: str) -> bool:
    """Whether ``path`` (relative to the site root) is where the build puts a copy of a skill's own file: a raw
    copy or a discovery v0.1 copy, which a host must never serve as a type a browser runs."""
    return _SKILL_FILE.fullmatch(path) is not None


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
