"""Names people type for ``install``: a slug, ``COLLECTION/`` (every skill of a plugin or category), or
``COLLECTION/NAME`` (a skill of it by slug or by its own name). The index is read only for the last two; a plain
name must be a slug, and anything else is refused before any request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.collections import Candidate, resolve_name
from ..core.errors import UsageError
from ..core.slugs import is_slug
from .locations import require_skill_name
from .registry import Registry


def _collections(index: dict[str, Any]) -> dict[str, list[str]]:
    """Each collection's name -> its skills' slugs, as the index lists them (what is not a string is ignored)."""
    found: dict[str, list[str]] = {}
    for item in index.get("collections") or ():
        if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("skills"), list):
            found[item["name"]] = [s for s in item["skills"] if isinstance(s, str)]
    return found


def expand(registry: Registry, wanted: Sequence[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """``wanted`` with each name made a slug: ``COLLECTION/`` becomes each of its skills (newest versions), the
    other forms the one skill they name (``core.collections.resolve_name``). Each slug once, in order."""
    for name, _ in wanted:
        if "/" not in name:
            require_skill_name(name)  # a plain name is a slug: refused before any request
    if all(is_slug(name) for name, _ in wanted):
        return list(wanted)
    index = registry.index()
    collections = _collections(index)
    candidates = [Candidate(s["name"], s.get("declared_name") if isinstance(s.get("declared_name"), str) else None,
                            tuple(n for n, members in collections.items() if s["name"] in members))
                  for s in index["skills"] if isinstance(s, dict) and isinstance(s.get("name"), str)]
    slugs: dict[str, str | None] = {}
    for name, spec in wanted:
        if name.endswith("/"):
            members = collections.get(name[:-1])
            if members is None:
                known = ", ".join(sorted(collections)) or "none"
                raise UsageError(f"no collection named `{name[:-1]}` in {registry.url} (its collections: {known})")
            if spec is not None:
                raise UsageError(f"{name}@{spec}: a collection installs each skill's newest version; "
                                 f"drop @{spec}, or install one skill as {name}NAME@{spec}")
            for slug in members:
                slugs.setdefault(slug, None)
        elif is_slug(name):
            slugs.setdefault(name, spec)
        else:
            slugs.setdefault(resolve_name(name, candidates), spec)
    return list(slugs.items())
