"""The sharded skill manifest (api/v1/skills-manifest.json): every published skill's frontmatter and complete file
list, in pages of ``SHARD_SIZE`` skills, so a client that lists the whole registry with files (the MCP Skills
extension's ``skills/list``) reads one small index and one shard per page instead of one detail document per skill.

A shard's rows are cut from the detail documents the build publishes (this build's for the skills it built, the
output's for the others), so the manifest never says anything a detail document does not. Shards are named by the
digest of their bytes: an unchanged shard keeps its name and is not written again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core.bundle import dumps
from ..core.model import sha256_hex
from ..core.urls import API_VERSION, SKILLS_MANIFEST_PATH, SKILLS_MANIFEST_ROOT, detail_path
from .documents import read_or_none
from .transaction import stage_content_named

SHARD_SIZE = 1500  # skills per shard: 60,000 skills in 40 pages (MCP hosts follow at most 50 pages)


def manifest_row(detail: dict[str, Any]) -> dict[str, Any]:
    """One skill's row: what a listing with files needs of its detail document, and nothing else."""
    return {"name": detail["name"], "digest": detail["digest"], "skill_md": detail["skill_md"],
            "frontmatter": detail["frontmatter"],
            "files": [{"path": f["path"], "sha256": f["sha256"], "size": f["size"]} for f in detail["files"]]}


RECORD_KEY = "skills_manifest_sha256"  # the build record's digest of the index it staged


def shard_documents(rows: Sequence[dict[str, Any]],
                    kept: dict[tuple[str, ...], bytes] | None = None) -> dict[str, bytes]:
    """Every file of the manifest for ``rows`` (sorted by name): the shards and the index naming them. ``kept``:
    the bytes of shards whose rows are unchanged, by their names in order; such a shard is not encoded again."""
    files: dict[str, bytes] = {}
    shards = []
    for start in range(0, len(rows), SHARD_SIZE):
        part = list(rows[start:start + SHARD_SIZE])
        data = (kept or {}).get(tuple(row["name"] for row in part))
        shards.append(_shard(files, part if data is None else None, data, len(part), part[0]["name"],
                             part[-1]["name"]))
    files[SKILLS_MANIFEST_PATH] = _index(len(rows), shards)
    return files


def _shard(files: dict[str, bytes], rows: list[dict[str, Any]] | None, data: bytes | None, count: int,
           first: str, last: str) -> dict[str, Any]:
    """Put one shard in ``files`` (encoded from ``rows`` unless its bytes are ``data``); returns its index entry."""
    if data is None:
        data = dumps({"api_version": API_VERSION, "skills": rows})
    digest = sha256_hex(data)
    path = f"{SKILLS_MANIFEST_ROOT}/{digest[:12]}.json"
    files[path] = data
    return {"path": path, "sha256": digest, "size": len(data), "count": count, "first": first, "last": last}


def _index(count: int, shards: list[dict[str, Any]]) -> bytes:
    return dumps({"api_version": API_VERSION, "count": count, "shard_size": SHARD_SIZE, "shards": shards})


def _previous_shards(out: Path) -> list[tuple[bytes, list[dict[str, Any]]]]:
    """The output's shards, each as its bytes and its rows (empty when it has none or one does not parse)."""
    try:
        index = json.loads((out / SKILLS_MANIFEST_PATH).read_bytes())
        shards = []
        for shard in index["shards"]:
            data = (out / shard["path"]).read_bytes()
            shards.append((data, json.loads(data)["skills"]))
        return shards
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _rows(tmp: Path, out: Path, names: Sequence[str], built: set[str],
          shards: list[tuple[bytes, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    before = {row["name"]: row for _, part in shards for row in part}
    rows = []
    for name in names:
        row = None if name in built else before.get(name)
        if row is None:
            root = tmp if name in built else out
            row = manifest_row(json.loads((root / detail_path(name)).read_bytes()))
        rows.append(row)
    return rows


def _same_names(tmp: Path, out: Path, names: Sequence[str], built: set[str], recorded: str | None) -> \
        dict[str, bytes] | None:
    """The manifest's files when the output's index is the one the last build recorded (``recorded``) and that
    build published the same ``names``: each shard then holds the same skills, so a shard with none of ``built``
    keeps its bytes (checked against its digest, not parsed) and only the others are parsed and made again. None
    when anything differs."""
    data = None if recorded is None else read_or_none(out / SKILLS_MANIFEST_PATH)
    if data is None or sha256_hex(data) != recorded:
        return None
    try:
        index = json.loads(data)
        entries = index["shards"]
        if index["shard_size"] != SHARD_SIZE or index["count"] != len(names) or \
                len(entries) != -(-len(names) // SHARD_SIZE):
            return None
        files: dict[str, bytes] = {}
        shards = []
        for number, entry in enumerate(entries):
            group = names[number * SHARD_SIZE:(number + 1) * SHARD_SIZE]
            if (entry["count"], entry["first"], entry["last"]) != (len(group), group[0], group[-1]):
                return None
            old = (out / entry["path"]).read_bytes()
            if sha256_hex(old) != entry["sha256"]:
                return None
            if built.isdisjoint(group):
                shards.append(_shard(files, None, old, len(group), group[0], group[-1]))
                continue
            rows = _rows(tmp, out, group, built, [(old, json.loads(old)["skills"])])
            shards.append(_shard(files, rows, None, len(group), group[0], group[-1]))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    files[SKILLS_MANIFEST_PATH] = _index(len(names), shards)
    return files


def stage_skills_manifest(tmp: Path, out: Path, names: Iterable[str], built: Iterable[str], *, whole: bool,
                          recorded: str | None = None) -> tuple[list[str], str]:
    """Stage the manifest of the published skills ``names`` into ``tmp``; return the units to commit (the index,
    the shards the output lacks, and each old shard no longer named, to be removed) and the digest of the index
    staged, for the build record. ``built``: the skills whose detail documents this build wrote into ``tmp``;
    ``whole``: a build with no previous output. A shard whose skills are the same and none of them built keeps
    its bytes without being encoded again; when the last build published the same skills as this one and
    recorded the digest of the index it staged (``recorded``), no such shard is parsed either."""
    built = set(built)
    names = sorted(set(names))
    files = None
    if not whole and recorded is not None:
        files = _same_names(tmp, out, names, built, recorded)
    if files is None:
        shards = [] if whole else _previous_shards(out)
        kept = {names_of: data for data, part in shards
                if not built.intersection(names_of := tuple(row["name"] for row in part))}
        files = shard_documents(_rows(tmp, out, names, built, shards), kept)
    return (stage_content_named(tmp, out, files, SKILLS_MANIFEST_ROOT, SKILLS_MANIFEST_PATH, whole=whole),
            sha256_hex(files[SKILLS_MANIFEST_PATH]))
