"""Collections: the plugins and categories a registry's skills are grouped in.

A collection is a plugin (a folder holding ``plugin.json``, ``.claude-plugin/plugin.json`` or
``.codex-plugin/plugin.json``, or a plugin entry of the repository's ``.claude-plugin/marketplace.json``), a
category folder (the group discovery gives a skill, ``engineering/skills/x`` -> ``engineering``), or a category of
registry.yaml's ``categories:`` (its members name it in ``metadata.category``). Collections are memberships: a skill
is its folder, and a folder two plugins list is in both. A collection's name, description, version, author and
homepage are what the plugin says; its ``name`` here is a slug, unique among the registry's collections.

Everything read here comes from the repository, so it is hostile: files are read up to a bound, a plugin's source
or skill path leading out of the repository lists nothing, and a file that does not parse is a warning, never a
stop (Claude Code would refuse it anyway; the skills stay published).
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import RegistryConfig
from .discovery import Discovery
from .errors import UsageError
from .slugs import derive_slug, is_slug

MARKETPLACE_FILE = ".claude-plugin/marketplace.json"
# Where a plugin folder's manifest is, first found wins: Claude Code's, Agent Plugins 1.0.0's, Codex's.
PLUGIN_MANIFESTS = (".claude-plugin/plugin.json", "plugin.json", ".codex-plugin/plugin.json")
MAX_JSON_BYTES = 1 << 20  # a marketplace or plugin file larger than this is not read
PLUGIN, CATEGORY = "plugin", "category"


@dataclass(frozen=True)
class Collection:
    """One plugin or category and the skills in it (by their paths in the repository)."""

    name: str  # slug, unique among the registry's collections
    kind: str  # PLUGIN or CATEGORY
    title: str  # the name as the plugin or registry.yaml writes it
    skills: tuple[str, ...]  # repository paths of its skills, sorted
    folder: str | None = None  # the plugin or category folder, repository-relative ("." for the top)
    description: str = ""
    version: str | None = None
    author: str | None = None
    homepage: str | None = None

    def to_json(self, slugs: Mapping[str, str]) -> dict[str, Any]:
        """The collection as the API publishes it; ``slugs``: repository path -> slug of each published skill
        (a member that is not published is left out)."""
        return {"name": self.name, "kind": self.kind, "title": self.title, "folder": self.folder,
                "description": self.description, "version": self.version, "author": self.author,
                "homepage": self.homepage, "skills": sorted(slugs[p] for p in self.skills if p in slugs)}


@dataclass(frozen=True)
class Collections:
    """A registry's collections, and the one-line warnings about files that could not be read."""

    items: tuple[Collection, ...]
    warnings: tuple[str, ...] = ()

    def of(self, path: str) -> list[str]:
        """The names of the collections the skill at ``path`` is in."""
        return [c.name for c in self.items if path in c.skills]


def read_json(path: Path, shown: str) -> tuple[Any, str | None]:
    """A small JSON file's value, or (None, the line that says why not). A missing file is (None, None)."""
    try:
        if path.is_symlink() or not path.is_file():
            return None, None
        if path.stat().st_size > MAX_JSON_BYTES:
            return None, f"{shown}: larger than {MAX_JSON_BYTES} bytes; not read"
        return json.loads(path.read_bytes()), None
    except (OSError, ValueError) as exc:
        return None, f"{shown}: not valid JSON ({str(exc).splitlines()[0]}); its collections are left out"


def _text(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return " ".join(value.split()) or None


def _author(value: object) -> str | None:
    return _text(value.get("name")) if isinstance(value, dict) else _text(value)


def repository_path(root: str, base: str, written: object) -> str | None:
    """The repository path ``written`` (relative to the repository folder ``base``) names, or None when it is not
    a relative path or leads out of the repository."""
    if not isinstance(written, str) or not written.strip() or written.startswith("/") or "\\" in written:
        return None
    joined = posixpath.normpath(posixpath.join(base, written))
    if joined == ".." or joined.startswith("../"):
        return None
    real = os.path.realpath(os.path.join(root, joined))
    if not (real == root or real.startswith(root + os.sep)):
        return None
    return joined


@dataclass(frozen=True)
class Draft:
    """A collection before its name is made unique: what a plugin entry or folder says."""

    title: str
    kind: str
    folder: str | None
    skills: frozenset[str]
    fields: Mapping[str, Any]


def _manifest(root: Path, folder: str) -> tuple[dict[str, Any] | None, str | None]:
    for name in PLUGIN_MANIFESTS:
        rel = posixpath.join(folder, name) if folder != "." else name
        value, problem = read_json(root / rel, rel)
        if problem or value is not None:
            return (value if isinstance(value, dict) else None), problem or (
                None if isinstance(value, dict) else f"{rel}: not a JSON object; left out")
    return None, None


def _members(found: Sequence[str], folder: str) -> frozenset[str]:
    """The skills of a plugin folder that lists none: its ``skills/`` folder's direct children."""
    prefix = "" if folder == "." else folder + "/"
    return frozenset(p for p in found if posixpath.dirname(p) == prefix + "skills")


def marketplace_entry(root: Path, real_root: str, found: Sequence[str], entry: object, plugin_root: str
                      ) -> tuple[Draft | None, str | None]:
    """One marketplace plugin entry as a draft collection: its folder (a relative ``source``), the skills it lists
    (``skills`` paths from that folder, else the folder's ``skills/``) and its fields over its manifest's."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return None, None
    folder = entry_folder(real_root, entry, plugin_root)
    if folder is None:  # a git, GitHub or npm source, or one out of the repository: nothing of this registry
        return None, None
    return entry_draft(root, real_root, found, entry, folder)


def entry_folder(real_root: str, entry: dict[str, Any], plugin_root: str) -> str | None:
    """The repository folder a marketplace entry's relative ``source`` names (``metadata.pluginRoot`` before a
    bare one), or None for another kind of source or one leading out of the repository."""
    source = entry.get("source")
    if isinstance(source, str) and not source.startswith("./") and plugin_root:
        source = posixpath.join(plugin_root, source)
    return repository_path(real_root, ".", source) if isinstance(source, str) else None


def entry_draft(root: Path, real_root: str, found: Sequence[str], entry: dict[str, Any], folder: str
                ) -> tuple[Draft, str | None]:
    """The draft of a marketplace entry whose plugin folder is ``folder`` (repository-relative)."""
    manifest, problem = _manifest(root, folder) if entry.get("strict", True) is not False else (None, None)
    listed = entry.get("skills")
    if isinstance(listed, str):
        listed = [listed]
    known = set(found)
    if isinstance(listed, list):
        paths = {repository_path(real_root, folder, p) for p in listed}
        members = {p for p in paths if p in known}
        # a listed folder of skills (``./skills/``) holds those below it
        members |= {f for p in paths if p and p not in known for f in found if posixpath.dirname(f) == p}
    else:
        members = set(_members(found, folder))
    return Draft(entry["name"], PLUGIN, folder, frozenset(members), {**(manifest or {}), **entry}), problem


def _marketplace_drafts(root: Path, found: Sequence[str]) -> tuple[list[Draft], list[str]]:
    document, problem = read_json(root / MARKETPLACE_FILE, MARKETPLACE_FILE)
    if not isinstance(document, dict) or not isinstance(document.get("plugins"), list):
        return [], [problem] if problem else []
    meta = document.get("metadata")
    plugin_root = meta.get("pluginRoot") if isinstance(meta, dict) else None
    drafts, warnings = [], []
    real_root = os.path.realpath(root)
    for entry in document["plugins"]:
        draft, problem = marketplace_entry(root, real_root, found, entry,
                                           plugin_root if isinstance(plugin_root, str) else "")
        if problem:
            warnings.append(problem)
        if draft is not None:
            drafts.append(draft)
    return drafts, warnings


def _folder_drafts(root: Path, discovery: Discovery, taken: set[str]) -> tuple[list[Draft], list[str]]:
    """A draft per group folder no marketplace entry names: a plugin when it holds a manifest, else a category."""
    groups: dict[str, set[str]] = {}
    for skill in discovery.skills:
        if skill.group:
            groups.setdefault(skill.group, set()).add(skill.path)
    drafts, warnings = [], []
    for folder, members in sorted(groups.items()):
        if folder in taken:
            continue
        manifest, problem = _manifest(root, folder)
        if problem:
            warnings.append(problem)
        last = posixpath.basename(folder).lstrip(".") or folder
        if manifest is not None:
            named = manifest.get("name")
            title = named if isinstance(named, str) else last
            drafts.append(Draft(title, PLUGIN, folder, frozenset(members), manifest))
        else:
            drafts.append(Draft(last, CATEGORY, folder, frozenset(members), {}))
    return drafts, warnings


def read_collections(config: RegistryConfig, discovery: Discovery,
                     categories: Mapping[str, str | None] | None = None) -> Collections:
    """Every collection of a registry: the marketplace file's plugins, the other plugin and category folders,
    and registry.yaml's categories (``categories``: each skill's ``metadata.category``, by path). Plugins and
    folders come in the order people read them; names are made unique (``-2``...) in that order."""
    root = discovery.root
    found = [s.path for s in discovery.skills]
    drafts, warnings = _marketplace_drafts(root, found)
    folder_drafts, more = _folder_drafts(root, discovery, {d.folder for d in drafts if d.folder})
    drafts += folder_drafts
    warnings += more
    by_category: dict[str, set[str]] = {}
    for path, slug in (categories or {}).items():
        if slug:
            by_category.setdefault(slug, set()).add(path)
    for category in config.categories:
        drafts.append(Draft(category.slug, CATEGORY, None, frozenset(by_category.get(category.slug, ())),
                             {"description": category.description or category.title}))
    return Collections(tuple(_named(drafts)), tuple(warnings))


def _named(drafts: Iterable[Draft]) -> list[Collection]:
    taken: set[str] = set()
    made = []
    for draft in drafts:
        base = draft.title if is_slug(draft.title) else derive_slug(draft.title)
        name, n = base, 2
        while name in taken:
            name, n = f"{base}-{n}", n + 1
        taken.add(name)
        fields = draft.fields
        made.append(Collection(
            name=name, kind=draft.kind, title=draft.title, skills=tuple(sorted(draft.skills)), folder=draft.folder,
            description=_text(fields.get("description")) or "", version=_text(fields.get("version")),
            author=_author(fields.get("author")), homepage=_text(fields.get("homepage"))))
    return made


# -------------------------------------------------------------------------------------------- names people type

@dataclass(frozen=True)
class Candidate:
    """A published skill as a name is resolved against it: its slug, its own name and its collections."""

    slug: str
    declared: str | None = None
    collections: tuple[str, ...] = ()


def resolve_name(query: str, candidates: Sequence[Candidate]) -> str:
    """The slug ``query`` names: a slug itself (published URLs never change meaning); ``COLLECTION/NAME``, a
    skill of that collection by slug or own name; else a skill's own name when one skill has it. A name several
    skills have is an error listing them; so is one no skill has."""
    collection, _, name = query.rpartition("/")
    pool = [c for c in candidates if collection in c.collections] if collection else list(candidates)
    exact = [c for c in pool if c.slug == name]
    if len(exact) == 1:
        return exact[0].slug
    named = [c for c in pool if c.declared == name]
    if len(named) == 1:
        return named[0].slug
    if len(named) > 1:
        listed = ", ".join(f"{c.slug} ({'/'.join(c.collections) or 'no collection'})"
                           for c in sorted(named, key=lambda c: c.slug))
        raise UsageError(f"`{query}` names {len(named)} skills: {listed}; install one by its slug or as "
                         "COLLECTION/NAME")
    where = f" in collection `{collection}`" if collection else ""
    raise UsageError(f"no skill named `{name}`{where}")
