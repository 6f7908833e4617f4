"""The shape of ``skills-lock.json``, shared with vercel's ``skills`` CLI, which writes a lock of the same name.

Its format is ``{"version": 1, "skills": {NAME: ENTRY}}``; its reader treats any other top level as an empty
lock, and its writer keeps only ``version`` and ``skills`` and replaces a whole entry when it adds or updates a
skill. So everything of ours lives inside each entry, beside the fields that CLI reads (``source``,
``sourceType``, ``sourceUrl``, ``computedHash``, ``wellKnownDigest``), which we write too so it can restore and
update the skill from the registry's discovery index. Ours are ``OUR_FIELDS``; new fields of ours go beside them,
as lower-case words that CLI does not use. An entry without our ``digest`` another tool wrote (or rewrote): it is
kept as it was read, values and key order, and never rewritten. Our first format (``lock_version: 1`` alone)
still reads, and is written back in the shared one at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import ClientError
from ..core.loader import path_problems
from ..core.urls import API_ROOT
from .documents import DIGEST, NAME, SHA256

LOCK_FILE = "skills-lock.json"
FORMAT_VERSION = 1  # vercel's ``version``
OLD_FORMAT_VERSION = 1  # our first format's ``lock_version``
OUR_FIELDS = ("digest", "files", "name", "registry", "targets", "version")  # beside vercel's fields in each entry


@dataclass(frozen=True)
class LockEntry:
    """A skill this client installed: where from, at which digest, into which folders."""

    name: str
    registry: str
    version: str | None
    digest: str
    targets: tuple[str, ...]  # skill folders, as recorded (relative to the project, or ~/...)
    files: Mapping[str, str] = field(default_factory=dict)  # path -> sha256 hex, to tell local edits
    computed_hash: str | None = None  # vercel's folder hash of the files (see folder_hash)
    archive_sha256: str | None = None  # the zip's sha256: what the registry's discovery index calls its digest
    trust_root: str | None = None  # the signed registry's root (sha256 hex) it is verified from: binding (pins.py)
    trust_root_version: int = 1  # that root's version: 1, unless the user pinned a later one (--trust-root FILE)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "registry": self.registry, "version": self.version, "digest": self.digest,
                "targets": sorted(self.targets), "files": dict(sorted(self.files.items())),
                **trust_field(self.trust_root, self.trust_root_version)}

    def source_url(self) -> str:
        """What vercel's CLI restores and updates the skill from: the registry's one-skill discovery folder, the
        address the skill's page gives for ``npx skills add``."""
        return f"{self.registry}{API_ROOT}/skills/{self.name}"

    def to_json(self) -> dict[str, Any]:
        """The entry as written: vercel's fields and ours, keys sorted."""
        entry: dict[str, Any] = {"source": urlsplit(self.registry).hostname or self.registry,
                                 "sourceType": "well-known", "sourceUrl": self.source_url(),
                                 "name": self.name, "digest": self.digest, "files": dict(sorted(self.files.items())),
                                 "registry": self.registry, "targets": sorted(self.targets), "version": self.version}
        if self.computed_hash is not None:
            entry["computedHash"] = self.computed_hash
        if self.archive_sha256 is not None:
            entry["wellKnownDigest"] = f"sha256:{self.archive_sha256}"
        entry.update(trust_field(self.trust_root, self.trust_root_version))
        return dict(sorted(entry.items()))


@dataclass(frozen=True)
class ForeignEntry:
    """A skill another tool recorded: kept exactly as read, shown and checked but never changed."""

    name: str
    raw: Mapping[str, Any]

    def text(self, key: str) -> str | None:
        value = self.raw.get(key)
        return value if isinstance(value, str) else None

    @property
    def source_type(self) -> str:
        return self.text("sourceType") or "unknown"

    @property
    def computed_hash(self) -> str | None:
        value = self.text("computedHash")
        return value if value is not None and SHA256.match(value) else None


@dataclass(frozen=True)
class ParsedLock:
    entries: dict[str, LockEntry]
    foreign: dict[str, ForeignEntry]
    old_format: bool  # our first format: to be written in this one at once


def parse_document(data: object, path: Path, global_: bool) -> ParsedLock:
    """The entries of a parsed lock file, checked; refuses what is neither format."""
    if isinstance(data, dict) and data.get("lock_version") == OLD_FORMAT_VERSION and "version" not in data \
            and isinstance(data.get("skills"), dict):
        entries = {name: _entry(path, name, raw, global_, old=True) for name, raw in data["skills"].items()}
        return ParsedLock(entries, {}, True)
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION or not isinstance(data.get("skills"), dict):
        raise ClientError(f"{path} is not a version-{FORMAT_VERSION} skills lock file "
                          "(it needs `\"version\": 1` and a `skills` object)")
    entries, foreign = {}, {}
    for name, raw in data["skills"].items():
        if isinstance(raw, dict) and "digest" in raw:
            entries[name] = _entry(path, name, raw, global_, old=False)
        elif isinstance(raw, dict):
            foreign[name] = ForeignEntry(name, raw)
        else:
            raise ClientError(f"{path}: skill {name!r}: the entry is not a JSON object")
    return ParsedLock(entries, foreign, False)


def _entry(path: Path, name: str, raw: object, global_: bool, *, old: bool) -> LockEntry:
    def bad(why: str) -> ClientError:
        return ClientError(f"{path}: skill {name!r}: {why}")

    if not isinstance(raw, dict) or not NAME.match(name) or raw.get("name", name) != name or \
            (old and raw.get("name") != name):
        raise bad("the entry's name does not match its key")
    ours: dict[str, Any] = raw
    if not isinstance(ours.get("registry"), str) or not DIGEST.match(str(ours.get("digest", ""))):
        raise bad("needs a registry URL and a sha256: digest")
    version = ours.get("version")
    if version is not None and not isinstance(version, str):
        raise bad("`version` must be a string")
    targets = ours.get("targets")
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
        raise bad("`targets` must list the folders the skill is installed in")
    for target in targets:
        _check_target(target, name, global_, bad)
    files = ours.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(p, str) and not path_problems(p) and isinstance(h, str)
                                              and SHA256.match(h) for p, h in files.items()):
        raise bad("`files` must map relative paths to sha256 hashes")
    computed = None if old else raw.get("computedHash")
    archive = None if old else raw.get("wellKnownDigest")
    if computed is not None and not (isinstance(computed, str) and SHA256.match(computed)):
        raise bad("`computedHash` must be a hex SHA-256")
    if archive is not None and not (isinstance(archive, str) and DIGEST.match(archive)):
        raise bad("`wellKnownDigest` must be a sha256: digest")
    trust_root = ours.get("trust_root")
    if trust_root is not None and not (isinstance(trust_root, str) and SHA256.match(trust_root)):
        raise bad("`trust_root` must be the sha256 of the registry's root first trusted")
    root_version = ours.get("trust_root_version", 1)
    if isinstance(root_version, bool) or not isinstance(root_version, int) or root_version < 1 or \
            (root_version != 1 and trust_root is None):
        raise bad("`trust_root_version` must be a root version (1 or more) beside `trust_root`")
    return LockEntry(name, ours["registry"], version, ours["digest"], tuple(sorted(targets)), files, computed,
                     archive.removeprefix("sha256:") if archive else None, trust_root, root_version)


def trust_field(trust_root: str | None, version: int = 1) -> dict[str, Any]:
    """The entry's record of the signed registry's root it trusts (none for an unsigned registry): the root file's
    sha256 and, when it is not the registry's first root, its version (the file a fresh clone fetches and checks)."""
    if trust_root is None:
        return {}
    return {"trust_root": trust_root, **({"trust_root_version": version} if version != 1 else {})}


def _check_target(target: str, name: str, global_: bool, bad: Any) -> None:
    parts = PurePosixPath(target).parts
    if parts[-1:] != (name,) or ".." in parts:
        raise bad(f"target {target!r} must end in the skill's own folder and contain no `..`")
    if global_:
        if not (target.startswith("~/") or target.startswith("/")):
            raise bad(f"target {target!r} must start with ~/ or /")
    elif target.startswith(("/", "~")) or path_problems(target):
        raise bad(f"target {target!r} must be a folder inside the project")


def dumps(entries: Mapping[str, LockEntry], foreign: Mapping[str, ForeignEntry]) -> bytes:
    """The lock file's bytes: skills sorted by name, as vercel's writer sorts them; ours with sorted keys, another
    tool's as they were read; two-space indent and a newline at the end, as both writers do."""
    skills: dict[str, Any] = {}
    for name in sorted({*entries, *foreign}):
        skills[name] = entries[name].to_json() if name in entries else foreign[name].raw
    # ``lock_version`` and each entry's ``name`` keep the file readable by skillreg clients released before the
    # shared format (vercel's writer drops the former; such a client then refuses the file, losing nothing).
    text = json.dumps({"version": FORMAT_VERSION, "skills": skills, "lock_version": OLD_FORMAT_VERSION}, indent=2,
                      ensure_ascii=False)
    return (text + "\n").encode("utf-8")
