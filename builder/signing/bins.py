"""The last signed metadata a signing builds on, read lazily, and the hashed-bin layout chosen from the registry's size.

A rebuild that changed a few skills re-signs only their bins: the bins' target lists come from the previous signed
bins themselves (each checked against the previous top-level targets' delegation), so no unchanged skill's
``digests.json`` is read again and of an unchanged bin only the expiry is read (it is signed again, with the same
targets, once less than half its lifetime is left). The bin count grows with the number of signed skills
and never shrinks by itself: changing it re-signs every bin and renames them, so it must not flap between builds.
"""

from __future__ import annotations

from . import lean_tuf  # noqa: F401  (first: python-tuf without boto3)

# isort: split

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuf.api.metadata import Metadata, Root, Snapshot, SuccinctRoles, TargetFile, Targets, Timestamp

BIN_PREFIX = "bins"
# The default bin count: the smallest power of two giving at most SKILLS_PER_BIN signed skills a bin, within
# MIN_BINS..MAX_BINS. At 60,000 skills that is 2,048 bins (about 29 skills, 2.2 KB gzipped, a bin; a 5.7 KB
# snapshot), the middle of the benchmark's curve (bench/trust.py): fewer bins miss the cold update check's goal
# (256: 70 KB), more bring the warm one to its limit (8,192: 24 KB).
SKILLS_PER_BIN = 32
MIN_BINS = 16
MAX_BINS = 2 ** 14


def bins_for(skills: int, previous: int | None = None) -> int:
    """The default bin count for ``skills`` signed skills: never fewer than the last signing's ``previous``."""
    wanted = MIN_BINS
    while wanted * SKILLS_PER_BIN < skills and wanted < MAX_BINS:
        wanted *= 2
    return max(wanted, previous or 0)


def bin_layout(keyid: str, bins: int) -> SuccinctRoles:
    return SuccinctRoles([keyid], 1, bins.bit_length() - 1, BIN_PREFIX)


@dataclass
class Previous:
    """The last signed metadata in ``folder``, checked against the current root; other files are read on demand."""

    folder: Path | None = None
    snapshot: Metadata[Snapshot] | None = None
    timestamp: Metadata[Timestamp] | None = None
    root: Root | None = None
    _read: dict[str, bytes | None] = field(default_factory=dict)
    _top: Metadata[Targets] | None = None

    def version(self, role: str) -> int:
        """The version of ``role`` the last signing published (the snapshot's from the timestamp), or 0."""
        if self.snapshot is None:
            return 0
        if role == Snapshot.type:
            return int(self.snapshot.signed.version)
        meta = self.snapshot.signed.meta.get(f"{role}.json")
        return meta.version if meta is not None else 0

    def file_name(self, role: str) -> str | None:
        version = self.version(role)
        return f"{version}.{role}.json" if version else None

    def bytes_of(self, role: str) -> bytes | None:
        """The bytes of ``role``'s metadata the snapshot names (None: not named, or missing)."""
        name = self.file_name(role)
        if name is None or self.folder is None:
            return None
        if name not in self._read:
            try:
                self._read[name] = (self.folder / name).read_bytes()
            except OSError:
                self._read[name] = None
        return self._read[name]

    def expiry_of(self, role: str) -> dt.datetime | None:
        """When ``role``'s previous metadata expires, read without parsing its targets (None: unreadable)."""
        data = self.bytes_of(role)
        try:
            return dt.datetime.fromisoformat(json.loads(data)["signed"]["expires"]) if data is not None else None
        except (ValueError, KeyError, TypeError):
            return None

    def roles(self) -> Iterable[str]:
        return [] if self.snapshot is None else [m.removesuffix(".json") for m in sorted(self.snapshot.signed.meta)]

    def top_targets(self) -> Metadata[Targets] | None:
        """The previous top-level targets, when present and signed by the root's targets key."""
        if self._top is None and self.root is not None:
            self._top = _verified(self.bytes_of(Targets.type), Targets.type, self.root.verify_delegate)
        return self._top

    def layout(self) -> SuccinctRoles | None:
        top = self.top_targets()
        if top is None or top.signed.delegations is None:
            return None
        return top.signed.delegations.succinct_roles

    def bin_targets(self, role: str) -> dict[str, TargetFile] | None:
        """The targets of the previous bin ``role``, checked against the previous top-level delegation."""
        top = self.top_targets()
        if top is None:
            return None
        found = _verified(self.bytes_of(role), role, top.signed.verify_delegate)
        return None if found is None else dict(found.signed.targets)

    def target_sha256(self, path: str) -> str | None:
        top = self.top_targets()
        target = top.signed.targets.get(path) if top is not None else None
        return target.hashes.get("sha256") if target is not None else None


def _verified(data: bytes | None, role: str, verify: Callable[[str, bytes, Any], None]) -> Metadata[Targets] | None:
    if data is None:
        return None
    try:
        metadata = Metadata[Targets].from_bytes(data)
        verify(role, metadata.signed_bytes, metadata.signatures)
    except Exception:  # noqa: BLE001 - unusable previous metadata is signed again from the output
        return None
    return metadata


def read_previous(folder: Path, root: Root) -> Previous:
    """The metadata last published from ``folder``; anything missing or not signed by ``root``'s keys is left
    out, so it can only make versions go higher, never lower."""
    try:
        timestamp = Metadata[Timestamp].from_bytes((folder / "timestamp.json").read_bytes())
        root.verify_delegate(Timestamp.type, timestamp.signed_bytes, timestamp.signatures)
        version = timestamp.signed.snapshot_meta.version
        snapshot = Metadata[Snapshot].from_bytes((folder / f"{version}.snapshot.json").read_bytes())
        root.verify_delegate(Snapshot.type, snapshot.signed_bytes, snapshot.signatures)
    except Exception:  # noqa: BLE001 - no usable previous metadata: versions come from git alone
        return Previous()
    return Previous(folder, snapshot, timestamp, root)


def previous_bin_count(previous: Previous, keyid: str) -> int | None:
    """How many bins the last signing used, when its delegation was made with this targets key."""
    layout = previous.layout()
    if layout is None or layout.keyids != [keyid]:
        return None
    return int(layout.number_of_bins)


def index_matches(previous: Previous, index_path: str, index_before: bytes | None) -> bool:
    """Whether the output's index before this build is the one the last signing covered: else another (unsigned)
    build changed the output in between, and ``changed`` does not say everything that changed since."""
    if index_before is None:
        return False
    return previous.target_sha256(index_path) == hashlib.sha256(index_before).hexdigest()


def changed_bins(previous: Previous, layout: SuccinctRoles, changed: Iterable[str], published: set[str],
                 path_of: Callable[[str], str], target_of: Callable[[str], TargetFile]
                 ) -> dict[str, dict[str, TargetFile]] | None:
    """The new target lists of the bins the ``changed`` skills fall in: each previous bin's targets with those
    skills' entries made again (or dropped, for a skill no longer published). None when a bin it needs is missing
    or not validly signed: the caller then signs every bin from the output."""
    by_bin: dict[str, list[str]] = {}
    for name in sorted(changed):
        by_bin.setdefault(layout.get_role_for_target(path_of(name)), []).append(name)
    bins: dict[str, dict[str, TargetFile]] = {}
    for role, names in sorted(by_bin.items()):
        targets = previous.bin_targets(role)
        if targets is None:
            return None
        for name in names:
            if name in published:
                targets[path_of(name)] = target_of(name)
            else:
                targets.pop(path_of(name), None)
        bins[role] = dict(sorted(targets.items()))
    return bins
