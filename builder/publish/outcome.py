"""Each skill's outcome of a build and its rows of the registry-wide documents, as the manifest keeps them.

A rebuild publishes a reused skill's rows of ``index.json``, the discovery indexes and the search index as the
bytes they were encoded as last time (``StoredManifest.rows``): a document is joined from rows
(``join_rows``) without decoding or encoding a row again, and only when one of its rows changed
(``stale_documents``).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..core.bundle import dumps
from ..core.config import RegistryConfig
from ..core.diagnostics import Diagnostic, Severity
from ..core.model import Frontmatter, Skill, sha256_hex
from ..core.search import SEARCH_INDEX_PATH, SearchRow, search_index
from ..core.urls import INDEX_PATH, WELL_KNOWN_V1, WELL_KNOWN_V2
from ..core.workers import frozen_without_init
from .api import discovery_v1_document, discovery_v2_document, index_document
from .manifest import ROW_KINDS, Row, StoredManifest
from .provenance import Source

# A published skill's row of a document it is left out of (discovery v0.1, for a skill with a file kept to
# archives): encoded as no bytes, which ``join_rows`` leaves out, so it is told apart from a row that is missing.
LEFT_OUT: dict[str, Any] = {}


@dataclass(frozen=True)
class SkillOutcome:
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
    v1: dict[str, Any] | None = None  # LEFT_OUT: the skill is published but not in the discovery v0.1 index
    v2: dict[str, Any] | None = None
    search: SearchRow | None = None
    fresh: bool = True  # built in this run (False: taken from the manifest)
    history: str | None = None  # fingerprint of the skill's git history its versions were published from
    digests: tuple[str, ...] = ()  # every version it has published (registry.yaml may name only these)
    latest: str | None = None  # its versions.json's latest (what head.json and state.json publish)
    retired: bool = False  # gone from skills/: only its versions are published
    packed: int = 0  # old versions' zips packed from git in this run (not kept in the manifest)
    signed: tuple[int, str] | None = None  # the length and sha256 of the digests.json staged in this run (a signing
    # build; not kept in the manifest)
    rows: tuple[bytes | None, ...] = ()  # the rows above encoded, in ``ROW_KINDS`` order (``encoded``)

    @classmethod
    def versions_only(cls, name: str, history: str | None, digests: tuple[str, ...], latest: str | None,
                      **more: Any) -> SkillOutcome:
        """A skill of which only its versions are published: gone from skills/, or left out under --keep-going."""
        return cls(name=name, folder="", skill_md="", declared=None, name_line=0, diagnostics=(), signature="",
                   history=history, digests=digests, latest=latest, retired=True, **more)

    def head(self, folder: Path | None = None) -> Skill:
        """What the registry-wide rules read of the skill; ``folder``, when given, is ``Path(self.folder)``."""
        data = {"name": self.declared} if self.declared is not None else {}
        fm = frozen_without_init(Frontmatter, data=data, lines={"name": self.name_line}, start_line=1, end_line=1)
        return frozen_without_init(Skill, name=self.name, folder=folder or Path(self.folder), skill_md=self.skill_md,
                     frontmatter=fm, body="", body_line=1, files=())

    def row(self, kind: str) -> bytes | None:
        """This skill's row of one global document (``ROW_KINDS``), encoded as it stands inside the document."""
        if self.rows:
            return self.rows[ROW_KINDS.index(kind)]
        value = getattr(self, kind, None)
        if value is None:
            return None
        return b"" if value is LEFT_OUT else encode_row(value)

    def encoded(self) -> SkillOutcome:
        """The outcome with its rows as bytes only: what a worker sends back and the parent keeps per skill."""
        return replace(self, rows=tuple(self.row(kind) for kind in ROW_KINDS), index=None, v1=None, v2=None,
                       search=None)

    def to_record(self) -> Row:
        """The manifest's row: ``COLUMNS``, then the encoded global-document rows."""
        diagnostics = findings_json(self.diagnostics) if self.diagnostics else ""
        return (self.name, self.folder, self.skill_md, self.declared, self.name_line, self.signature, self.entries,
                self.digest, self.key, self.history, " ".join(self.digests), self.latest, int(self.retired),
                diagnostics, *(self.row(kind) for kind in ROW_KINDS))

    @classmethod
    def from_record(cls, record: Sequence[Any], shared: dict[str, str] | None = None) -> SkillOutcome:
        """An outcome read back from the manifest: its global-document rows stay there (``StoredManifest.rows``).
        ``shared``: the findings' texts read so far (``findings_from_json``)."""
        (name, folder, skill_md, declared, name_line, sig, entries, digest, key, history, digests, latest, retired,
         diagnostics) = record
        return frozen_without_init(
            cls, name=name, folder=folder, skill_md=skill_md, declared=declared, name_line=name_line,
            diagnostics=findings_from_json(diagnostics, shared) if diagnostics else (), signature=sig, entries=entries,
            digest=digest, key=key, history=history, digests=tuple(digests.split()), latest=latest,
            retired=bool(retired), fresh=False)



# A skill's own findings, before any baseline is applied (the build applies it to every skill's afresh).
_FINDING_FIELDS = tuple(f.name for f in fields(Diagnostic) if f.name != "baselined")

def findings_json(found: Sequence[Diagnostic]) -> str:
    return json.dumps([[getattr(d, name) for name in _FINDING_FIELDS] for d in found])


_SEVERITIES = {s.value: s for s in Severity}


def findings_from_json(text: str, shared: dict[str, str] | None = None) -> tuple[Diagnostic, ...]:
    """Findings as ``_findings_json`` recorded them, made without ``Diagnostic.__init__``: a rebuild reads back
    every finding of every unchanged skill (57,590 at 15,751 real skills), and the keyword call was most of it.
    The texts that repeat (a rule's code, message and hint; a skill's file and name) are kept once, in ``shared``
    across calls: 183,000 findings at 63,004 real skills have 332 hints and 5,230 messages."""
    found = []
    new = object.__new__
    keep = ({} if shared is None else shared).setdefault
    severities = _SEVERITIES
    for code, severity, file, line, message, hint, column, skill in json.loads(text):  # ``_FINDING_FIELDS``
        made = new(Diagnostic)
        made.__dict__.update(code=keep(code, code), severity=severities[severity], file=keep(file, file), line=line,
                             message=keep(message, message), hint=keep(hint, hint), column=column,
                             skill=keep(skill, skill), baselined=False)
        found.append(made)
    return tuple(found)


def encode_row(value: object) -> bytes:
    """A value as ``dumps`` encodes it inside a list: the same options, so rows join into identical documents."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")



_PLAIN_NAME = re.compile(r"[^/\\\x00]+")  # one part of a ``_safe_unit``: no separator, no NUL


def previous_outcomes(stored: StoredManifest | None) -> dict[str, SkillOutcome] | None:
    """The previous build's outcomes, when its manifest is one this builder wrote: skill names in it are plain
    folder names (a unit path made from any other name could leave the output)."""
    if stored is None:
        return None
    try:
        shared: dict[str, str] = {}
        previous = {record[0]: SkillOutcome.from_record(record, shared) for record in stored.skills()}
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        return None
    if not all(isinstance(name, str) and _PLAIN_NAME.fullmatch(name) and name not in (".", "..")
               for name in previous):
        return None
    return previous


def names_key(names: Sequence[str]) -> str:
    return hashlib.sha1("\n".join(names).encode("utf-8", "surrogateescape")).hexdigest()



# The registry-wide documents made of one row per published skill: (path, the rows' kind, the list's key).
DOCUMENTS = ((INDEX_PATH, "index"), (f"{WELL_KNOWN_V1}/index.json", "v1"), (f"{WELL_KNOWN_V2}/index.json", "v2"),
              (SEARCH_INDEX_PATH, "search"))


def document_frames(config: RegistryConfig, source: Source, count: int,
                    collections: Sequence[Mapping[str, Any]] = ()) -> dict[str, dict[str, Any]]:
    """Each document of ``DOCUMENTS`` with an empty list of skills: its rows go in as the bytes they are."""
    return {"index": {**index_document(config, source, [], collections), "count": count},
            "v1": discovery_v1_document([]), "v2": discovery_v2_document([]), "search": search_index([])}


def join_rows(frame: dict[str, Any], rows: Sequence[bytes]) -> bytes:
    """``dumps`` of the frame with ``rows`` (each encoded by ``_encode_row``) as its ``skills`` list, without
    decoding or encoding a row again; an empty row (a skill ``LEFT_OUT`` of the document) is skipped."""
    rows = [row for row in rows if row]
    head = dumps(frame)
    marker = b'"skills":[]'
    if frame.get("skills") != [] or head.count(marker) != 1:
        raise ValueError("not a frame of one of the registry-wide documents")
    cut = head.index(marker) + len(marker) - 1
    return b"".join((head[:cut], b",".join(rows), head[cut:]))


def stale_documents(kept: Sequence[SkillOutcome], frames: dict[str, dict[str, Any]],
                    stored: StoredManifest | None) -> tuple[set[str], dict[str, str]]:
    """The kinds of ``DOCUMENTS`` whose bytes differ from what the output holds: any when the published skills
    or a frame changed, else those where a skill built this time has a row other than the one it had; with the
    build record's entries that decide it (each frame's digest, the published names)."""
    record = {f"frame:{kind}": sha256_hex(dumps(frame)) for kind, frame in frames.items()}
    record[PUBLISHED_KEY] = names_key([o.name for o in kept])
    if stored is None or stored.meta.get(PUBLISHED_KEY) != record[PUBLISHED_KEY]:
        return set(frames), record
    stale = {kind for kind in frames if stored.meta.get(f"frame:{kind}") != record[f"frame:{kind}"]}
    fresh = [o for o in kept if o.fresh]
    for kind in set(frames) - stale:
        before = stored.rows(kind, [o.name for o in fresh])
        if any(o.row(kind) != before.get(o.name) for o in fresh):
            stale.add(kind)
    return stale, record


PUBLISHED_KEY = "published"  # the build record's key of the published skills' names (``names_key``)


def joined_rows(kind: str, kept: Sequence[SkillOutcome], stored: StoredManifest | None) -> list[bytes | None]:
    """Each kept skill's row of one document: its own when built this time, else the one the manifest keeps
    (None when it has none)."""
    if stored is None:
        return [o.row(kind) for o in kept]
    names, before = stored.sorted_rows(kind)
    if names == [o.name for o in kept]:  # the same skills as last time, in the same order: no lookups by name
        return [o.row(kind) if o.fresh else row for o, row in zip(kept, before)]
    kept_rows = dict(zip(names, before))
    return [o.row(kind) if o.fresh else kept_rows.get(o.name) for o in kept]


