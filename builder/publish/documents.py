"""The registry-wide documents a build stages: those of ``outcome.DOCUMENTS`` whose rows changed, and the sharded
search index, made again only where a changed row lies (``update_search_files``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.config import RegistryConfig
from ..core.errors import BuildError
from ..core.loader import display_path
from ..core.model import sha256_hex
from ..core.search import SHARDS_INDEX_PATH, SHARDS_ROOT, SearchRow
from .manifest import StoredManifest
from .outcome import (
    DOCUMENTS,
    PUBLISHED_KEY,
    SkillOutcome,
    document_frames,
    join_rows,
    joined_rows,
    stale_documents,
)
from .provenance import Source
from .search_shards import search_files, update_search_files
from .transaction import stage_content_named, stage_file


def stage_documents(tmp: Path, out: Path, config: RegistryConfig, source: Source, kept: Sequence[SkillOutcome],
                    stored: StoredManifest | None, collections: Sequence[Mapping[str, Any]] = (),
                    index_before: bytes | None = None) -> tuple[list[str], dict[str, str]]:
    """Stage the registry-wide documents that change; return the units to commit for them and this stage's
    entries of the build record. A row of a skill reused from the last build comes from the manifest as the bytes
    it was published as; the search shards, named by their content's digest, are staged only when new, and those
    no longer named are removed. ``index_before``: the index.json the output holds, which ``stored`` describes
    (``read_manifest`` checked its digest)."""
    frames = document_frames(config, source, len(kept), collections)
    stale, record = stale_documents(kept, frames, stored)
    units: list[str] = []
    for path, kind in DOCUMENTS:
        if kind not in stale or (kind == "v1" and not config.publish.well_known_skills):
            continue
        spliced = _spliced(index_before, kept, stored, record) if kind == "index" else None
        if spliced is not None:
            stage_file(tmp, path, spliced)
            units.append(path)
            record[INDEX_KEY] = sha256_hex(spliced)
            continue
        rows = joined_rows(kind, kept, stored)
        lacking = next((o.name for o, row in zip(kept, rows) if row is None), None)
        if lacking is not None:
            if stored is not None:  # not what this builder writes: the next build starts from scratch
                stored.path.unlink(missing_ok=True)
            raise BuildError(f"the record of the last build of {display_path(out)} lacks the {kind} row of "
                             f"`{lacking}`, so it was deleted; nothing was changed: build again to rebuild every "
                             "skill")
        data = join_rows(frames[kind], [row for row in rows if row is not None])
        stage_file(tmp, path, data)
        units.append(path)
        if kind == "index":
            record[INDEX_KEY] = sha256_hex(data)
        if kind == "search":
            shard_units, record[SHARDS_KEY] = _stage_shards(tmp, out, kept, [row for row in rows if row is not None],
                                                            stored, record[PUBLISHED_KEY])
            units += shard_units
    return units, record


INDEX_KEY = "index_sha256"  # the build record's digest of the index.json the output holds
SPLICED_ROWS = 16  # at most this many changed rows are put in place in the last index.json; more join every row


def _spliced(before: bytes | None, kept: Sequence[SkillOutcome], stored: StoredManifest | None,
             record: Mapping[str, str]) -> bytes | None:
    """index.json as the last one with each row that changed put in place: the same bytes as every row joined
    (``join_rows``), without reading every row back, when the same skills are published in the same frame and a
    few rows changed; None otherwise. Each row holds its skill's name, so its bytes occur once in the document."""
    if before is None or stored is None or stored.meta.get(PUBLISHED_KEY) != record[PUBLISHED_KEY] or \
            stored.meta.get("frame:index") != record["frame:index"]:
        return None
    fresh = [o for o in kept if o.fresh]
    old = stored.rows("index", [o.name for o in fresh])
    changed = [(old.get(o.name), o.row("index")) for o in fresh if old.get(o.name) != o.row("index")]
    if len(changed) > SPLICED_ROWS:
        return None
    data = before
    for was, row in changed:
        if not was or not row:
            return None
        at = data.find(was)
        if at < 0 or data.find(was, at + 1) >= 0:
            return None
        data = b"".join((data[:at], row, data[at + len(was):]))
    return data
SHARDS_KEY = "shards_sha256"  # and of the sharded search index's index


def _stage_shards(tmp: Path, out: Path, kept: Sequence[SkillOutcome], rows: Sequence[bytes],
                  stored: StoredManifest | None, published: str) -> tuple[list[str], str]:
    """Stage the sharded search index; return its units and the digest of its index. When the same skills are
    published as last time, only the files holding a changed row are made again, from the ones the output holds
    (``update_search_files``, checked against the manifest's record of the shards' index); else every file is
    made from the rows."""
    updated = None
    if stored is not None and stored.meta.get(PUBLISHED_KEY) == published:
        fresh = [o for o in kept if o.fresh]
        before = stored.rows("search", [o.name for o in fresh])
        manifest = read_or_none(out / SHARDS_INDEX_PATH)
        if (all(o.name in before for o in fresh) and manifest is not None
                and sha256_hex(manifest) == stored.meta.get(SHARDS_KEY)):
            changes = {o.name: (json.loads(before[o.name]), json.loads(row)) for o in fresh
                       if (row := o.row("search")) is not None and row != before[o.name]}
            shards = manifest
            updated = update_search_files(
                [o.name for o in kept], lambda number: json.loads(rows[number]), changes,
                lambda rel: shards if rel == SHARDS_INDEX_PATH else (out / rel).read_bytes())
    if updated is None:
        files = search_files([SearchRow(*json.loads(row)) for row in rows])
        return (stage_content_named(tmp, out, files, SHARDS_ROOT, SHARDS_INDEX_PATH, whole=stored is None),
                sha256_hex(files[SHARDS_INDEX_PATH]))
    made, gone = updated
    for rel, data in made.items():
        stage_file(tmp, rel, data)
    return [*made, *gone], sha256_hex(made[SHARDS_INDEX_PATH])





def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None

