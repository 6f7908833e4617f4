"""``skillreg upload``: publish a built output to S3-compatible object storage (AWS S3, R2, MinIO, B2, ...),
the origin of a CDN once a registry outgrows GitHub Pages.

Every file gets the media type of the registry's one table (``core.content_types``) and a cache lifetime from its
name: files whose name carries a digest of what they hold (version bundles, search shards, the theme's hashed
assets) are cached for a year as immutable; every other name keeps its place while its content changes and is
cached briefly. Only what
changed is sent (the listing's ETag is the MD5 of a single-part upload, and a manifest stored beside the output
records the headers each object was given), in an order that keeps every reader consistent: immutable files
first, then the other files, the indexes, ``state.json``; a signed build's TUF metadata after every file it
covers (the bins, top-level targets and roots, then the snapshot naming them, ``timestamp.json`` at the very
end), so a client never sees a timestamp naming files not yet uploaded. Objects the output no longer holds are
deleted only after that, only below the destination's prefix, and only once they have been out of the output
for ``delete_after`` seconds (an hour by default; the record notes when each went): a reader, or a CDN, holding
an index from before the upload may still fetch what it names. A failure stops before the next group, so the
indexes readers use still point at files that exist.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..core.content_types import content_type as table_type
from ..core.errors import SkillRegError, UsageError
from ..core.search import (
    HASH_CHARS,
    SEARCH_INDEX_PATH,
    SHARDS_INDEX_PATH,
    SHARDS_ROOT,
    TERM_KEY,
    facets_path,
    prefix_path,
    rows_path,
    term_path,
)
from ..core.urls import (
    API_ROOT,
    INDEX_PATH,
    STATE_PATH,
    WELL_KNOWN_V1,
    WELL_KNOWN_V2,
    head_path,
    is_skill_file,
    optional_site_file,
    version_bundle_path,
    versions_path,
)
from ..core.words import counted

IMMUTABLE, MUTABLE, INDEX = "immutable", "mutable", "index"
LONG_CACHE = "public, max-age=31536000, immutable"
SHORT_MAX_AGE = 60
# Kept below the prefix, beside the output it describes; the builder never writes a file of this name.
MANIFEST_NAME = ".skillreg-upload.json"
MANIFEST_VERSION = 1
DELETE_BATCH = 1000  # DeleteObjects takes at most 1,000 keys a request
# How long an object the output dropped stays: far longer than an index is cached (--max-age), so whatever an
# index a reader or a CDN still holds names is there to fetch.
DELETE_AFTER = 3600

# The upload groups, in order; each finishes before the next starts. Readers fetch an index first and then what
# it names, so what an index names is always in place before the index itself.
PHASES = ("immutable files", "other files", "per-skill indexes", "registry indexes", INDEX_PATH, STATE_PATH,
          "signed targets metadata", "signed snapshot", "signed timestamp")
TUF_ROOT = f"{API_ROOT}/tuf"  # a signed build's metadata (signing/metadata.py writes it)

_HEX = f"[0-9a-f]{{{HASH_CHARS}}}"
_BUNDLE = re.compile(rf"{re.escape(API_ROOT)}/bundles/(?P<name>[^/]+)/(?P=name)-(?P<digest>[0-9a-f]{{12}})"
                     rf"\.(?P<ext>zip|json)")
_SHARD = re.compile(rf"{re.escape(SHARDS_ROOT)}/(?:(?P<kind>terms/[a-z0-9]{{{TERM_KEY}}}|"
                    rf"prefix/[a-z0-9]{{1,{TERM_KEY - 1}}})\.|(?P<plain>rows|facets)/)(?P<digest>{_HEX})\.json")
_SKILL_INDEX = re.compile(rf"{re.escape(API_ROOT)}/skills/(?P<name>[^/]+)/(?:head|versions)\.json")
# The theme's assets name their content's hash (mkdocs-material: ``bundle.a5f9d56c.min.js`` and its ``.map``).
_HASHED_ASSET = re.compile(r"assets/(?:[^/]+/)*[^/.]+(?:\.[^/.]+)*\.[0-9a-f]{8,64}\.(?:min\.)?(?:js|css)(?:\.map)?")
_REGISTRY_INDEXES = frozenset({SHARDS_INDEX_PATH, SEARCH_INDEX_PATH, f"{WELL_KNOWN_V1}/index.json",
                               f"{WELL_KNOWN_V2}/index.json", "sitemap.xml"})

class UploadError(SkillRegError):
    """The store refused a request or could not be reached; what was uploaded before it stays consistent."""


def _is_immutable(path: str) -> bool:
    """True when ``path`` is named by its content's digest as the builder names such files (checked by rebuilding
    the name with the builder's own path function, so a look-alike name is not taken for one)."""
    bundle = _BUNDLE.fullmatch(path)
    if bundle is not None:
        zip_path = version_bundle_path(bundle["name"], "sha256:" + bundle["digest"])
        return path == (zip_path if bundle["ext"] == "zip" else zip_path.removesuffix(".zip") + ".json")
    shard = _SHARD.fullmatch(path)
    if shard is not None:
        digest = shard["digest"]
        if shard["kind"]:
            kind, key = shard["kind"].split("/")
            return path == (term_path if kind == "terms" else prefix_path)(key, digest)
        return path == (rows_path if shard["plain"] == "rows" else facets_path)(digest)
    return _HASHED_ASSET.fullmatch(path) is not None


def phase_of(path: str) -> int:
    """The upload group of ``path``: an index into PHASES."""
    if path.startswith(f"{TUF_ROOT}/"):
        name = path.removeprefix(f"{TUF_ROOT}/")
        return 8 if name == "timestamp.json" else 7 if name.endswith(".snapshot.json") else 6
    if path == STATE_PATH:
        return 5
    if path == INDEX_PATH:
        return 4
    if path in _REGISTRY_INDEXES or ("/" not in path and optional_site_file(path)):
        return 3
    skill_index = _SKILL_INDEX.fullmatch(path)
    if skill_index is not None and path in (head_path(skill_index["name"]), versions_path(skill_index["name"])):
        return 2
    return 0 if _is_immutable(path) else 1


def cache_class(path: str) -> str:
    """``immutable`` for a name that carries its content's digest, ``index`` for the documents a reader starts
    from (uploaded last), ``mutable`` for every other name, whose content may change in place."""
    phase = phase_of(path)
    return IMMUTABLE if phase == 0 else MUTABLE if phase == 1 else INDEX


def cache_control(path: str, max_age: int = SHORT_MAX_AGE) -> str:
    if cache_class(path) == IMMUTABLE:
        return LONG_CACHE
    return f"public, max-age={max_age}, must-revalidate"


def content_type(path: str, data: bytes) -> str:
    """The media type of ``path`` from the registry's one table (``core.content_types``), with ``charset=utf-8`` on
    text that is UTF-8; a skill's own file (a raw or discovery copy) is never given a type a browser runs."""
    return table_type(path, data, skill_file=is_skill_file(path))


# ---------------------------------------------------------------------------------------------- the destination

_BUCKET = re.compile(r"[a-z0-9][a-z0-9.\-_]{2,254}", re.IGNORECASE)  # S3 names, with room for others'


@dataclass(frozen=True)
class Destination:
    """``s3://bucket/prefix``: every key this module writes or deletes starts with ``prefix/`` (or is in a
    bucket given to the registry as a whole, when there is no prefix)."""

    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> Destination:
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc:
            raise UsageError(f"{url}: not an s3://BUCKET/PREFIX address")
        if not _BUCKET.fullmatch(parts.netloc):
            raise UsageError(f"{url}: {parts.netloc!r} is not a bucket name")
        if parts.query or parts.fragment:
            raise UsageError(f"{url}: an s3:// address has no query or fragment")
        prefix = parts.path.strip("/")
        if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
            raise UsageError(f"{url}: the prefix may not hold empty, `.` or `..` parts")
        return cls(parts.netloc, prefix)

    @property
    def root(self) -> str:
        return f"{self.prefix}/" if self.prefix else ""

    def key(self, path: str) -> str:
        return self.root + path

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.root}"


# ----------------------------------------------------------------------------------------------- the local side

@dataclass(frozen=True)
class LocalFile:
    path: str  # relative to the output, with /
    size: int
    md5: str
    content_type: str
    cache_control: str

    @property
    def headers(self) -> list[str]:
        return [self.md5, self.content_type, self.cache_control]


def scan_output(out: Path, *, max_age: int = SHORT_MAX_AGE) -> list[LocalFile]:
    """Every file of the output with its MD5 and headers, in path order. A symbolic link is followed only to a
    file inside the output; anything else that is not a regular file is refused."""
    root = out.resolve()
    if not (root / INDEX_PATH).is_file():
        raise UsageError(f"{out}: not a built registry (no {INDEX_PATH}); run `skillreg build --out {out}` first")
    files: list[LocalFile] = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in dirs:
            if os.path.islink(os.path.join(folder, name)):
                rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                raise UsageError(f"{out}/{rel}: a symbolic link to a folder; the builder writes none, so this "
                                 "output was changed by something else")
        for name in sorted(names):
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if os.path.islink(full) and not Path(os.path.realpath(full)).is_relative_to(root):
                raise UsageError(f"{out}/{rel}: a symbolic link out of the output; refusing to upload what it names")
            if not stat.S_ISREG(os.stat(full).st_mode):
                raise UsageError(f"{out}/{rel}: not a regular file")
            if rel == MANIFEST_NAME:
                raise UsageError(f"{out}/{rel}: this name is kept for the upload's own record")
            data = Path(full).read_bytes()
            files.append(LocalFile(rel, len(data), hashlib.md5(data, usedforsecurity=False).hexdigest(),
                                   content_type(rel, data), cache_control(rel, max_age)))
    return files


# ----------------------------------------------------------------------------------------------- the remote side

@dataclass(frozen=True)
class RemoteObject:
    etag: str  # without quotes
    size: int


class ObjectStore(Protocol):
    """What an upload needs of a bucket; ``S3Store`` is the one real implementation."""

    def list(self, prefix: str) -> dict[str, RemoteObject]: ...
    def get(self, key: str) -> bytes | None: ...
    def put(self, key: str, data: bytes, *, content_type: str, cache_control: str) -> None: ...
    def delete(self, keys: Sequence[str]) -> None: ...


def _store_error(where: str, exc: BaseException) -> UploadError:
    if type(exc).__name__ == "NoCredentialsError":
        return UploadError(f"{where}: no AWS credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                           "or AWS_PROFILE, or configure them in ~/.aws/credentials")
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        error = response.get("Error") or {}
        code = error.get("Code") or response.get("ResponseMetadata", {}).get("HTTPStatusCode", "")
        message = error.get("Message") or ""
        text = f"{code}: {message}" if message and message != code else str(code or exc)
    else:
        text = str(exc)
    return UploadError(f"{where}: {' '.join(text.split())}")


class S3Store:
    """A bucket reached through boto3, which finds credentials and region the usual AWS way (environment,
    ``~/.aws/config``, instance roles). Path-style addressing with ``endpoint_url``, which every S3-compatible
    store accepts."""

    def __init__(self, bucket: str, *, endpoint_url: str | None = None, region: str | None = None,
                 jobs: int = 16) -> None:
        try:
            import boto3
            from botocore.config import Config
        except ImportError:
            raise SkillRegError("uploading needs boto3: pip install 'skill-registry[s3]'") from None
        session = boto3.session.Session()
        config = Config(max_pool_connections=max(jobs, 10), retries={"mode": "standard", "max_attempts": 5},
                        request_checksum_calculation="when_required", response_checksum_validation="when_required",
                        s3={"addressing_style": "path" if endpoint_url else "auto"})
        self.bucket = bucket
        self._client: Any = session.client("s3", endpoint_url=endpoint_url, config=config,
                                           region_name=region or session.region_name or "us-east-1")

    def _where(self, key: str | None = None) -> str:
        return f"s3://{self.bucket}/{key}" if key is not None else f"s3://{self.bucket}"

    def list(self, prefix: str) -> dict[str, RemoteObject]:
        found: dict[str, RemoteObject] = {}
        try:
            for page in self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
                for item in page.get("Contents", ()):
                    found[item["Key"]] = RemoteObject(str(item.get("ETag", "")).strip('"'), int(item.get("Size", 0)))
        except Exception as exc:  # botocore's errors share no base class with its connection errors
            raise _store_error(f"{self._where(prefix)} (listing)", exc) from None
        return found

    def get(self, key: str) -> bytes | None:
        try:
            body: bytes = self._client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except Exception as exc:
            if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise _store_error(self._where(key), exc) from None
        return body

    def put(self, key: str, data: bytes, *, content_type: str, cache_control: str) -> None:
        md5 = base64.b64encode(hashlib.md5(data, usedforsecurity=False).digest()).decode("ascii")
        try:
            self._client.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType=content_type,
                                    CacheControl=cache_control, ContentMD5=md5)
        except Exception as exc:
            raise _store_error(self._where(key), exc) from None

    def delete(self, keys: Sequence[str]) -> None:
        try:
            answer = self._client.delete_objects(Bucket=self.bucket, Delete={
                "Objects": [{"Key": key} for key in keys], "Quiet": True})
        except Exception as exc:
            raise _store_error(f"{self._where(keys[0])} (deleting {counted(len(keys), 'object')})", exc) from None
        for error in answer.get("Errors", ()):
            raise UploadError(f"{self._where(error.get('Key', '?'))}: {error.get('Code', '')}: "
                              f"{error.get('Message', 'not deleted')}")


# ------------------------------------------------------------------------------------------------------ the plan

@dataclass(frozen=True)
class UploadPlan:
    destination: Destination
    phases: tuple[tuple[LocalFile, ...], ...]  # what to send, group by group
    unchanged: int
    delete: tuple[str, ...]  # keys
    manifest: dict[str, list[str]]  # path -> [md5, content type, cache control] once done
    recorded: dict[str, list[str]]  # the same, as the last upload left it
    gone: dict[str, int] = field(default_factory=dict)  # key -> when it was first out of the output (Unix time)
    recorded_gone: dict[str, int] = field(default_factory=dict)  # the same, as the last upload left it
    delete_after: int = DELETE_AFTER

    @property
    def waiting(self) -> dict[str, int]:
        """Keys out of the output, kept for now: key -> when they may be deleted (Unix time)."""
        return {key: since + self.delete_after for key, since in self.gone.items() if key not in self.delete}

    @property
    def uploads(self) -> list[LocalFile]:
        return [f for phase in self.phases for f in phase]


@dataclass
class UploadResult:
    destination: Destination
    uploaded: list[str] = field(default_factory=list)  # paths, in the order they were sent (group by group)
    deleted: list[str] = field(default_factory=list)  # keys
    unchanged: int = 0


def _read_manifest(store: ObjectStore, key: str) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The headers each object was given by the last upload, and since when each key it kept is out of the output.
    An unreadable record only means sending again and waiting ``delete_after`` again before deleting."""
    raw = store.get(key)
    if raw is None:
        return {}, {}
    try:
        data = json.loads(raw)
        if data.get("version") != MANIFEST_VERSION or not isinstance(data.get("files"), dict):
            return {}, {}
        files = {p: h for p, h in data["files"].items() if isinstance(h, list) and all(isinstance(x, str) for x in h)}
        gone = data.get("gone")
        since = {k: t for k, t in gone.items() if isinstance(t, int)} if isinstance(gone, dict) else {}
        return files, since
    except (ValueError, AttributeError):
        return {}, {}


def plan_upload(files: Sequence[LocalFile], destination: Destination, store: ObjectStore, *,
                delete: bool = True, delete_after: int = DELETE_AFTER, now: float | None = None) -> UploadPlan:
    """What to send and delete: a file is skipped only when the store holds its bytes (ETag = MD5, same size)
    and the manifest says it was given the same headers. An object the output no longer holds is deleted once
    it has been out of it for ``delete_after`` seconds (``now``: the time to judge by, default the clock's)."""
    remote = store.list(destination.root)
    manifest_key = destination.key(MANIFEST_NAME)
    recorded, recorded_gone = _read_manifest(store, manifest_key) if manifest_key in remote else ({}, {})
    groups: list[list[LocalFile]] = [[] for _ in PHASES]
    unchanged = 0
    for f in files:
        there = remote.get(destination.key(f.path))
        if there is not None and there.etag == f.md5 and there.size == f.size and recorded.get(f.path) == f.headers:
            unchanged += 1
        else:
            groups[phase_of(f.path)].append(f)
    wanted = {destination.key(f.path) for f in files} | {manifest_key}
    moment = int(time.time() if now is None else now)
    # An object back in the output is no longer gone; one that just went starts waiting now.
    gone = {k: recorded_gone.get(k, moment) for k in sorted(remote)
            if k not in wanted and k.startswith(destination.root)}
    due = tuple(k for k, since in gone.items() if moment - since >= delete_after) if delete else ()
    manifest = {f.path: f.headers for f in files}
    kept = set(gone) - set(due)
    # Objects left in place keep their record, so a later upload knows their headers and when they went.
    manifest = {**{p: h for p, h in recorded.items() if destination.key(p) in kept}, **manifest}
    return UploadPlan(destination, tuple(tuple(g) for g in groups), unchanged, due, manifest, recorded,
                      {k: t for k, t in gone.items() if k in kept}, recorded_gone, delete_after)


def _run_group(items: Sequence[Any], work: Callable[[Any], None], jobs: int) -> None:
    """Run ``work`` on every item, ``jobs`` at a time; after a failure start nothing more, let the running ones
    end, and raise the failure of the earliest item."""
    stop = threading.Event()

    def guarded(item: Any) -> None:
        if stop.is_set():
            return
        try:
            work(item)
        except BaseException:
            stop.set()
            raise

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(items)))) as pool:
        futures = [pool.submit(guarded, item) for item in items]
        try:
            wait(futures)
        except BaseException:  # Ctrl-C: what has not started never will
            stop.set()
            pool.shutdown(cancel_futures=True)
            raise
    for future in futures:
        failure = future.exception()
        if failure is not None:
            raise failure


def _batches(keys: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(keys), size):
        yield keys[start:start + size]


def run_upload(out: Path, plan: UploadPlan, store: ObjectStore, *, jobs: int = 16,
               on_progress: Callable[[int, int], None] | None = None) -> UploadResult:
    """Send the plan group by group, then delete, then record the manifest; a failure raises UploadError naming
    the key, having started nothing of a later group."""
    result = UploadResult(plan.destination, unchanged=plan.unchanged)
    lock = threading.Lock()

    def send(f: LocalFile) -> None:
        data = (out / f.path).read_bytes()
        if hashlib.md5(data, usedforsecurity=False).hexdigest() != f.md5:
            raise UploadError(f"{out}/{f.path}: changed while uploading; build first, then upload")
        store.put(plan.destination.key(f.path), data, content_type=f.content_type, cache_control=f.cache_control)
        with lock:
            result.uploaded.append(f.path)
            if on_progress is not None:
                on_progress(len(result.uploaded), total)

    total = len(plan.uploads)
    for number, group in enumerate(plan.phases):
        try:
            _run_group(group, send, jobs)
        except UploadError as exc:
            later = f"; nothing of {', '.join(PHASES[number + 1:])} was sent" if number + 1 < len(PHASES) else ""
            raise UploadError(f"{exc} ({len(result.uploaded)} of {counted(total, 'upload')} done{later})") from None
    for batch in _batches(plan.delete, DELETE_BATCH):
        store.delete(batch)
        result.deleted.extend(batch)
    if plan.manifest == plan.recorded and plan.gone == plan.recorded_gone:
        return result  # nothing was sent or deleted, or the record already says so
    record = {"version": MANIFEST_VERSION, "files": plan.manifest, "gone": plan.gone}
    store.put(plan.destination.key(MANIFEST_NAME),
              json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8"),
              content_type="application/json", cache_control="no-store")
    return result


def upload(out: Path, dest: str, *, endpoint_url: str | None = None, region: str | None = None, jobs: int = 16,
           max_age: int = SHORT_MAX_AGE, delete: bool = True, delete_after: int = DELETE_AFTER, dry_run: bool = False,
           store: ObjectStore | None = None, on_progress: Callable[[int, int], None] | None = None,
           on_wait: Callable[[int | None], None] | None = None) -> tuple[UploadPlan, UploadResult | None]:
    """Upload the built output ``out`` to ``dest`` (``s3://bucket/prefix``), holding the output's build lock so
    no build replaces files while they are read. ``dry_run`` plans without sending or deleting anything."""
    from ..publish.transaction import output_lock, recover

    destination = Destination.parse(dest)
    if not out.is_dir():
        raise UsageError(f"{out}: no such folder; run `skillreg build --out {out}` first")
    with output_lock(out, on_wait=on_wait):
        recover(out)  # an interrupted build's output is put back as it was before it is read
        files = scan_output(out, max_age=max_age)
        store = store or S3Store(destination.bucket, endpoint_url=endpoint_url, region=region, jobs=jobs)
        plan = plan_upload(files, destination, store, delete=delete, delete_after=delete_after)
        if dry_run:
            return plan, None
        return plan, run_upload(out, plan, store, jobs=jobs, on_progress=on_progress)


def describe(paths: Iterable[str]) -> dict[str, int]:
    """How many of ``paths`` fall in each cache class (for the command's summary)."""
    counts = {IMMUTABLE: 0, MUTABLE: 0, INDEX: 0}
    for path in paths:
        counts[cache_class(path)] += 1
    return counts
