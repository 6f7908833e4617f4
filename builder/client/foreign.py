"""Skills another tool recorded in the shared ``skills-lock.json`` (vercel's ``skills`` CLI, or our own entry
after that CLI rewrote it): checked through their ``computedHash`` and restored from the registry whose discovery
index (ours, or any other's) still publishes their archive, but never changed, removed or rewritten.

Such an entry names no folder. vercel's CLI puts a project's skill in ``.agents/skills/NAME`` (and, for agents
that read another folder, a copy or link there), so its folder is looked for in every agent's skill folder, and a
restore writes ``.agents/skills/NAME``, where vercel's own restore writes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from ..core.errors import ClientError
from ..core.model import SkillFile, short_digest, skill_digest
from ..core.urls import API_ROOT, WELL_KNOWN_V2
from .agents import agent_table
from .archive import read_bundle
from .documents import DIGEST
from .folder_hash import computed_hash, folder_hash
from .install import FetchedSkill, fetch_skill, fetch_version, write_skill
from .lock import ForeignEntry, Lock
from .registry import Registry
from .targets import destinations, writable_folder
from .transport import NotFound
from .versions import read_history

RESTORE_FOLDER = ".agents/skills"  # where vercel's CLI restores a project's skills


@dataclass(frozen=True)
class ForeignCheck:
    name: str
    target: str | None  # the folder checked, as a lock records it; None when no agent's folder holds the skill
    status: str  # ok | modified | missing | unchecked
    why: str = ""


def _folders(lock: Lock, name: str) -> list[str]:
    """The agents' skill folders holding ``name``, as targets (each folder once)."""
    found: list[str] = []
    for agent in agent_table().agents.values():
        folder = agent.folder(global_=lock.global_, project_root=lock.base) / name
        if folder.is_dir():
            target = lock.target(folder)
            if target not in found:
                found.append(target)
    return found


def check(lock: Lock, entry: ForeignEntry) -> list[ForeignCheck]:
    """Every agent's folder that holds the skill, against the entry's ``computedHash``."""
    targets = _folders(lock, entry.name)
    if entry.computed_hash is None:
        return [ForeignCheck(entry.name, t, "unchecked", "its entry has no computedHash") for t in targets] or \
            [ForeignCheck(entry.name, None, "unchecked", "its entry has no computedHash")]
    if not targets:
        return [ForeignCheck(entry.name, None, "missing", "no agent's skill folder holds it")]
    checks = []
    for target in targets:
        found = folder_hash(lock.folder(target))
        if found is None:
            checks.append(ForeignCheck(entry.name, target, "unchecked", "its file names have no exact order here "
                                       "(see the lock reference), so its computedHash cannot be recomputed"))
        else:
            checks.append(ForeignCheck(entry.name, target, "ok" if found == entry.computed_hash else "modified",
                                       "" if found == entry.computed_hash else "its files do not match computedHash"))
    return checks


def registry_root(entry: ForeignEntry) -> str | None:
    """The registry a ``well-known`` entry came from: its ``sourceUrl`` without our one-skill folder suffix."""
    url = entry.text("sourceUrl")
    if entry.source_type != "well-known" or url is None or not url.startswith(("https://", "http://")):
        return None
    match = re.match(rf"^(.*/){re.escape(API_ROOT)}/skills/{re.escape(entry.name)}/?$", url)
    return match.group(1) if match else url.rstrip("/") + "/"


@dataclass(frozen=True)
class ForeignRestore:
    entry: ForeignEntry
    target: str | None  # the folder to write, None when nothing is written
    download: Callable[[], FetchedSkill] | None
    note: str  # what happened or why not, for the user


def plan(lock: Lock, entry: ForeignEntry, registry_for: Callable[[str], Registry]) -> ForeignRestore:
    """How ``install`` with no names restores ``entry``: from a registry of ours publishing the archive whose
    digest the entry locks (``wellKnownDigest``), into .agents/skills; otherwise nothing, and why."""
    def leave(why: str) -> ForeignRestore:
        return ForeignRestore(entry, None, None, f"{entry.name} ({entry.source_type}, installed by another tool): "
                                                 f"{why}; left alone")

    present = [c for c in check(lock, entry) if c.target is not None and c.status in ("ok", "unchecked")]
    if present:
        return ForeignRestore(entry, None, None, "")
    root, locked = registry_root(entry), entry.text("wellKnownDigest")
    if root is None or locked is None or not DIGEST.match(locked):
        return leave("its source is not a discovery index with digests, so skillreg cannot restore it")
    target = lock.target(lock.base / RESTORE_FOLDER / entry.name)
    if (lock.base / RESTORE_FOLDER / entry.name).exists():
        return leave(f"{target} differs from its computedHash")
    writable_folder(lock, target, entry.name, destinations(lock), recorded=True)
    try:
        registry = registry_for(root)
        download = _find_archive(registry, entry.name, locked.removeprefix("sha256:"))
    except ClientError as exc:
        return leave(str(exc))
    if download is None:
        return leave(f"{root} publishes no archive {short_digest(locked)}… of it")
    return ForeignRestore(entry, target, download, "")


def _find_archive(registry: Registry, name: str, sha256: str) -> Callable[[], FetchedSkill] | None:
    """The download of the version of ``name`` whose zip has ``sha256``: from versions.json or the detail on a
    registry of ours, else from the discovery index (v0.2) any other registry publishes."""
    try:
        history = read_history(registry, name)
        detail = registry.detail(name) if history is None else None
    except NotFound:
        return _from_discovery_index(registry, name, sha256)
    if history is not None:
        for version in history.versions:
            if version.zip is not None and version.zip.sha256 == sha256:
                return lambda: fetch_version(registry, name, version, history.where)
        return None
    assert detail is not None
    if detail["bundles"]["zip"]["sha256"] == sha256:
        return lambda: fetch_skill(registry, name, detail=detail)
    return None


def _from_discovery_index(registry: Registry, name: str, sha256: str) -> Callable[[], FetchedSkill] | None:
    """An ``archive`` entry of ``name`` with digest ``sha256`` in the registry's ``.well-known/agent-skills``
    index, whose URL stays inside the registry; None when there is none."""
    index_path = f"{WELL_KNOWN_V2}/index.json"
    rows = registry.document(index_path).get("skills")
    for row in rows if isinstance(rows, list) else []:
        if not (isinstance(row, dict) and row.get("name") == name and row.get("type") == "archive"
                and row.get("digest") == f"sha256:{sha256}" and isinstance(row.get("url"), str)):
            continue
        url = urljoin(registry.url + index_path, row["url"])
        if url.startswith(registry.url):
            path = unquote(urlsplit(url[len(registry.url):]).path)
            return lambda: _fetch_archive(registry, name, path, sha256)
    return None


def _fetch_archive(registry: Registry, name: str, path: str, sha256: str) -> FetchedSkill:
    """A zip archive from a discovery index, checked against the index's digest before it is opened."""
    files = read_bundle(registry.artifact(path, sha256, None))
    if not any(f.path == "SKILL.md" for f in files):
        raise ClientError(f"{registry.url}{path}: the archive of {name} has no SKILL.md at its root; nothing was "
                          "installed")
    # As from our own registry: scripts keep their executable bit, nothing outside scripts/ becomes executable.
    kept = tuple(SkillFile(f.path, f.data, f.executable and f.path.startswith("scripts/")) for f in files)
    return FetchedSkill(registry.url, name, None, skill_digest(list(kept)), "SKILL.md", kept, archive_sha256=sha256)


def restore(lock: Lock, planned: ForeignRestore) -> str:
    """Write one planned restore; the lock is not touched. Refuses files that do not give the entry's hash."""
    assert planned.download is not None and planned.target is not None
    skill = planned.download()
    files = {f.path: f.data for f in skill.files}
    locked = planned.entry.computed_hash
    if locked is not None and computed_hash(files) not in (locked, None):
        raise ClientError(f"{planned.entry.name}: the archive {short_digest(skill.archive_sha256 or '')}… does not "
                          f"hold the files its computedHash in {lock.path.name} names; nothing was written")
    write_skill(skill, Path(lock.folder(planned.target)))
    return planned.target
