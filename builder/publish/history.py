"""Every version a skill had on the built branch, from the states git history gives (``history_walk``).

``GitObjects`` reads the blobs of a state through one ``git cat-file`` process, and
``load_state`` turns a state into what the loader would have read from a checkout of that commit: the same
ignore rules, the same limits, and today's rules on top (a version failing one is withdrawn, without bytes).
A state's digest names the version; a revert to an earlier digest is that version again.

Nothing here depends on the clock: times are committer times, so a build of one commit is reproducible.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from ..core.bundle import zip_bytes
from ..core.config import HistoryPolicy, Limits, RegistryConfig
from ..core.diagnostics import RULES, Severity
from ..core.errors import ConfigError
from ..core.frontmatter import parse_skill_md
from ..core.loader import SKILL_MD, SKILL_MD_FALLBACK, read_tree, sorted_and_checked
from ..core.model import Skill, SkillFile, sha256_hex, skill_digest
from ..core.urls import API_VERSION, state_digest, version_bundle_path
from ..validate.checks import check_skill
from .api import url_of
from .bundlecache import BundleCache, bundle_members
from .git_objects import CheckedBlobs, Entry, GitObjects, GitTree
from .history_walk import GitHistory, Snapshot, read_skills_history

__all__ = ["GitHistory", "Snapshot", "read_skills_history"]  # the walk's values, for the modules that read versions

# -------------------------------------------------------------------------------------- one state, as loaded

@dataclass(frozen=True)
class StateRecord:
    """What a snapshot of a skill folder is, derived from its bytes and today's rules on every build."""

    digest: str | None  # None: not a skill (no SKILL.md in the folder)
    version: str | None = None
    rules: tuple[str, ...] = ()  # the codes of today's error rules it fails (then it is withdrawn)
    reason: str | None = None


def version_of(skill: Skill) -> str | None:
    """``metadata.version``, else a top-level ``version`` (Claude Code's field), when it is a string."""
    version = skill.version or skill.field("version")
    return version if isinstance(version, str) else None


def same_files(entries: Sequence[Entry], files: Sequence[SkillFile]) -> bool:
    """Whether a state holds exactly ``files``: the same paths of plain files, executable alike, with the blob ids
    of their bytes. Such a state loads as the skill they were loaded into, so its checks need not run twice."""
    if len(entries) != len(files):
        return False
    by_path = {f.path: f for f in files}
    for path, mode, oid in entries:
        f = by_path.get(path)
        if f is None or mode != ("100755" if f.executable else "100644"):
            return False
        if hashlib.sha1(b"blob %d\0" % len(f.data) + f.data).hexdigest() != oid:
            return False
    return True


def load_state(name: str, entries: Sequence[Entry], objects: GitObjects | CheckedBlobs, config: RegistryConfig,
               profile: str, path: str | None = None) -> tuple[StateRecord, tuple[SkillFile, ...]]:
    """The skill a checkout of this state would load, with the errors today's rules find in it (then it is withdrawn:
    an unsafe file, SK5xx, or a SKILL.md today's build would refuse to publish).

    Git's file list goes through the loader's own walk (``read_tree`` over a ``GitTree``): a symbolic link (mode
    120000) is SK501, a junk file or folder SK510, a file over the size limit SK507 and is not read, an unsafe name
    SK503-SK505/SK513-SK516.
    Sizes come from git's object headers before any content: a state whose loadable files together pass
    ``max_skill_bytes`` (or the file-count limit) is withdrawn without reading one of its blobs.
    """
    limits = config.limits
    folder = config.root / path if path is not None else config.skills_path / name  # as its checkout shows it
    found: list[tuple[str, str]] = []

    def report(code: str, rel: str, message: str, line: int = 0, **_kw: object) -> None:
        found.append((code, message))

    tree = GitTree(entries, objects)
    count = read_tree(tree, "", limits, report)
    listed = {p for p, _, _ in entries}
    if count > limits.max_files or tree.wanted_bytes > limits.max_skill_bytes:
        # Reading what a checkout would load would itself pass the limits: withdrawn on its sizes alone.
        if not listed & {SKILL_MD, SKILL_MD_FALLBACK}:
            return StateRecord(None), ()  # never a skill
        return _checked(unread_digest(entries), None, found), ()
    objects.fetch(oid for _, oid, _ in tree.wanted)
    files = sorted_and_checked([SkillFile(path=rel, data=objects.read(oid), executable=executable)
                                for rel, oid, executable in tree.wanted], report)

    by_path = {f.path: f for f in files}
    skill_md = SKILL_MD if SKILL_MD in by_path else SKILL_MD_FALLBACK if SKILL_MD_FALLBACK in by_path else None
    if skill_md is None and not found:
        return StateRecord(None), ()
    if skill_md is None and not listed & {SKILL_MD, SKILL_MD_FALLBACK}:
        return StateRecord(None), ()  # never a skill, whatever else is wrong with the folder
    skill = Skill(name, folder, skill_md or SKILL_MD, None, "", 1, tuple(files))
    if skill_md is not None:
        parsed = parse_skill_md(by_path[skill_md].data, f"{folder}/{skill_md}",
                                max_frontmatter_bytes=limits.max_frontmatter_bytes, skill=name)
        skill = Skill(name, folder, skill_md, parsed.frontmatter, parsed.body, parsed.body_line, tuple(files))
        found.extend((d.code, d.message) for d in parsed.diagnostics if d.severity is Severity.ERROR)
    found.extend((d.code, d.message) for d in check_skill(skill, config, profile) if d.severity is Severity.ERROR)
    record = _checked(skill_digest(files), version_of(skill), found)
    return record, (() if record.rules else tuple(files))


def _checked(digest: str, version: str | None, found: Sequence[tuple[str, str]]) -> StateRecord:
    """The record of a state with these findings: withdrawn, with every failed error rule named, when there is one."""
    failed: dict[str, str] = {}
    for code, message in found:
        if RULES[code].severity is Severity.ERROR:
            failed.setdefault(code, message)
    if failed:
        reason = "fails " + "; ".join(f"{code}: {failed[code]}" for code in sorted(failed))
        return StateRecord(digest, version, tuple(sorted(failed)), reason)
    return StateRecord(digest, version)


def unread_digest(entries: Sequence[Entry]) -> str:
    """Names a state withdrawn on its sizes alone, whose bytes are never read: a SHA-256 over its git file list
    (path, mode, blob id), in a form no skill digest's input takes, so it never names a version with bytes."""
    text = "".join(f"{path}\0git {mode} {oid}\n" for path, mode, oid in sorted(entries))
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


# ------------------------------------------------------------------------------------------------- versions

@dataclass(frozen=True)
class Version:
    digest: str
    version: str | None
    commit: str | None
    time: str | None
    position: int  # on the first-parent chain; the work tree's uncommitted state comes after every commit
    status: str = "available"
    reason: str | None = None
    rules: tuple[str, ...] = ()
    zip: dict[str, Any] | None = None

    @property
    def has_bytes(self) -> bool:
        return self.status in ("available", "yanked")

    def to_dict(self) -> dict[str, Any]:
        return {"digest": self.digest, "version": self.version, "commit": self.commit, "time": self.time,
                "status": self.status, "reason": self.reason, "rules": list(self.rules), "zip": self.zip}


@dataclass(frozen=True)
class Head:
    """The work tree's version of a skill, built as today (its zip is already written)."""

    digest: str
    version: str | None
    zip: dict[str, Any]
    files: tuple[SkillFile, ...] = ()  # its bytes: the last commit's snapshot usually holds the same


def order(versions: Iterable[Version]) -> list[Version]:
    """Newest first: by the time of the first commit that published each digest, then by chain position."""
    return sorted(versions, key=lambda v: (v.time or "9999", v.position), reverse=True)


def apply_policy(name: str, versions: list[Version], policy: HistoryPolicy, head: str | None) -> list[Version]:
    """Statuses from registry.yaml: taken down, yanked, and pruned beyond ``keep``; the head keeps its bytes."""
    yanked = {m.digest: m.reason for m in policy.yanked if m.name == name}
    taken = {m.digest: m.reason for m in policy.taken_down if m.name == name}
    kept = 0
    result: list[Version] = []
    for v in versions:
        if v.digest in taken:
            v = replace(v, status="taken-down", reason=taken[v.digest], rules=(), zip=None)
        elif v.status == "withdrawn":
            pass
        else:
            too_old = (policy.keep is not None and kept >= policy.keep) or (
                policy.since is not None and v.time is not None and date.fromisoformat(v.time[:10]) < policy.since)
            if too_old and v.digest != head:
                v = replace(v, status="pruned", rules=(), zip=None,
                            reason=f"older than the history kept by registry.yaml ({policy.describe_keep()})")
            else:
                kept += 1
                if v.digest in yanked:
                    v = replace(v, status="yanked", reason=yanked[v.digest])
        result.append(v)
    return result


def check_marks(policy: HistoryPolicy, config_path: Path | None,
                digests: Callable[[str], set[str] | None], heads: Mapping[str, str]) -> None:
    """Every yanked or taken-down entry names a skill and one of its versions; a takedown never names the head."""
    for section, marks in (("yanked", policy.yanked), ("taken_down", policy.taken_down)):
        for mark in marks:
            known = digests(mark.name)
            where = mark.where(config_path, section)
            if known is None:
                raise ConfigError(f"{where}: no skill `{mark.name}` in the registry or its history")
            if mark.digest not in known:
                raise ConfigError(f"{where}: `{mark.name}` never had the version {mark.digest} "
                                  f"(its versions: {', '.join(sorted(known))})")
            if section == "taken_down" and heads.get(mark.name) == mark.digest:
                raise ConfigError(f"{where}: {mark.digest} is what the skill `{mark.name}` holds now; change or remove "
                                  "the skill folder to take this version down")


def latest_of(versions: Sequence[Version], head: str | None) -> str | None:
    """What ``install NAME`` takes: the head, unless it is yanked; then the newest available one."""
    if head is None:
        return None
    if any(v.digest == head and v.status == "available" for v in versions):
        return head
    return next((v.digest for v in versions if v.status == "available"), None)


def versions_document(name: str, kind: str, latest: str | None, versions: Sequence[Version],
                      start: str | None = None) -> dict[str, Any]:
    """api/v1/skills/NAME/versions.json; ``start``, the commit registry.yaml's history.start names, only when set."""
    return {"api_version": API_VERSION, "name": name, "history": kind, "latest": latest,
            "versions": [v.to_dict() for v in versions], **({"history_start": start} if start else {})}


def head_document(name: str, head: Head | None, latest: str | None, updated: str | None) -> dict[str, Any]:
    """api/v1/skills/NAME/head.json: what an update check needs (see head.schema.json). A skill gone from
    skills/ keeps one saying ``latest`` null, as its versions.json does."""
    return {"api_version": API_VERSION, "name": name, "digest": head.digest if head else None,
            "version": head.version if head else None, "latest": latest, "updated": updated}


def state_document(count: int, latest: Mapping[str, str | None],
                   publish: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """api/v1/state.json: how many skills the registry publishes and a digest over every (name, latest) of the
    skills that publish a head.json (those gone from skills/ with latest null); ``publish``: the lean settings
    the build chose itself (``host_fit``), named only then."""
    extra = {"publish": dict(publish)} if publish is not None else {}
    return {"api_version": API_VERSION, "count": count, "digest": state_digest(latest), **extra}


@dataclass
class _Group:
    """The snapshots of one digest: the first names the version, the first that passes gives its bytes."""

    first: Snapshot
    record: StateRecord
    source: Snapshot | None = None
    files: tuple[SkillFile, ...] = ()  # the source's files, as loaded


def skill_versions(name: str, where: str, snapshots: Sequence[Snapshot], head: Head | None, objects: GitObjects | None,
                   cache: BundleCache, config: RegistryConfig, profile: str,
                   write_zip: Callable[[str, bytes], object]) -> tuple[list[Version], int]:
    """Every version of ``name``, newest first, with registry.yaml's policy applied, and how many zips had to be
    packed from git; writes each old zip.

    Each snapshot is loaded and checked on every build, from bytes git's blob ids vouch for: a cached zip that is
    exactly a bundle of the snapshot's files (``bundle_members``) and the work tree's files stand in for git reads,
    and such a zip is published as it is; anything else is read from git and packed again.
    """
    if objects is not None:
        objects.forget()
    groups: dict[str, _Group] = {}
    records: dict[str, StateRecord] = {}
    verified: dict[str, str] = {}  # snapshot key -> SHA-256 of its cached zip, once checked against git's ids
    for snap in snapshots:
        record = records.get(snap.key)
        files: tuple[SkillFile, ...] = ()
        if record is None and head is not None and snap is snapshots[-1] and same_files(snap.entries, head.files):
            # The head, checked already; its version is published with the head's own zip, so no cached zip or
            # blob of this state is read.
            record = records[snap.key] = StateRecord(head.digest, head.version)
        elif record is None:
            blobs = CheckedBlobs(objects, where)
            checked = _cached_zip(snap, cache, blobs, config.limits)
            if checked is not None:
                verified[snap.key] = sha256_hex(checked)
            if head is not None and snap is snapshots[-1]:
                by_path = {f.path: f for f in head.files}
                for path, _, oid in snap.entries:
                    if path in by_path:
                        blobs.offer(oid, by_path[path].data)
            record, files = load_state(name, snap.entries, blobs, config, profile, where)
            records[snap.key] = record
            if files and {f.path for f in files} != {p for p, m, _ in snap.entries if m in ("100644", "100755")}:
                verified.pop(snap.key, None)  # a bundle of every file, but the version leaves some out
        if record.digest is None:
            continue
        group = groups.get(record.digest)
        if group is None:
            group = groups[record.digest] = _Group(snap, record)
        if group.source is None and not record.rules:
            # A checked zip is published as it is; only a version without one keeps its files to be packed.
            group.source, group.files = snap, (() if snap.key in verified else files)
    versions: list[Version] = []
    for digest, group in groups.items():
        if head is not None and digest == head.digest:
            versions.append(Version(digest, head.version, group.first.commit, group.first.time, group.first.position,
                                    zip=head.zip))
        elif group.source is None:
            versions.append(Version(digest, group.record.version, group.first.commit, group.first.time,
                                    group.first.position, "withdrawn", group.record.reason, group.record.rules))
        else:
            versions.append(Version(digest, group.record.version, group.first.commit, group.first.time,
                                    group.first.position))
    if head is not None and head.digest not in groups:  # the work tree's uncommitted state
        versions.append(Version(head.digest, head.version, None, None, snapshots[-1].position + 1 if snapshots else 0,
                                zip=head.zip))
    result = apply_policy(name, order(versions), config.history, head.digest if head else None)
    out: list[Version] = []
    packed = 0
    for v in result:
        if v.has_bytes and v.zip is None:
            group = groups[v.digest]
            assert group.source is not None
            key, path = group.source.key, version_bundle_path(name, v.digest)
            data = cache.zip(key, _most(group.source, config.limits)) if key in verified else None
            if data is None or sha256_hex(data) != verified[key]:  # gone or changed since it was checked
                files = group.files or load_state(name, group.source.entries, CheckedBlobs(objects, where), config,
                                                  profile, where)[1]
                data = zip_bytes(files)
                cache.put_zip(key, data)
                packed += 1
            write_zip(path, data)
            v = replace(v, zip=zip_record(config.base_url, path, sha256_hex(data), len(data)))
        out.append(v)
    return out, packed


def _most(snap: Snapshot, limits: Limits) -> int:
    """The largest zip a bundle of the snapshot within the limits can be: deflate's worst case and the headers."""
    return limits.max_skill_bytes + limits.max_skill_bytes // 64 + 2048 * (len(snap.entries) + 1)


def _cached_zip(snap: Snapshot, cache: BundleCache, blobs: CheckedBlobs, limits: Limits) -> bytes | None:
    """The cached zip of ``snap`` when it is exactly a bundle of the snapshot's files; its members join ``blobs``.
    A zip that fails the check is passed over (and replaced if its version is packed again)."""
    data = cache.zip(snap.key, _most(snap, limits))
    members = bundle_members(data, snap.entries, limits) if data is not None else None
    if members is None:
        return None
    blobs.add(members)
    return data


def zip_record(base_url: str, path: str, data_sha256: str, size: int) -> dict[str, Any]:
    return {"path": path, "url": url_of(base_url, path), "sha256": data_sha256, "size": size}
