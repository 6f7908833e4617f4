"""``python -m bench.search_typos [N] [QUERY...]``: what typo tolerance costs the sharded search index.

Writes the index of N generated skills (``corpus.search_rows``, default 60,000) in memory and prints its files
and bytes, then for each query (default: words typed right and with a typo) the files a query reads after the
manifest, their bytes, and the best names: a corrected query should read no more than the query typed right.
Byte and file counts, not times, so a busy machine measures them as well as a quiet one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from builder.client.search import ShardedSearch
from builder.core.bundle import dumps
from builder.core.search import SEARCH_INDEX_PATH, SHARDS_INDEX_PATH, search_index
from builder.publish.search_shards import search_files

from .corpus import search_rows

QUERIES = ["profile", "profilr", "pipeline review", "pipelne reveiw", "deploy", "deplyo"]


def _recording(files: dict[str, bytes], read: list[str]) -> Callable[[str, str | None], dict[str, Any]]:
    """A fetch over the files in memory that notes each path it is asked for in ``read``."""
    def fetch(path: str, sha256: str | None) -> dict[str, Any]:
        read.append(path)
        document: dict[str, Any] = json.loads(files[path])
        return document

    return fetch


def report(n: int, queries: Sequence[str]) -> list[str]:
    rows = search_rows(n)
    files = search_files(rows)
    lines = [f"{n:,} skills: sharded index {len(files):,} files, {sum(map(len, files.values())):,} bytes; "
             f"{SEARCH_INDEX_PATH} {len(dumps(search_index(rows))):,} bytes"]
    for query in queries:
        read: list[str] = []
        hits = ShardedSearch(json.loads(files[SHARDS_INDEX_PATH]), _recording(files, read)).rank(query)
        lines.append(f"  {query!r}: {len(read)} files after the manifest, {sum(len(files[p]) for p in read):,} "
                     f"bytes; best {[h.name for h in hits[:3]]}")
    return lines


def main(argv: Sequence[str]) -> None:
    n = int(argv[0]) if argv else 60_000
    print("\n".join(report(n, list(argv[1:]) or QUERIES)))


if __name__ == "__main__":
    main(sys.argv[1:])
