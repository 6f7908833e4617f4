"""sizes: bytes per skill of the two documents every client and the website download whole, raw and gzipped.

Read from the API outputs the build measurement made in this run (built here only when it did not run).
"""

from __future__ import annotations

import gzip

from builder.core.search import SEARCH_INDEX_PATH
from builder.core.urls import INDEX_PATH

from .build import FULL_SIZES, QUICK_SIZES, api_output
from .harness import BenchContext, Row, Target


def sizes_bench(ctx: BenchContext) -> list[Row]:
    documents = [
        (INDEX_PATH, Target("<", 200),
         "the slim index: name, description, category, tags, version, digest, dates, file count and size."),
        (SEARCH_INDEX_PATH, Target("<", 150),
         "what the website's search and `skillreg search` load: names, descriptions, categories, tags, "
         "headings."),
    ]
    rows: list[Row] = []
    sizes = QUICK_SIZES if ctx.quick else FULL_SIZES
    for path, target, what in documents:
        for n in sizes:
            data = (api_output(ctx, n) / path).read_bytes()
            packed = gzip.compress(data, compresslevel=9, mtime=0)
            rows.append(Row("sizes", f"{path} raw", n, "B/skill", (len(data) / n,), what))
            rows.append(Row("sizes", f"{path} gzipped", n, "B/skill", (len(packed) / n,), "gzip level 9.",
                            target if n in FULL_SIZES else None))
    return rows
