"""Fetching a live registry's last signed metadata, for a build from scratch that must go past its versions.

CI builds every push in a fresh checkout; given the metadata the live site publishes (``skillreg trust
fetch-previous URL DIR``, then ``SKILLREG_TRUST_PREVIOUS=DIR``) the build keeps the bytes of bins whose skills did
not change. The download goes through the client's transport (deadlines, size caps, redirect rules), walks
timestamp -> snapshot -> the files it names by their consistent-snapshot names, and keeps only files signed by the
keys the checkout's root names. Nothing here can fail a deploy: a first deploy (no metadata), an unreachable or
tampered site each give one warning, and the build then signs everything afresh.
"""

from __future__ import annotations

from ..signing import lean_tuf  # noqa: F401  (first: python-tuf without boto3)

# isort: split

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuf.api.metadata import Metadata, MetaFile, Root, Snapshot, Targets, Timestamp

from ..client.documents import json_shape_problem
from ..client.registry import Registry
from ..core.errors import ClientError, UsageError
from ..core.fs import write_atomic
from ..core.urls import API_ROOT

TUF_DIR = f"{API_ROOT}/tuf"
MAX_TIMESTAMP_BYTES = 16_384  # python-tuf's client bounds
MAX_SNAPSHOT_BYTES = 2_000_000
MAX_TARGETS_BYTES = 5_000_000
FETCH_THREADS = 8  # a registry of thousands of bins is fetched in parallel, each request under its own deadline


@dataclass
class FetchedPrevious:
    """What was kept in DIR (file names) and, when something was left out, the one warning saying why."""

    kept: list[str] = field(default_factory=list)
    warning: str | None = None


def fetch_previous(url: str, folder: Path, root: Root, *, timeout: float | None = None) -> FetchedPrevious:
    """Download ``url``'s api/v1/tuf/ metadata into ``folder``, keeping only what ``root``'s keys signed."""
    _check_folder(folder)
    registry = Registry(url, timeout=timeout)
    where = f"{registry.url}{TUF_DIR}/"
    try:
        timestamp_bytes = registry.raw(f"{TUF_DIR}/timestamp.json", MAX_TIMESTAMP_BYTES)
    except ClientError as exc:
        return FetchedPrevious(warning=f"{where}: cannot read the last signed metadata ({exc}); the build signs "
                                       "every file afresh")
    if timestamp_bytes is None:
        return FetchedPrevious(warning=f"{where}timestamp.json: not published (a first deploy, or an unsigned "
                                       "site); the build signs every file afresh")
    try:
        files = _verified_chain(registry, root, timestamp_bytes)
    except _Refused as exc:
        return FetchedPrevious(warning=f"{where}{exc}; nothing of it is reused and the build signs every file afresh")
    folder.mkdir(parents=True, exist_ok=True)
    kept = {name: data for name, data in files.items() if data is not None}
    for name, data in sorted(kept.items()):
        write_atomic(folder / name, data, durable=False)
    left_out = sorted(name for name, data in files.items() if data is None)
    warning = None
    if left_out:
        warning = (f"{where}: {len(left_out)} of {len(files)} metadata files could not be read or are not signed by "
                   f"this registry's keys (first: {left_out[0]}); those are signed afresh")
    return FetchedPrevious(sorted(kept), warning)


class _Refused(Exception):
    """The timestamp or snapshot is unusable: nothing of the previous metadata can be trusted."""


def _check_folder(folder: Path) -> None:
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder}: must be an empty folder or not exist yet (the fetched metadata goes there)")


def _verified_chain(registry: Registry, root: Root, timestamp_bytes: bytes) -> dict[str, bytes | None]:
    """timestamp.json, N.snapshot.json and every file it names (None: missing or not signed by ``root``'s keys)."""
    timestamp = _verified(Timestamp, "timestamp.json", timestamp_bytes, root.verify_delegate)
    snapshot_name = f"{timestamp.signed.snapshot_meta.version}.snapshot.json"
    snapshot_bytes = _read(registry, snapshot_name, timestamp.signed.snapshot_meta, MAX_SNAPSHOT_BYTES)
    if snapshot_bytes is None:
        raise _Refused(f"{snapshot_name}: the snapshot the timestamp names cannot be read")
    snapshot = _verified(Snapshot, snapshot_name, snapshot_bytes, root.verify_delegate)
    files: dict[str, bytes | None] = {"timestamp.json": timestamp_bytes, snapshot_name: snapshot_bytes}
    top_meta = snapshot.signed.meta.get("targets.json")
    top_name = f"{top_meta.version}.targets.json" if top_meta is not None else "targets.json"
    top_bytes = _read(registry, top_name, top_meta, MAX_TARGETS_BYTES) if top_meta is not None else None
    top = _try_verified(top_name, top_bytes, root.verify_delegate)
    files[top_name] = top_bytes if top is not None else None
    delegated = {role: meta for role, meta in snapshot.signed.meta.items() if role != "targets.json"}
    with ThreadPoolExecutor(FETCH_THREADS) as pool:
        fetched = dict(zip(delegated, pool.map(lambda item: _read(registry, f"{item[1].version}.{item[0]}", item[1],
                                                                   MAX_TARGETS_BYTES), delegated.items())))
    for role, meta in delegated.items():
        name = f"{meta.version}.{role}"
        data = fetched[role]
        ok = top is not None and _try_verified(name, data, top.signed.verify_delegate) is not None
        files[name] = data if ok else None
    return files


def _read(registry: Registry, name: str, meta: MetaFile | None, limit: int) -> bytes | None:
    """The file's bytes if it is published within its bound and matches the length and hashes its parent gives."""
    bound = meta.length if meta is not None and meta.length else limit
    try:
        data = registry.raw(f"{TUF_DIR}/{name}", min(bound, limit))
        if data is not None and meta is not None:
            meta.verify_length_and_hashes(data)
        if data is not None and json_shape_problem(data):  # python-tuf would parse it whole
            return None
    except Exception:  # noqa: BLE001 - any unreadable or mismatching file is only left out
        return None
    return data


def _verified(kind: type[Any], name: str, data: bytes, verify: Callable[[str, bytes, Any], None]) -> Metadata[Any]:
    try:
        metadata = Metadata[Any].from_bytes(data)
        if not isinstance(metadata.signed, kind):
            raise ValueError(f"it is {metadata.signed.type} metadata")
        verify(kind.type, metadata.signed_bytes, metadata.signatures)
    except Exception as exc:  # noqa: BLE001 - the parse and signature errors of python-tuf and securesystemslib
        raise _Refused(f"{name}: not metadata signed by this registry's keys ({exc})") from None
    return metadata


def _try_verified(name: str, data: bytes | None, verify: Callable[[str, bytes, Any], None]) -> Metadata[Any] | None:
    """A targets file (top-level or a bin) signed by the key its delegator names, else None."""
    if data is None:
        return None
    role = name.split(".", 1)[1].removesuffix(".json")
    try:
        metadata = Metadata[Any].from_bytes(data)
        if not isinstance(metadata.signed, Targets):
            return None
        verify(role, metadata.signed_bytes, metadata.signatures)
    except Exception:  # noqa: BLE001
        return None
    return metadata

