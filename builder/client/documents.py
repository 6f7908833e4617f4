"""Published JSON documents, parsed only once their size and shape are known to be those of a real registry.

``json.loads`` builds every object before anyone can look at it: 64 MiB of ``{}`` costs gigabytes and a deep
enough nesting raises ``RecursionError``. The caps here are checked on the bytes first.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from ..core.errors import ClientError
from ..core.model import SLUG
from ..core.search import SEARCH_INDEX_PATH
from ..core.urls import API_ROOT, INDEX_PATH, STATE_PATH

# Caps on a JSON document, checked on its bytes before any Python object is built. The indexes list every
# skill: a 60,000-skill registry publishes about 45 MB (750 bytes a skill, 1.5 KB at most), so 128 MiB leaves
# room; one skill's documents (detail, versions) stay far below 16 MiB. Such an index holds about three
# JSON containers (objects, arrays) per skill and nests 4 deep.
MAX_INDEX_BYTES = 128 * 1024 * 1024
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
MAX_HEAD_BYTES = 64 * 1024  # state.json and a skill's head.json: a few hundred bytes each
MAX_JSON_CONTAINERS = 2_000_000
MAX_JSON_DEPTH = 64

# The forms of the names and digests that published documents give.
NAME = SLUG  # a skill name's form
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")

_KEEP = b'"[]{}'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def json_shape_problem(data: bytes, *, max_containers: int = MAX_JSON_CONTAINERS,
                       max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """Why ``data`` must not be handed to ``json.loads`` (too many objects and arrays, or nested too deep).

    A few linear passes in C over the bytes: escaped backslashes and quotes go first (left to right, as a
    JSON parser pairs them), then everything but quotes and brackets, then what lies between quotes; what is
    left is the document's structure, whose nesting is counted.
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    reduced = data.translate(None, _DROP)
    structure = b"".join(reduced.split(b'"')[::2])
    if len(structure) > 2 * max_containers:
        return f"it holds more than {max_containers:,} JSON objects and arrays"
    depth = max(itertools.accumulate(_STEP[b] for b in structure), default=0)
    if depth > max_depth:
        return f"it nests JSON objects and arrays {depth:,} deep; the limit is {max_depth}"
    return None


def parse_json(data: bytes, where: str) -> Any:
    """``data`` as JSON, refusing a document whose shape would cost more than any real one before parsing it."""
    problem = json_shape_problem(data)
    if problem:
        raise ClientError(f"{where}: {problem}; refusing it")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ClientError(f"{where} is not valid JSON ({exc})") from None


def document_limit(path: str) -> int:
    """The most bytes a document at ``path`` may have: the indexes list every skill, the rest one skill each;
    the update check's documents (state.json, head.json) hold a few fields."""
    if path == STATE_PATH or (path.startswith(f"{API_ROOT}/skills/") and path.endswith("/head.json")):
        return MAX_HEAD_BYTES
    return MAX_INDEX_BYTES if path in (INDEX_PATH, SEARCH_INDEX_PATH) else MAX_DOCUMENT_BYTES


