"""The build's record of the output it last wrote: one row per skill in an SQLite file in the user's state folder.

A rebuild reads the few columns it needs to decide what to reuse (folder, signature, entries, history, key) for every
skill, and the published rows of the global documents (index, discovery, search) as the bytes they were
encoded as, only when one of those documents has to be assembled again. Writing it back touches only the rows
of the skills that changed, in one transaction: a rebuild after one change costs the same at any size.
The record only saves work: one that is missing, stale or unreadable makes the next build a full one.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.fs import sync_path

MANIFEST_VERSION = 10  # 10: a skill v0.1 lists has its one raw copy there, none under files/ (an output built
# before is rebuilt, not reused); 9: files a browser runs are kept to archives (a v0.1 row may be empty); rows say
# whether the skill meets the open standard; skills keyed by their repository path (findings, history, provenance)
# The global documents a skill contributes a row to, in the order of the ``*_row`` columns.
ROW_KINDS = ("index", "v1", "v2", "search")
# Per skill: what decides its reuse, what the registry-wide rules and state.json need, its findings as JSON.
# ``entries``: every path below the folder that ``signature`` covers, so a rebuild can stat them without listing.
COLUMNS = ("name", "folder", "skill_md", "declared", "name_line", "signature", "entries", "digest", "key", "history",
           "digests", "latest", "retired", "diagnostics")
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE skills (name TEXT PRIMARY KEY, folder TEXT NOT NULL, skill_md TEXT NOT NULL, declared TEXT,"
    " name_line INTEGER NOT NULL, signature TEXT NOT NULL, entries TEXT NOT NULL, digest TEXT, key TEXT, history TEXT,"
    " digests TEXT NOT NULL, latest TEXT, retired INTEGER NOT NULL, diagnostics TEXT NOT NULL)",
    # One table per document, so that assembling one reads only its own rows.
    *(f"CREATE TABLE {kind}_rows (name TEXT PRIMARY KEY, row BLOB NOT NULL) WITHOUT ROWID" for kind in ROW_KINDS),
)
Row = tuple[Any, ...]  # COLUMNS, then one encoded row (bytes or None) per ROW_KINDS


@dataclass
class StoredManifest:
    """The previous build's manifest, open for reading until ``close``."""

    path: Path
    db: sqlite3.Connection
    meta: Mapping[str, str]

    def skills(self) -> Iterator[Row]:
        """Every skill's ``COLUMNS``."""
        return self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM skills")

    def rows(self, kind: str, names: Sequence[str] | None = None) -> dict[str, bytes]:
        """Name -> the skill's encoded row of one global document (``ROW_KINDS``), for the skills that have one:
        all of them, or those of ``names``."""
        if kind not in ROW_KINDS:
            raise ValueError(kind)
        query = f"SELECT name, row FROM {kind}_rows"  # (kind is one of ROW_KINDS)
        if names is None:
            return dict(self.db.execute(query))
        found: dict[str, bytes] = {}
        for start in range(0, len(names), 500):  # SQLite bounds the parameters of one statement
            chunk = names[start:start + 500]
            found.update(self.db.execute(f"{query} WHERE name IN ({', '.join('?' * len(chunk))})", chunk))
        return found

    def sorted_rows(self, kind: str) -> tuple[list[str], list[bytes]]:
        """Every skill's encoded row of one global document, and the names they belong to, in name order (SQLite
        compares the names' UTF-8 bytes, which orders them as Python compares them)."""
        if kind not in ROW_KINDS:
            raise ValueError(kind)
        pairs = self.db.execute(f"SELECT name, row FROM {kind}_rows ORDER BY name").fetchall()
        return [name for name, _ in pairs], [row for _, row in pairs]

    def close(self) -> None:
        self.db.close()


def read_manifest(path: Path, settings: str, index_sha256: str | None) -> StoredManifest | None:
    """The manifest, when it was written for these settings and for the ``index.json`` the output holds now."""
    if index_sha256 is None or not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        if (meta.get("version") != str(MANIFEST_VERSION) or meta.get("settings") != settings
                or meta.get("index_sha256") != index_sha256):
            db.close()
            return None
    except sqlite3.Error:
        db.close()
        return None
    return StoredManifest(path, db, meta)


def write_manifest(path: Path, *, meta: Mapping[str, str], rows: Iterable[Row], removed: Sequence[str] = (),
                   update: bool = False) -> None:
    """Record the output. With ``update``, change the existing file in one transaction (replace ``rows``, drop
    ``removed``, set ``meta``); else write a new file holding ``rows`` and put it in place whole. Best effort:
    on any failure the manifest is deleted, so the next build is a full one."""
    try:
        if update:
            _update(path, meta, rows, removed)
        else:
            _replace(path, meta, rows)
    except (OSError, sqlite3.Error):
        with suppress(OSError):
            path.unlink(missing_ok=True)


_INSERT = f"INSERT OR REPLACE INTO skills ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"


def _store(db: sqlite3.Connection, rows: Iterable[Row]) -> None:
    """Insert or replace each skill's record and its document rows (a kind it has no row of loses the old one)."""
    records = list(rows)
    db.executemany(_INSERT, [record[:len(COLUMNS)] for record in records])
    for number, kind in enumerate(ROW_KINDS, len(COLUMNS)):
        db.executemany(f"DELETE FROM {kind}_rows WHERE name = ?",
                       [(record[0],) for record in records if record[number] is None])
        db.executemany(f"INSERT OR REPLACE INTO {kind}_rows VALUES (?, ?)",
                       [(record[0], record[number]) for record in records if record[number] is not None])


def _replace(path: Path, meta: Mapping[str, str], rows: Iterable[Row]) -> None:
    staged = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with closing(sqlite3.connect(staged)) as db:
            db.execute("PRAGMA journal_mode=OFF")  # a new file, put in place only when complete
            for statement in _SCHEMA:
                db.execute(statement)
            _store(db, rows)
            db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            db.commit()
        sync_path(staged)
        os.replace(staged, path)
    finally:
        with suppress(OSError):
            staged.unlink(missing_ok=True)


def _update(path: Path, meta: Mapping[str, str], rows: Iterable[Row], removed: Sequence[str]) -> None:
    with closing(sqlite3.connect(path)) as db, db:  # one transaction: every change or none
        for table in ("skills", *(f"{kind}_rows" for kind in ROW_KINDS)):
            db.executemany(f"DELETE FROM {table} WHERE name = ?", [(name,) for name in removed])
        _store(db, rows)
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(meta.items()))
