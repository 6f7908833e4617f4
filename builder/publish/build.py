"""``skillreg build``: validate every skill, then write the JSON API, bundles, discovery indexes and website.

Nothing in the output changes until everything is ready. New files are staged in a temporary folder beside
the output. A first build, or one whose cache cannot be trusted, stages everything and swaps the whole
folder in (atomically exchanged where Linux allows). A rebuild stages only the skills whose files changed
(found by comparing the size, modification and change times and inode of every entry with the last
build, as git's index does: one stat per path the last build listed, ``restat``), the registry-wide documents
one of whose rows changed (joined from the rows the manifest keeps as bytes, see ``manifest``; the sharded
search index made again only where a changed row lies, ``update_search_files``) and the website, then moves
those units into place under a journal: if the process dies part way, the next build puts the previous output
back before doing anything else.

Every version a skill had on the built branch is published too (``history``): its ``versions.json`` is part of
the skill's units, and the zips of old versions come from the bundle cache or are packed from git objects.

The lock, the journal, the list of trash folders and the manifest live in the user's state folder, keyed by
the output's real path, never beside the output or in the checkout: a repository can commit any file, and
none of it is ever read as the builder's own record. Recovery and trash removal touch only folders named as
this module names them, beside the output, and units below it reached without a symbolic link.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import secrets
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import MISSING, asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, TypeVar

from .. import __version__
from ..core.bundle import dumps, json_bundle, zip_bytes
from ..core.config import CONFIG_NAME, RegistryConfig
from ..core.diagnostics import Diagnostic, Severity
from ..core.errors import BuildError, UsageError, os_error_message
from ..core.fs import LockHeld, exchange, exclusive_lock, state_dir, write_atomic
from ..core.loader import display_path, find_skill_folders
from ..core.model import Frontmatter, Skill, sha256_hex
from ..core.search import (
    SEARCH_INDEX_PATH,
    SHARDS_INDEX_PATH,
    SHARDS_ROOT,
    SearchRow,
    search_entry,
    search_files,
    search_index,
    update_search_files,
)
from ..core.urls import (
    API_ROOT,
    INDEX_PATH,
    STATE_PATH,
    WELL_KNOWN_V1,
    WELL_KNOWN_V2,
    detail_path,
    head_path,
    raw_path,
    scoped_discovery_path,
    versions_path,
)
from ..core.workers import default_jobs, run_parallel
from ..validate.checks import ValidationReport, check_registry, validate_folder
from .api import (
    Artifact,
    bundle_stem,
    detail_document,
    discovery_v1_document,
    discovery_v1_entry,
    discovery_v2_document,
    discovery_v2_entry,
    index_document,
    index_entry,
    raw_copies,
)
from .bundlecache import BundleCache, check_cache_place
from .history import (
    GitHistory,
    GitObjects,
    Head,
    check_marks,
    head_document,
    latest_of,
    read_skills_history,
    skill_versions,
    state_document,
    version_of,
    versions_document,
)
from .manifest import MANIFEST_VERSION, ROW_KINDS, Row, StoredManifest, read_manifest, write_manifest
from .provenance import History, Source, read_history
from .schemas import SCHEMA_DIR, write_schemas
from .skills_manifest import stage_skills_manifest

BUNDLE_CACHE_ENV = "SKILLREG_BUNDLE_CACHE"


class BuildFailed(BuildError):
    """Validation found errors; nothing was written. Carries the findings for the CLI to show."""

    def __init__(self, report: ValidationReport) -> None:
        super().__init__(f"the build stopped: {report.summary()}; nothing was written")
        self.report = report


@dataclass(frozen=True)
class BuildResult:
    out: Path
    report: ValidationReport
    published: tuple[str, ...]  # skill names in the output
    written: tuple[str, ...]  # skills whose files were generated this time
    reused: tuple[str, ...]  # skills left as the previous build wrote them
    skipped: tuple[str, ...]  # invalid skills left out under --keep-going
    removed: tuple[str, ...]  # skills the previous output had and this one has not
    commit: str | None
    retired: tuple[str, ...] = ()  # skills gone from skills/ whose versions stay published
    packed: int = 0  # old versions' zips packed from git objects (the others came from the bundle cache)
    warnings: tuple[str, ...] = ()  # what the user should know about the output, e.g. a shallow history


def skill_units(name: str) -> tuple[str, ...]:
    """The paths a skill owns in the output; each is replaced as a whole."""
    return (detail_path(name), f"{API_ROOT}/skills/{name}", f"{API_ROOT}/bundles/{name}", f"{WELL_KNOWN_V1}/{name}")


@dataclass(frozen=True)
class _Job:
    """What every worker needs, sent once per process."""

    config: RegistryConfig
    profile: str
    history: History
    tmp: Path
    git: GitHistory
    cache: Path | None  # the bundle cache folder


@dataclass(frozen=True)
class _Outcome:
    """One skill, as the manifest remembers it: enough to publish its index rows without reading it again."""

    name: str
    folder: str
    skill_md: str
    declared: str | None  # `name` as written in SKILL.md, for registry-wide rules
    name_line: int
    diagnostics: tuple[Diagnostic, ...]
    signature: str
    entries: str = ""  # the paths ``signature`` covers (``survey``), "\0" when they cannot be listed again
    digest: str | None = None
    key: str | None = None
    index: dict[str, Any] | None = None
    v1: dict[str, Any] | None = None
    v2: dict[str, Any] | None = None
    search: SearchRow | None = None
    fresh: bool = True  # built in this run (False: taken from the manifest)
    history: str | None = None  # fingerprint of the skill's git history its versions were published from
    digests: tuple[str, ...] = ()  # every version it has published (registry.yaml may name only these)
    latest: str | None = None  # its versions.json's latest (what head.json and state.json publish)
    retired: bool = False  # gone from skills/: only its versions are published
    packed: int = 0  # old versions' zips packed from git in this run (not kept in the manifest)
    rows: tuple[bytes | None, ...] = ()  # the rows above encoded, in ``ROW_KINDS`` order (``encoded``)

    def head(self, folder: Path | None = None) -> Skill:
        """What the registry-wide rules read of the skill; ``folder``, when given, is ``Path(self.folder)``."""
        data = {"name": self.declared} if self.declared is not None else {}
        fm = _made(Frontmatter, data=data, lines={"name": self.name_line}, start_line=1, end_line=1)
        return _made(Skill, name=self.name, folder=folder or Path(self.folder), skill_md=self.skill_md,
                     frontmatter=fm, body="", body_line=1, files=())

    def row(self, kind: str) -> bytes | None:
        """This skill's row of one global document (``ROW_KINDS``), encoded as it stands inside the document."""
        if self.rows:
            return self.rows[ROW_KINDS.index(kind)]
        value = getattr(self, kind, None)
        return None if value is None else _encode_row(value)

    def encoded(self) -> _Outcome:
        """The outcome with its rows as bytes only: what a worker sends back and the parent keeps per skill."""
        return replace(self, rows=tuple(self.row(kind) for kind in ROW_KINDS), index=None, v1=None, v2=None,
                       search=None)

    def to_record(self) -> Row:
        """The manifest's row: ``COLUMNS``, then the encoded global-document rows."""
        diagnostics = _findings_json(self.diagnostics) if self.diagnostics else ""
        return (self.name, self.folder, self.skill_md, self.declared, self.name_line, self.signature, self.entries,
                self.digest, self.key, self.history, " ".join(self.digests), self.latest, int(self.retired),
                diagnostics, *(self.row(kind) for kind in ROW_KINDS))

    @classmethod
    def from_record(cls, record: Sequence[Any]) -> _Outcome:
        """An outcome read back from the manifest: its global-document rows stay there (``StoredManifest.rows``)."""
        (name, folder, skill_md, declared, name_line, sig, entries, digest, key, history, digests, latest, retired,
         diagnostics) = record
        made = object.__new__(cls)  # as ``_made`` does, with the values set in one dict (60,000 per rebuild)
        made.__dict__.update(_RECORD_DEFAULTS)
        made.__dict__.update(name=name, folder=folder, skill_md=skill_md, declared=declared, name_line=name_line,
                             diagnostics=_findings(diagnostics) if diagnostics else (), signature=sig,
                             entries=entries, digest=digest, key=key, history=history,
                             digests=tuple(digests.split()), latest=latest, retired=bool(retired))
        return made


_DEFAULTS: dict[type, tuple[dict[str, Any], dict[str, Callable[[], Any]]]] = {}
_Made = TypeVar("_Made")


def _made(cls: type[_Made], **values: Any) -> _Made:
    """``cls(**values)`` for a frozen dataclass without ``__post_init__``, made without its ``__init__`` (one
    ``object.__setattr__`` per field): a rebuild at 60,000 skills makes three of these per skill."""
    if cls not in _DEFAULTS:
        known = fields(cls)  # type: ignore[arg-type]
        _DEFAULTS[cls] = ({f.name: f.default for f in known if f.default is not MISSING},
                          {f.name: f.default_factory for f in known if f.default_factory is not MISSING})
    defaults, factories = _DEFAULTS[cls]
    made = object.__new__(cls)
    made.__dict__.update(defaults, **{name: make() for name, make in factories.items() if name not in values},
                         **values)
    return made
_FINDING_FIELDS = tuple(f.name for f in fields(Diagnostic))
# What ``from_record`` sets beyond the manifest's columns: every other field's default, and fresh False.
_RECORD_DEFAULTS = {**{f.name: f.default for f in fields(_Outcome) if f.default is not MISSING}, "fresh": False}
assert not any(f.default_factory is not MISSING for f in fields(_Outcome))


def _findings_json(found: Sequence[Diagnostic]) -> str:
    return json.dumps([[getattr(d, name) for name in _FINDING_FIELDS] for d in found])


def _findings(text: str) -> tuple[Diagnostic, ...]:
    """Findings as ``_findings_json`` recorded them."""
    return tuple(Diagnostic(**{**dict(zip(_FINDING_FIELDS, values, strict=True)), "severity": Severity(values[
        _FINDING_FIELDS.index("severity")])}) for values in json.loads(text))


def _encode_row(value: object) -> bytes:
    """A value as ``dumps`` encodes it inside a list: the same options, so rows join into identical documents."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


_JOB: _Job | None = None
_OBJECTS: GitObjects | None = None  # this process's reader of git objects, started when first needed


def _init_worker(job: _Job) -> None:
    global _JOB
    gc.enable()  # a worker forked while the parent had paused it (``_build_with``) collects as usual
    _JOB = job
    _MADE.clear()


def _objects(job: _Job) -> GitObjects | None:
    global _OBJECTS
    if _OBJECTS is None and job.git.top is not None:
        _OBJECTS = GitObjects(job.git.top)
    return _OBJECTS


def _close_objects() -> None:
    global _OBJECTS
    if _OBJECTS is not None:
        _OBJECTS.close()
        _OBJECTS = None


def _publish_versions(job: _Job, name: str, head: Head | None,
                      updated: str | None = None) -> tuple[tuple[str, ...], str | None, int]:
    """Write ``versions.json``, ``head.json`` and the zip of every old version that keeps its bytes; returns the
    digests, the latest one and the number of zips packed from git (the others came from the bundle cache)."""
    cache = BundleCache(job.cache)
    versions, packed = skill_versions(name, job.git.of(name), head, _objects(job), cache, job.config, job.profile,
                              lambda path, data: _write(job.tmp, path, data))
    latest = latest_of(versions, head.digest if head else None)
    _write(job.tmp, versions_path(name), dumps(versions_document(name, job.git.kind, latest, versions)))
    _write(job.tmp, head_path(name), dumps(head_document(name, head, latest, updated)))
    return tuple(v.digest for v in versions), latest, packed


def _build_retired(name: str) -> _Outcome:
    """A skill gone from skills/: its history stays published (versions.json and the zips), nothing else."""
    job = _JOB
    assert job is not None
    digests, latest, packed = _publish_versions(job, name, None)
    return _Outcome(name=name, folder="", skill_md="", declared=None, name_line=0, diagnostics=(), signature="",
                    history=job.git.fingerprint(name), digests=digests, latest=latest, retired=True, packed=packed)


def _build_task(task: tuple[str, Path | None]) -> _Outcome:
    name, folder = task
    return (_build_one(folder) if folder is not None else _build_retired(name)).encoded()


# Above this many folders a rebuild compares their signatures in worker processes: at 60,000 skills the stat
# calls are most of what a rebuild after one change does.
PARALLEL_SIGNATURES = 20_000
_SIGNATURE_CHUNK = 1_000


def _no_setup() -> None:
    """Signature workers need nothing but the folder names they are sent."""
    gc.enable()


# What the signature workers compare, (folder, entries, signature) per folder: set before they are forked, so
# each inherits it and is sent only the ranges to compare (elsewhere than Linux, where workers are not forked,
# the ranges carry their items).
_COMPARED: Sequence[tuple[str, str, str]] = ()


def _changed_chunk(task: tuple[int, Sequence[tuple[str, str, str]] | None]) -> list[int]:
    start, items = task
    if items is None:
        items = _COMPARED[start:start + _SIGNATURE_CHUNK]
        if not items:
            raise RuntimeError("a signature worker was not given the folders to compare")
    return [start + n for n, (folder, entries, sig) in enumerate(items) if restat(folder, entries) != sig]


def _changed_folders(items: Sequence[tuple[str, str, str]], jobs: int | None) -> set[int]:
    """The positions of the (folder, entries, signature) whose folder's ``restat`` is not the signature."""
    global _COMPARED
    workers = (jobs if jobs is not None else default_jobs(len(items))) if len(items) >= PARALLEL_SIGNATURES else 1
    if workers <= 1:
        return set(_changed_chunk((0, items)))
    inherited = sys.platform == "linux"  # (builder.core.workers forks there)
    tasks = [(start, None if inherited else items[start:start + _SIGNATURE_CHUNK])
             for start in range(0, len(items), _SIGNATURE_CHUNK)]
    _COMPARED = items
    try:
        done = run_parallel(_changed_chunk, tasks, initializer=_no_setup, initargs=(), jobs=workers)
    finally:
        _COMPARED = ()
    return {n for chunk in done for n in chunk}


def _stat_line(rel: str, st: os.stat_result) -> str:
    # The change time too: content written back with the old size and modification time still moves it.
    return f"{rel}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{st.st_ctime_ns}"


def _digest_lines(lines: list[str]) -> str:
    lines.sort()
    return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def survey(folder: Path | str) -> tuple[str, str]:
    """The folder's signature, which changes when any file or folder in it changes (path, type, size,
    modification and change time, inode of the folder and of every entry below it), and the entries it
    covers, one relative path a line ("\0" when they cannot be stated again by ``restat``: an unreadable or
    vanishing entry, a name with a newline or not in UTF-8)."""
    root = os.fspath(folder)
    lines: list[str] = []
    entries: list[str] = []
    exact = True
    try:
        lines.append(_stat_line("", os.stat(root, follow_symlinks=False)))
    except OSError:
        lines.append("gone:")
        exact = False
    stack = [(root, "")]
    while stack:
        current, prefix = stack.pop()
        try:
            found = list(os.scandir(current))
        except OSError:
            lines.append(f"unreadable:{prefix}")
            exact = False
            continue
        for entry in found:
            rel = f"{prefix}{entry.name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                lines.append(f"gone:{rel}")
                exact = False
                continue
            lines.append(_stat_line(rel, st))
            entries.append(rel)
            if stat.S_ISDIR(st.st_mode):
                stack.append((entry.path, f"{rel}/"))
    entries.sort()
    listed = "\n".join(entries)
    exact = exact and "\n" not in "".join(entries) and _utf8(listed)
    return _digest_lines(lines), listed if exact else "\0"


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def signature(folder: Path | str) -> str:
    """``survey``'s signature of the folder."""
    return survey(folder)[0]


def restat(folder: str, entries: str) -> str:
    """``signature(folder)`` while no folder in it has gained, lost or renamed an entry since ``survey`` listed
    ``entries``, else a different value: such a change moves the times of the folder holding the entry, whose
    own line is part of the signature. One stat per path, no listing of folders; "" when a path is gone."""
    if "\0" in entries:
        return ""
    lines = []
    for rel in ("", *entries.split("\n")) if entries else ("",):
        try:
            st = os.stat(f"{folder}/{rel}" if rel else folder, follow_symlinks=False)
        except (OSError, ValueError):
            return ""
        lines.append(_stat_line(rel, st))
    return _digest_lines(lines)


def _fingerprints(git: GitHistory) -> Callable[[str], str]:
    """``git.fingerprint``; outside a repository (no skill has a history) the one value every name has."""
    if git.lines:
        return git.fingerprint
    none = git.fingerprint("")
    return lambda name: none


def _provenance_key(history: History) -> str:
    """Names the history read: ``read_history`` gives the same provenance to every skill for the same commit of
    the same repository and skills folder (outside one, or before its first commit, none at all)."""
    source = history.source
    return sha256_hex(json.dumps([source.commit, source.time, str(source.top), source.skills_prefix,
                                  len(history.skills)]).encode())


def _skill_key(config: RegistryConfig, history: History, name: str, digest: str, folder: str,
               skill_md: str) -> str:
    """Everything a skill's own output files depend on, beyond the build settings; equal keys, identical files."""
    prov = history.of(name)
    material = "\0".join([digest, folder, skill_md, str(history.source.top), str(prov.created), str(prov.updated),
                          str(prov.commit), "\x1f".join(prov.authors)])
    return hashlib.sha1(material.encode("utf-8", "surrogateescape")).hexdigest()


_MADE: set[Path] = set()  # folders this process created; on a slow disk even a failing mkdir costs


def _mkdirs(folder: Path) -> None:
    if folder not in _MADE:
        folder.mkdir(parents=True, exist_ok=True)
        _MADE.add(folder)


def _write(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    _mkdirs(path.parent)
    with open(path, "xb") as fh:
        fh.write(data)
    return path


def _build_one(folder: Path) -> _Outcome:
    job = _JOB
    assert job is not None
    sig, entries = survey(folder)
    skill, found = validate_folder(folder, job.config, job.profile)
    diagnostics = tuple(found)
    declared = skill.field("name")
    checked = _Outcome(name=skill.name, folder=str(folder), skill_md=skill.skill_md,
                       declared=declared if isinstance(declared, str) else None,
                       name_line=skill.frontmatter.line_of("name") if skill.frontmatter else 0,
                       diagnostics=diagnostics, signature=sig, entries=entries)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        return checked
    prov = job.history.of(skill.name)
    publish = job.config.publish
    stem = bundle_stem(skill)
    zipped = zip_bytes(skill.files)
    zip_art = Artifact(stem + ".zip", sha256_hex(zipped), len(zipped))
    _write(job.tmp, zip_art.path, zipped)
    json_art: Artifact | None = None
    if publish.json_bundles:
        bundle = dumps(json_bundle(skill))
        json_art = Artifact(stem + ".json", sha256_hex(bundle), len(bundle))
        _write(job.tmp, json_art.path, bundle)
    raw = raw_copies(skill, publish)
    _write(job.tmp, detail_path(skill.name),
           dumps(detail_document(job.config, job.history.source, skill, prov, zip_art, json_art, raw)))
    for f in skill.files:
        written = _write(job.tmp, raw_path(skill.name, f.path), f.data) if f.path in raw else None
        if publish.well_known_skills:
            copy = f"{WELL_KNOWN_V1}/{skill.name}/{f.path}"
            if written is None:
                _write(job.tmp, copy, f.data)
            else:
                _mkdirs((job.tmp / copy).parent)
                os.link(written, job.tmp / copy)  # the same bytes under the discovery path, written once
    scoped = scoped_discovery_path(skill.name)
    _write(job.tmp, scoped, dumps(discovery_v2_document([discovery_v2_entry(skill, zip_art, scoped)])))
    key = _skill_key(job.config, job.history, skill.name, skill.digest, str(folder), skill.skill_md)
    digests, latest, packed = _publish_versions(job, skill.name, Head(skill.digest, version_of(skill),
                                                                      zip_art.to_dict(job.config), skill.files),
                                                prov.updated)
    return replace(checked, digest=skill.digest, key=key, index=index_entry(skill, prov),
                   v1=discovery_v1_entry(skill), v2=discovery_v2_entry(skill, zip_art), search=search_entry(skill),
                   history=job.git.fingerprint(skill.name), digests=digests, latest=latest, packed=packed)


# ------------------------------------------------------------------------------------ the builder's own records

JOURNAL_VERSION = 1


@dataclass(frozen=True)
class _Place:
    """An output folder: as the user named it, its real path, and the builder's records about it."""

    out: Path  # for messages
    base: Path  # the real path; every folder the build makes is a sibling of it
    state: Path

    @property
    def journal(self) -> Path:
        return self.state / "journal.json"

    @property
    def manifest(self) -> Path:
        return self.state / "manifest.sqlite"

    @property
    def trash_records(self) -> Path:
        """One empty file per folder of ours beside the output that is to go: trash, and the staging folder of a
        build that is running (or was killed)."""
        return self.state / "trash"

    def fresh(self, kind: str) -> Path:
        """A new sibling name of ours: no earlier folder, committed or not, can already have it."""
        return self.base.with_name(f".{self.base.name}.{kind}-{os.getpid()}-{secrets.token_hex(8)}")

    def owns(self, name: object, kind: str) -> bool:
        """Whether ``name`` is one ``fresh(kind)`` makes: a plain name, so the path is a sibling of the output."""
        pattern = rf"\.{re.escape(self.base.name)}\.{kind}-[0-9]+-[0-9a-f]{{16}}"
        return isinstance(name, str) and re.fullmatch(pattern, name) is not None


def _place(out: Path) -> _Place:
    base = out.resolve()
    tag = hashlib.sha256(os.fsencode(base)).hexdigest()[:16]
    return _Place(out, base, state_dir() / "builds" / tag)


class OutputBusy(BuildError):
    """Another build holds the output and the caller asked not to wait."""

    def __init__(self, out: Path, holder: int | None) -> None:
        who = f" (process {holder})" if holder else ""
        super().__init__(f"another build of {display_path(out)} is running{who}; nothing was changed. "
                         "Run the build again when it has finished")


@contextmanager
def output_lock(out: Path, *, wait: bool = True,
                on_wait: Callable[[int | None], None] | None = None) -> Iterator[_Place]:
    """Hold the output's exclusive lock: one build (and its recovery) at a time per real output path."""
    place = _place(out)
    place.state.mkdir(parents=True, exist_ok=True, mode=0o700)
    with ExitStack() as stack:
        try:
            stack.enter_context(exclusive_lock(place.state / "lock", wait=wait, on_wait=on_wait))
        except LockHeld as held:
            raise OutputBusy(out, held.holder) from None
        yield place


# ---------------------------------------------------------------------------------------------- the manifest

def _settings(config: RegistryConfig, profile: str, site: bool) -> str:
    """A rebuild may reuse skills only when everything else the output depends on is unchanged."""
    settings = asdict(config)
    settings["root"] = str(config.root.resolve())
    settings["path"] = str(config.path.resolve()) if config.path else None
    return sha256_hex(json.dumps({"builder": __version__, "config": settings, "profile": profile, "site": site},
                                 sort_keys=True, default=str).encode())


_PLAIN_NAME = re.compile(r"[^/\\\x00]+")  # one part of a ``_safe_unit``: no separator, no NUL


def _previous(stored: StoredManifest | None) -> dict[str, _Outcome] | None:
    """The previous build's outcomes, when its manifest is one this builder wrote: skill names in it are plain
    folder names (a unit path made from any other name could leave the output)."""
    if stored is None:
        return None
    try:
        previous = {record[0]: _Outcome.from_record(record) for record in stored.skills()}
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        return None
    if not all(isinstance(name, str) and _PLAIN_NAME.fullmatch(name) and name not in (".", "..")
               for name in previous):
        return None
    return previous


def _names_key(names: Sequence[str]) -> str:
    return hashlib.sha1("\n".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def _registry_findings(outcomes: Sequence[_Outcome], heads: Sequence[Skill], stored: StoredManifest | None,
                       meta: dict[str, str]) -> list[Diagnostic]:
    """``check_registry`` over the heads, or its findings as the manifest keeps them when no skill's name,
    folder or SKILL.md changed (nor the folder paths are shown from)."""
    key = hashlib.sha1("\n".join([os.getcwd(), *(f"{o.name}\0{o.folder}\0{o.skill_md}\0{o.declared}\0{o.name_line}"
                                                 for o in outcomes)]).encode("utf-8", "surrogateescape")).hexdigest()
    meta["registry"] = key
    if stored is not None and stored.meta.get("registry") == key and "registry_findings" in stored.meta:
        with suppress(ValueError, KeyError, TypeError):
            found = list(_findings(stored.meta["registry_findings"]))
            meta["registry_findings"] = stored.meta["registry_findings"]
            return found
    found = check_registry(heads)
    meta["registry_findings"] = _findings_json(found)
    return found


# The registry-wide documents made of one row per published skill: (path, the rows' kind, the list's key).
_DOCUMENTS = ((INDEX_PATH, "index"), (f"{WELL_KNOWN_V1}/index.json", "v1"), (f"{WELL_KNOWN_V2}/index.json", "v2"),
              (SEARCH_INDEX_PATH, "search"))


def _frames(config: RegistryConfig, source: Source, count: int) -> dict[str, dict[str, Any]]:
    """Each document of ``_DOCUMENTS`` with an empty list of skills: its rows go in as the bytes they are."""
    return {"index": {**index_document(config, source, []), "count": count}, "v1": discovery_v1_document([]),
            "v2": discovery_v2_document([]), "search": search_index([])}


def _assemble(frame: dict[str, Any], rows: Sequence[bytes]) -> bytes:
    """``dumps`` of the frame with ``rows`` (each encoded by ``_encode_row``) as its ``skills`` list, without
    decoding or encoding a row again."""
    head = dumps(frame)
    marker = b'"skills":[]'
    if frame.get("skills") != [] or head.count(marker) != 1:
        raise ValueError("not a frame of one of the registry-wide documents")
    cut = head.index(marker) + len(marker) - 1
    return b"".join((head[:cut], b",".join(rows), head[cut:]))


def _stale_documents(kept: Sequence[_Outcome], frames: dict[str, dict[str, Any]], stored: StoredManifest | None,
                     meta: dict[str, str]) -> set[str]:
    """The kinds of ``_DOCUMENTS`` whose bytes differ from what the output holds: any when the published skills
    or a frame changed, else those where a skill built this time has a row other than the one it had."""
    for kind, frame in frames.items():
        meta[f"frame:{kind}"] = sha256_hex(dumps(frame))
    meta["published"] = _names_key([o.name for o in kept])
    if stored is None or stored.meta.get("published") != meta["published"]:
        return set(frames)
    stale = {kind for kind in frames if stored.meta.get(f"frame:{kind}") != meta[f"frame:{kind}"]}
    fresh = [o for o in kept if o.fresh]
    for kind in set(frames) - stale:
        before = stored.rows(kind, [o.name for o in fresh])
        if any(o.row(kind) != before.get(o.name) for o in fresh):
            stale.add(kind)
    return stale


def _write_documents(tmp: Path, out: Path, config: RegistryConfig, source: Source, kept: Sequence[_Outcome],
                     stored: StoredManifest | None, meta: dict[str, str]) -> list[str]:
    """Stage the registry-wide documents that change and return the units to commit for them. A row of a skill
    reused from the last build comes from the manifest as the bytes it was published as; the search shards,
    named by their content's digest, are staged only when new, and those no longer named are removed."""
    frames = _frames(config, source, len(kept))
    stale = _stale_documents(kept, frames, stored, meta)
    units: list[str] = []
    for path, kind in _DOCUMENTS:
        if kind not in stale or (kind == "v1" and not config.publish.well_known_skills):
            continue
        rows = _joined_rows(kind, kept, stored)
        lacking = next((o.name for o, row in zip(kept, rows) if row is None), None)
        if lacking is not None:
            if stored is not None:  # not what this builder writes: the next build starts from scratch
                stored.path.unlink(missing_ok=True)
            raise BuildError(f"the record of the last build of {display_path(out)} lacks the {kind} row of "
                             f"`{lacking}`, so it was deleted; nothing was changed: build again to rebuild every "
                             "skill")
        data = _assemble(frames[kind], [row for row in rows if row is not None])
        _write(tmp, path, data)
        units.append(path)
        if kind == "index":
            meta["index_sha256"] = sha256_hex(data)
        if kind == "search":
            units += _stage_shards(tmp, out, kept, [row for row in rows if row is not None], stored, meta)
    return units


def _joined_rows(kind: str, kept: Sequence[_Outcome], stored: StoredManifest | None) -> list[bytes | None]:
    """Each kept skill's row of one document: its own when built this time, else the one the manifest keeps
    (None when it has none)."""
    if stored is None:
        return [o.row(kind) for o in kept]
    names, before = stored.sorted_rows(kind)
    if names == [o.name for o in kept]:  # the same skills as last time, in the same order: no lookups by name
        return [o.row(kind) if o.fresh else row for o, row in zip(kept, before)]
    kept_rows = dict(zip(names, before))
    return [o.row(kind) if o.fresh else kept_rows.get(o.name) for o in kept]


def _stage_shards(tmp: Path, out: Path, kept: Sequence[_Outcome], rows: Sequence[bytes],
                  stored: StoredManifest | None, meta: dict[str, str]) -> list[str]:
    """Stage the sharded search index and return its units. When the same skills are published as last time,
    only the files holding a changed row are made again, from the ones the output holds (``update_search_files``,
    checked against the manifest's record of the shards' index); else every file is made from the rows."""
    updated = None
    if stored is not None and stored.meta.get("published") == meta["published"]:
        fresh = [o for o in kept if o.fresh]
        before = stored.rows("search", [o.name for o in fresh])
        manifest = _read_or_none(out / SHARDS_INDEX_PATH)
        if (all(o.name in before for o in fresh) and manifest is not None
                and sha256_hex(manifest) == stored.meta.get("shards_sha256")):
            changes = {o.name: (json.loads(before[o.name]), json.loads(row)) for o in fresh
                       if (row := o.row("search")) is not None and row != before[o.name]}
            shards = manifest
            updated = update_search_files(
                [o.name for o in kept], lambda number: json.loads(rows[number]), changes,
                lambda rel: shards if rel == SHARDS_INDEX_PATH else (out / rel).read_bytes())
    if updated is None:
        files = search_files([SearchRow(*json.loads(row)) for row in rows])
        meta["shards_sha256"] = sha256_hex(files[SHARDS_INDEX_PATH])
        return _write_shards(tmp, out, files, whole=stored is None)
    made, gone = updated
    meta["shards_sha256"] = sha256_hex(made[SHARDS_INDEX_PATH])
    for rel, data in made.items():
        _write(tmp, rel, data)
    return [*made, *gone]


def _write_shards(tmp: Path, out: Path, files: dict[str, bytes], *, whole: bool) -> list[str]:
    """Stage the sharded search index: every file for a whole build, else only the files the output lacks (a
    shard's name is its content's digest) and the shards' manifest, with a unit removing each file no longer
    named. Returns the units."""
    have: set[str] = set()
    if not whole:
        for folder, _dirs, names in os.walk(out / SHARDS_ROOT):
            rel = Path(folder).relative_to(out).as_posix()
            have.update(f"{rel}/{name}" for name in names)
    units = []
    for rel, data in files.items():
        if rel == SHARDS_INDEX_PATH or rel not in have:
            _write(tmp, rel, data)
            units.append(rel)
    return units + sorted(have - set(files))


# ----------------------------------------------------------------------------------- putting the output in place

def recover(out: Path) -> bool:
    """Finish or undo a commit that was interrupted; True when there was one. The caller holds ``output_lock``."""
    return _recover(_place(out))


def _safe_unit(rel: object) -> bool:
    """A unit is a plain relative path below the output: no absolute path, no ``..``, ``.`` or empty part."""
    return (isinstance(rel, str) and bool(rel) and "\\" not in rel and "\0" not in rel
            and all(part not in ("", ".", "..") for part in rel.split("/")))


def _link_on_the_way(root: Path, rel: str, checked: set[Path]) -> Path | None:
    """The first symbolic link among ``root`` and the folders from it to ``rel``; moving a unit never goes
    through one. ``checked`` remembers folders already seen to be real (units share their parents)."""
    folder = root
    for part in ("", *rel.split("/")[:-1]):
        folder = folder / part if part else folder
        if folder in checked:
            continue
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(mode):
            return folder
        checked.add(folder)
    return None


def _checked_journal(place: _Place) -> dict[str, Any] | None:
    """The journal of an interrupted commit, if any, after checking it names only what this machinery makes."""
    try:
        text = place.journal.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    problem = ""
    try:
        journal = json.loads(text)
    except ValueError:
        journal, problem = None, "is not JSON"
    if not problem and not (isinstance(journal, dict) and journal.get("version") == JOURNAL_VERSION
                            and journal.get("out") == str(place.base)
                            and journal.get("state") in ("prepared", "committed")
                            and isinstance(journal.get("units"), list)):
        problem = "is not a journal this builder wrote for this output"
    if not problem:
        assert isinstance(journal, dict)
        if not (place.owns(journal.get("tmp"), "tmp") and place.owns(journal.get("backup"), "backup")):
            problem = "names a temporary or backup folder the build does not make"
        elif not all(isinstance(u, dict) and _safe_unit(u.get("path")) and isinstance(u.get("had_old"), bool)
                     and isinstance(u.get("has_new"), bool) for u in journal["units"]):
            problem = "names a path that is not a plain relative path inside the output"
        else:
            checked: set[Path] = set()
            roots = [place.base] + [place.base.parent / journal[k] for k in ("tmp", "backup")]
            for unit in journal["units"]:
                link = next((found for root in roots if (found := _link_on_the_way(root, unit["path"], checked))),
                            None)
                if link is not None:
                    problem = f"would move files through the symbolic link {link}"
                    break
    if problem:
        raise BuildError(f"{place.journal}: {problem}; nothing was changed. It records an interrupted build of "
                         f"{display_path(place.out)}: check the output, then delete the journal to build again")
    assert isinstance(journal, dict)
    return journal


def _recover(place: _Place) -> bool:
    journal = _checked_journal(place)
    if journal is None:
        return False
    backup, tmp = place.base.parent / journal["backup"], place.base.parent / journal["tmp"]
    if journal["state"] != "committed":
        for unit in reversed(journal["units"]):
            rel, had_old, has_new = unit["path"], unit["had_old"], unit["has_new"]
            current, saved = place.base / rel, backup / rel
            if had_old and os.path.lexists(saved):
                _remove(current)
                current.parent.mkdir(parents=True, exist_ok=True)
                os.rename(saved, current)
            elif not had_old and has_new and not os.path.lexists(tmp / rel):
                _remove(current)
    _remove(backup)
    _remove(tmp)
    place.journal.unlink()
    return True


def _remove(path: Path) -> None:
    """Delete ``path``; a symbolic link is removed itself, never followed."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _commit_units(tmp: Path, place: _Place, units: list[str]) -> None:
    """Move each staged unit over its old self, keeping the old ones aside until every unit is in place."""
    out = place.base
    checked: set[Path] = set()
    for rel in units:
        if not _safe_unit(rel):
            raise BuildError(f"refusing to publish {rel!r}: not a plain relative path inside the output")
        link = _link_on_the_way(out, rel, checked) or _link_on_the_way(tmp, rel, checked)
        if link is not None:
            raise BuildError(f"{display_path(link)} is a symbolic link; the build never moves files through one. "
                             f"Nothing was changed: remove the link (or all of {display_path(place.out)}) and "
                             "build again")
    backup = place.fresh("backup")
    plan: list[dict[str, Any]] = [
        {"path": rel, "had_old": os.path.lexists(out / rel), "has_new": os.path.lexists(tmp / rel)}
        for rel in units]
    journal = {"version": JOURNAL_VERSION, "out": str(out), "tmp": tmp.name, "backup": backup.name, "units": plan,
               "state": "prepared"}
    write_atomic(place.journal, json.dumps(journal).encode("utf-8"))
    try:
        for unit in plan:
            rel = unit["path"]
            if unit["had_old"]:
                (backup / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(out / rel, backup / rel)
            if unit["has_new"]:
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(tmp / rel, out / rel)
        journal["state"] = "committed"
        write_atomic(place.journal, json.dumps(journal).encode("utf-8"))
    except BaseException:
        _recover(place)  # put every unit back as it was; a process killed here is recovered by the next build
        raise
    with suppress(OSError):  # the new output is in place; the next build's recovery removes what is left
        if backup.exists():
            _discard(backup, place)
        place.journal.unlink()




def _swap(tmp: Path, place: _Place) -> None:
    """Put ``tmp`` at the output; an existing one is exchanged atomically where the OS allows, then discarded."""
    out = place.base
    if out.exists():
        if exchange(tmp, out):
            with suppress(OSError):  # the new output is in place; the caller deletes ``tmp`` (the old one) itself
                _discard(tmp, place)
            return
        old = place.fresh("old")
        os.rename(out, old)
        os.rename(tmp, out)
        try:
            _discard(old, place)
        except OSError:
            shutil.rmtree(old, ignore_errors=True)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.rename(tmp, out)


_DELETER = """import contextlib, os, shutil, sys
shutil.rmtree(sys.argv[1], True)
if not os.path.lexists(sys.argv[1]):
    with contextlib.suppress(OSError):
        os.unlink(sys.argv[2])
"""


def _discard(folder: Path, place: _Place) -> None:
    """Delete a replaced tree in a detached process: on a slow disk removing 100,000 files takes minutes, and
    nothing needs to wait for it. The trash folder is recorded first, so a deleter that dies leaves a record
    the next build finishes from; nothing else beside the output is ever deleted as trash."""
    trash = place.fresh("trash")
    record = place.trash_records / trash.name
    record.parent.mkdir(parents=True, exist_ok=True)
    record.touch()
    os.rename(folder, trash)
    try:
        subprocess.Popen([sys.executable, "-c", _DELETER, str(trash), str(record)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        shutil.rmtree(trash, ignore_errors=True)
        record.unlink(missing_ok=True)


def _being_deleted(trash: Path) -> bool:
    """Whether a running process was started to delete ``trash`` (its path is on that process's command line)."""
    needle = os.fsencode(str(trash))
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def _empty_trash(place: _Place) -> None:
    """Remove the recorded folders a detached deletion or a killed build left, unless a deleter is at work on them."""
    try:
        records = list(os.scandir(place.trash_records))
    except FileNotFoundError:
        return
    for record in records:
        if not (place.owns(record.name, "trash") or place.owns(record.name, "tmp")):
            continue
        trash = place.base.parent / record.name
        if os.path.lexists(trash):
            if _being_deleted(trash):
                continue
            if trash.is_dir() and not trash.is_symlink():
                shutil.rmtree(trash, ignore_errors=True)
        if not os.path.lexists(trash) or trash.is_symlink() or not trash.is_dir():
            # Gone, or something other than the folder we made is there now: leave it. A detached deleter that
            # has just finished removes the same record, so it may be gone already.
            Path(record.path).unlink(missing_ok=True)


def _output_error(exc: OSError, place: _Place, existed: bool) -> BuildError | None:
    """An error writing the build's own folders, as one line about the output rather than a temporary file."""
    def ours(name: Any) -> bool:
        path = Path(os.fsdecode(name))
        first = path.relative_to(place.base.parent).parts[:1] if path.is_relative_to(place.base.parent) else ()
        return bool(first) and (first[0] == place.base.name or first[0].startswith(f".{place.base.name}."))

    names = [name for name in (exc.filename, exc.filename2) if name is not None]
    if names and not any(ours(name) for name in names):  # (no name at all: a write() into a staged file)
        return None
    what = os_error_message(OSError(exc.errno, exc.strerror, display_path(place.out)))
    return BuildError(f"{what} ({'the previous output is unchanged' if existed else 'nothing was written'})")


def _check_out(out: Path, config: RegistryConfig) -> None:
    resolved = out.resolve()
    for protected in (config.root.resolve(), config.skills_path.resolve()):
        if resolved == protected or protected.is_relative_to(resolved):
            raise UsageError(f"--out {display_path(out)} would replace {display_path(protected)}; pick another folder")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {display_path(out)} is a file")
    if out.is_dir() and any(out.iterdir()) and not (out / INDEX_PATH).is_file():
        raise UsageError(f"--out {display_path(out)} is not empty and holds no previous build; "
                         "refusing to replace it")


# ------------------------------------------------------------------------------------------------- the build

def build(config: RegistryConfig, out: Path, *, paths: Sequence[Path] | None = None, base_url: str | None = None,
          jobs: int | None = None, keep_going: bool = False, profile: str | None = None, site: bool = True,
          on_progress: Callable[[int, int], None] | None = None, wait: bool = True,
          on_wait: Callable[[int | None], None] | None = None, bundle_cache: Path | None = None) -> BuildResult:
    """Validate, then write the output; see the module docstring for how it is put in place.

    The whole build, recovery included, holds the output's lock: another build of the same output waits
    (``on_wait`` is told once it has waited a moment) or, with ``wait=False``, stops with ``OutputBusy``.
    ``bundle_cache`` (else ``SKILLREG_BUNDLE_CACHE``, else a folder in the output's state) keeps old versions'
    zips and records so that a rebuild packs only new digests.
    """
    if bundle_cache is None and os.environ.get(BUNDLE_CACHE_ENV):
        bundle_cache = Path(os.environ[BUNDLE_CACHE_ENV])
    if base_url is not None:
        config = replace(config, base_url=base_url)
    profile = profile or config.profile
    roots = list(paths) if paths else [config.skills_path]
    for root in roots:
        if not root.is_dir() and root == config.skills_path:
            raise UsageError(f"{display_path(root)}: no such folder, so there is no skill to build (the registry's "
                             f"skills go there, `skills_dir` in {CONFIG_NAME}); create the first with "
                             f"`skillreg new NAME`")
        if not root.is_dir():
            raise UsageError(f"{display_path(root)}: no such folder")
    with output_lock(out, wait=wait, on_wait=on_wait) as place:
        return _build_locked(config, place, roots, jobs=jobs, keep_going=keep_going, profile=profile, site=site,
                             on_progress=on_progress, bundle_cache=bundle_cache or place.state / "bundles")


def _skill_folders(roots: Sequence[Path]) -> list[Path]:
    if len(roots) == 1:
        return find_skill_folders(roots[0])  # sorted by name already, each once
    return sorted({f for root in roots for f in find_skill_folders(root)}, key=lambda p: (p.name, str(p)))


def _build_locked(config: RegistryConfig, place: _Place, roots: list[Path], *, jobs: int | None, keep_going: bool,
                  profile: str, site: bool, on_progress: Callable[[int, int], None] | None,
                  bundle_cache: Path) -> BuildResult:
    out = place.base
    _recover(place)
    _empty_trash(place)
    _check_out(place.out, config)
    folders = _skill_folders(roots)
    history = read_history(roots[0], place.state / "provenance.json")
    git = read_skills_history(config.skills_path, place.state / "history.json")
    check_cache_place(bundle_cache, git.top or config.root, place.out)
    whole = any(root.resolve() == config.skills_path.resolve() for root in roots)
    present = {folder.name for folder in folders}
    gone = [name for name in git.names if name not in present] if whole else []
    warnings: list[str] = []
    if git.kind == "shallow":
        warnings.append(f"{display_path(git.top or config.root)} is a shallow clone: versions older than its first "
                        "commit are missing from versions.json (marked \"history\": \"shallow\"); fetch the whole "
                        "history (git fetch --unshallow, or actions/checkout with fetch-depth: 0) to publish them")
    settings = _settings(config, profile, site)
    index_before = (out / INDEX_PATH).read_bytes() if (out / INDEX_PATH).is_file() else None
    with suppress(OSError):
        (place.state / "manifest.json").unlink(missing_ok=True)  # the record of builders before manifest.sqlite
    stored = read_manifest(place.manifest, settings, sha256_hex(index_before) if index_before is not None else None)
    collecting = gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        return _build_with(config, place, folders, gone, git, history, warnings, settings, index_before, stored,
                           jobs=jobs, keep_going=keep_going, profile=profile, site=site, on_progress=on_progress,
                           bundle_cache=bundle_cache)
    finally:
        if not frozen:
            gc.unfreeze()
        if collecting:
            gc.enable()
        if stored is not None:
            stored.close()


def _build_with(config: RegistryConfig, place: _Place, folders: list[Path], gone: list[str], git: GitHistory,
                history: History, warnings: list[str], settings: str, index_before: bytes | None,
                stored: StoredManifest | None, *, jobs: int | None, keep_going: bool, profile: str, site: bool,
                on_progress: Callable[[int, int], None] | None, bundle_cache: Path) -> BuildResult:
    out = place.base
    # The cyclic collector is paused while the parent makes and reads one small object per skill (60,000 of
    # them, none in a cycle): its full collections would walk the whole heap again and again. It runs while
    # workers are forked and while the website is written; _build_locked restores it on any exit.
    collecting = gc.isenabled()
    gc.disable()
    previous = _previous(stored)
    if previous is None:
        stored = None
    reused: list[_Outcome] = []
    to_build: list[tuple[str, Path | None]] = []
    known = previous or {}
    named = [(folder.name, str(folder), folder) for folder in folders]
    candidates = [old for name, path, _ in named if (old := known.get(name)) is not None and old.folder == path]
    moved = _changed_folders([(old.folder, old.entries, old.signature) for old in candidates], jobs)
    unchanged = {old.folder for n, old in enumerate(candidates) if n not in moved}
    fingerprint = _fingerprints(git)
    # Each skill's key depends on its own record and on the history, which the same commit gives again.
    provenance = _provenance_key(history)
    same_history = stored is not None and stored.meta.get("provenance") == provenance
    for name, path, folder in named:
        old = known.get(name)
        if (old is not None and old.folder == path and path in unchanged
                and old.history == fingerprint(name)
                and (old.digest is None or same_history
                     or old.key == _skill_key(config, history, old.name, old.digest, old.folder, old.skill_md))):
            reused.append(old)
        else:
            to_build.append((name, folder))
    for name in gone:
        old = previous.get(name) if previous is not None else None
        if old is not None and old.retired and old.history == fingerprint(name):
            reused.append(old)
        else:
            to_build.append((name, None))

    meta: dict[str, str] = {"version": str(MANIFEST_VERSION), "settings": settings, "provenance": provenance}
    # The records read so far live until the end of the build: once the collector runs again it leaves them out
    # (_build_locked puts them back in its care on any exit; a caller's own frozen objects are left as they are).
    if not gc.get_freeze_count():
        gc.freeze()
    tmp = place.fresh("tmp")
    record = place.trash_records / tmp.name  # if this process is killed, the next build removes ``tmp``
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.touch()
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        if collecting:
            gc.enable()
        try:
            try:
                built = run_parallel(_build_task, to_build, initializer=_init_worker,
                                     initargs=(_Job(config, profile, history, tmp, git, bundle_cache),), jobs=jobs,
                                     on_progress=on_progress)
            finally:
                _close_objects()  # the one this process started when it built the skills itself
            gc.disable()
            retired = sorted((o for o in reused + built if o.retired), key=lambda o: o.name)
            outcomes = sorted((o for o in reused + built if not o.retired), key=lambda o: (o.name, o.folder))
            paths = {str(folder): folder for folder in folders}  # (str of a Path is kept once computed)
            heads = tuple(o.head(paths.get(o.folder)) for o in outcomes)
            diagnostics = [d for o in outcomes for d in o.diagnostics]
            diagnostics += _registry_findings(outcomes, heads, stored, meta)
            diagnostics.sort(key=Diagnostic.sort_key)
            report = ValidationReport(heads, tuple(diagnostics))
            invalid = report.invalid_names()
            if invalid and not keep_going:
                raise BuildFailed(report)
            kept = [o for o in outcomes if o.name not in invalid and o.digest is not None]
            for o in built:
                if o.name in invalid:
                    for unit in skill_units(o.name):
                        _remove(tmp / unit)
            # Left out under --keep-going, an invalid skill still keeps what it published before.
            still = [(name, None) for name in sorted(invalid) if git.of(name) and name not in gone]
            if still:
                try:
                    built_retired = run_parallel(_build_task, still, initializer=_init_worker,
                                                 initargs=(_Job(config, profile, history, tmp, git, bundle_cache),),
                                                 jobs=1)
                finally:
                    _close_objects()
                retired += built_retired
                built += built_retired
            by_name = {o.name: o for o in [*kept, *retired] if o.digests}
            check_marks(config.history, config.path, lambda name: set(by_name[name].digests) if name in by_name
                        else None, {o.name: o.digest for o in kept if o.digest})
            retired_names = {o.name for o in retired}
            source = history.source
            meta["index_sha256"] = sha256_hex(index_before) if index_before is not None else ""
            global_units = _write_documents(tmp, out, config, source, kept, stored, meta)
            global_units += stage_skills_manifest(tmp, out, [o.name for o in kept], [o.name for o in built],
                                                  whole=previous is None)
            state = dumps(state_document(len(kept), {o.name: o.latest for o in [*kept, *retired]}))
            if previous is None or _read_or_none(out / STATE_PATH) != state:
                _write(tmp, STATE_PATH, state)
                global_units.append(STATE_PATH)
            write_schemas(tmp)
            _write(tmp, ".nojekyll", b"")
            global_units += [SCHEMA_DIR, ".nojekyll"]
            if collecting:
                gc.enable()
            if site and previous is not None:
                _lend(out, tmp, [rel for rel in (INDEX_PATH, SHARDS_INDEX_PATH) if rel not in global_units])
            removed: list[str] = []
            changed: list[str] = []
            if previous is not None:
                kept_names = {o.name for o in kept}
                removed = sorted(name for name, o in previous.items()
                                 if name not in kept_names and name not in retired_names
                                 and _published(out, name, o))
                changed = sorted({o.name for o in built if o.name in kept_names} | retired_names - {
                    o.name for o in reused if o.retired}) + removed
            site_units: list[str] = []
            if site:
                from ..site.pages import write_site

                # A rebuild writes only the pages its changes touch; the site names them as units to commit.
                site_units = list(write_site(config, tmp, report, api_roots=(tmp, out) if previous is not None
                                             else (tmp,), previous=out if previous is not None else None,
                                             changed=changed if previous is not None else None,
                                             state=place.state).units)
            if previous is None:
                _swap(tmp, place)
            else:
                _commit_units(tmp, place, [u for name in changed for u in skill_units(name)] + global_units
                              + site_units)
        finally:
            _remove(tmp)
            record.unlink(missing_ok=True)
    except OSError as exc:
        mapped = _output_error(exc, place, index_before is not None)
        if mapped is None:
            raise
        raise mapped from None
    _record(place.manifest, stored, meta, outcomes, retired, built, previous)
    fresh = {o.name for o in built}
    return BuildResult(
        out=place.out, report=report,
        published=tuple(o.name for o in kept),
        written=tuple(o.name for o in kept if o.name in fresh),
        reused=tuple(o.name for o in kept if o.name not in fresh),
        skipped=tuple(sorted(invalid)),
        removed=tuple(removed),
        commit=source.commit,
        retired=tuple(sorted(o.name for o in retired)),
        warnings=tuple(warnings),
        packed=sum(o.packed for o in built),
    )


def _lend(out: Path, tmp: Path, paths: Sequence[str]) -> None:
    """Link unchanged published documents the website reads into the staging folder; they are no units, so
    they go with it."""
    for rel in paths:
        _mkdirs((tmp / rel).parent)
        try:
            os.link(out / rel, tmp / rel)
        except OSError:
            shutil.copyfile(out / rel, tmp / rel)


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _published(out: Path, name: str, old: _Outcome) -> bool:
    """Whether the previous output holds anything of ``name`` (a skill recorded as invalid published nothing)."""
    return (old.retired or old.digest is not None) and (
        os.path.lexists(out / detail_path(name)) or os.path.lexists(out / versions_path(name)))


def _record(path: Path, stored: StoredManifest | None, meta: dict[str, str], outcomes: Sequence[_Outcome],
            retired: Sequence[_Outcome], built: Sequence[_Outcome], previous: dict[str, _Outcome] | None) -> None:
    """Write the manifest: every skill's outcome (invalid ones too, so an unchanged invalid skill is not
    validated again), a skill left out under --keep-going as its invalid self rather than its kept history."""
    names = {o.name for o in outcomes}
    records = [*outcomes, *(o for o in retired if o.name not in names)]
    if stored is None or previous is None:
        if stored is not None:
            stored.close()
        write_manifest(path, meta=meta, rows=[o.to_record() for o in records])
        return
    stored.close()
    fresh = [o for o in records if o.fresh]
    recorded = {o.name for o in records}
    dropped = sorted(name for name in previous if name not in recorded)
    if fresh or dropped or any(stored.meta.get(k) != v for k, v in meta.items()):
        write_manifest(path, meta=meta, rows=[o.to_record() for o in fresh], removed=dropped, update=True)
