"""Published JSON documents, parsed only once their size and shape are known to be those of a real registry.

``json.loads`` builds every value before anyone can look at it: 64 MiB of ``{}`` costs gigabytes, 15 MiB of short
strings or floats some 300 MiB, and a deep enough nesting raises ``RecursionError``. The caps here are checked on
the bytes first, in one pass over them 64 KiB at a time, so the check itself stays small.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from ..core.errors import ClientError
from ..core.model import SLUG
from ..core.search import SEARCH_INDEX_PATH
from ..core.urls import API_ROOT, INDEX_PATH, SKILLS_MANIFEST_ROOT, STATE_PATH, WELL_KNOWN_V2

# Caps on a JSON document, checked on its bytes before any Python object is built. The indexes list every
# skill: a 60,000-skill registry publishes about 45 MB (750 bytes a skill, 1.5 KB at most), so 128 MiB leaves
# room; one skill's documents (detail, versions) stay far below 16 MiB. Such an index holds about three
# JSON containers (objects, arrays) per skill and nests 4 deep.
MAX_INDEX_BYTES = 128 * 1024 * 1024
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
MAX_HEAD_BYTES = 64 * 1024  # state.json and a skill's head.json: a few hundred bytes each
MAX_JSON_CONTAINERS = 2_000_000
MAX_JSON_DEPTH = 64
# Every value costs memory once parsed, scalars too: 30 to 90 bytes each (a float 32, a short string 60, one with
# a character past Latin-1 90), however few bytes it takes in the document. So a document may hold at most so many
# values (object keys included). A document that lists every skill holds about 22 a skill (index.json of a
# 3,000-skill real-shaped registry: 66,171, so 1.3 million at 58,000 skills; 1.8 million with 10 tags on every
# skill) and a page of the skill manifest about 41 (62,261 for 1,500 skills); 4 million leave room and cost at
# most some 360 MiB. Any other document (one skill's, a search shard, the signed metadata, a lock) holds far fewer:
# 1 million cost at most some 90 MiB.
MAX_INDEX_VALUES = 4_000_000
MAX_DOCUMENT_VALUES = 1_000_000

# The forms of the names and digests that published documents give.
NAME = SLUG  # a skill name's form
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")

_KEEP = b'"[]{},:'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
_CHUNK = 64 * 1024  # bytes scanned at a time: the scan holds some 100 bytes per quote of one chunk (bytes.join)
_BACKSLASH = ord("\\")


def json_shape_problem(data: bytes, *, max_values: int = MAX_DOCUMENT_VALUES,
                       max_containers: int = MAX_JSON_CONTAINERS, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """Why ``data`` must not be handed to ``json.loads``: too many values (scalars and keys included), objects
    and arrays, or nested too deep.

    64 KiB at a time (never ending inside an escape), a few linear passes in C: escaped backslashes and quotes
    go first (left to right, as a JSON parser pairs them), then everything but quotes, brackets, commas and colons,
    then what lies between quotes (whether a chunk starts inside a string is carried over). What is left is the
    document's structure: every value or key but the first follows one of ``[ { , :``, so they are counted (an
    empty object or array counts one too many), and the nesting of the brackets is followed.
    """
    values, containers, depth, deepest = 1, 0, 0, 0
    inside = False
    start = 0
    while start < len(data):
        end = min(start + _CHUNK, len(data))
        while end < len(data) and data[end - 1] == _BACKSLASH:
            end += 1
        chunk = data[start:end]
        start = end
        if b"\\" in chunk:
            chunk = chunk.replace(b"\\\\", b"").replace(b'\\"', b"")
        pieces = chunk.translate(None, _DROP).split(b'"')
        structure = b"".join(pieces[1::2] if inside else pieces[::2])
        inside ^= len(pieces) % 2 == 0
        del pieces
        opened = structure.count(b"[") + structure.count(b"{")
        closed = structure.count(b"]") + structure.count(b"}")
        values += len(structure) - closed
        containers += opened
        if containers > max_containers:
            return f"it holds more than {max_containers:,} JSON objects and arrays"
        if values > max_values:
            return f"it holds more than {max_values:,} JSON values (strings, numbers, keys, objects and arrays)"
        if opened:
            brackets = structure.translate(None, b",:")
            deepest = max(deepest, max(itertools.accumulate(map(_STEP.__getitem__, brackets), initial=depth)))
        depth += opened - closed
    if deepest > max_depth:  # followed to the end (the caps above bound how far), so the message says how deep
        return f"it nests JSON objects and arrays {deepest:,} deep; the limit is {max_depth}"
    return None


def parse_json(data: bytes, where: str, max_values: int = MAX_DOCUMENT_VALUES) -> Any:
    """``data`` as JSON, refusing a document whose shape would cost more than any real one before parsing it.
    ``max_values``: the most values a real document of its kind holds, with room (``value_limit``)."""
    problem = json_shape_problem(data, max_values=max_values)
    if problem:
        raise ClientError(f"{where}: {problem}; refusing it")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ClientError(f"{where} is not valid JSON ({exc})") from None


def lists_every_skill(path: str) -> bool:
    """Whether the document at ``path`` lists every skill (or, for a shard of the skill manifest, 1,500 of them)."""
    return path in (INDEX_PATH, SEARCH_INDEX_PATH, f"{WELL_KNOWN_V2}/index.json") \
        or path.startswith(f"{SKILLS_MANIFEST_ROOT}/")


def document_limit(path: str) -> int:
    """The most bytes a document at ``path`` may have: the indexes list every skill, the rest one skill each;
    the update check's documents (state.json, head.json) hold a few fields."""
    if path == STATE_PATH or (path.startswith(f"{API_ROOT}/skills/") and path.endswith("/head.json")):
        return MAX_HEAD_BYTES
    return MAX_INDEX_BYTES if path in (INDEX_PATH, SEARCH_INDEX_PATH) else MAX_DOCUMENT_BYTES


def value_limit(path: str) -> int:
    """The most JSON values a document at ``path`` may hold (``MAX_INDEX_VALUES``, ``MAX_DOCUMENT_VALUES``)."""
    return MAX_INDEX_VALUES if lists_every_skill(path) else MAX_DOCUMENT_VALUES
