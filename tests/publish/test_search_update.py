"""The sharded search index made again from the previous build's files after a few rows change is, file for file,
the index made from scratch (``update_search_files`` against ``search_files``)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from builder.core.search import SHARDS_INDEX_PATH
from builder.publish.search_shards import search_files, update_search_files

WORDS = ["csv", "data", "git", "log", "test", "lint", "schema", "json", "review", "secret", "scan", "diff",
         "Ünïcode", "doc", "docs", "docker", "file", "files", "x", "a1", "release", "note", "zebra", "qx", "q"]


def _rows(rng: random.Random, count: int) -> list[list]:
    rows = []
    for i in range(count):
        name = "-".join(rng.sample(WORDS[:12], 2)).lower() + f"-{i:04d}"
        rows.append(_row(rng, name))
    return sorted(rows)


def _row(rng: random.Random, name: str) -> list:
    description = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) + rng.choice(["", ".", " –x"])
    tags = sorted({rng.choice(WORDS).lower() for _ in range(rng.randint(0, 3))})
    return [name, description, rng.choice(["data", "git", "testing", "", "zz-new"]), tags,
            " · ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))]


def _apply(previous: dict[str, bytes], rows: list[list], changed: dict[int, list]) -> dict[str, bytes] | None:
    names = [row[0] for row in rows]
    new_rows = [changed.get(n, row) for n, row in enumerate(rows)]
    result = update_search_files(names, new_rows.__getitem__,
                                 {rows[n][0]: (rows[n], row) for n, row in changed.items()}, previous.__getitem__)
    if result is None:
        return None
    files, gone = result
    assert all(path in previous for path in gone)
    assert SHARDS_INDEX_PATH in files
    kept = {path: data for path, data in previous.items() if path not in gone}
    return {**kept, **files}


@pytest.mark.parametrize("seed", range(40))
def test_an_updated_index_equals_the_index_made_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    rows = _rows(rng, rng.choice([5, 63, 64, 65, 200]))
    files = search_files(rows)
    for _ in range(4):  # a sequence of updates, each from the last one's files
        changed = {n: _row(rng, rows[n][0]) for n in rng.sample(range(len(rows)), rng.randint(1, 3))}
        if rng.random() < 0.3:  # a row that keeps its values: nothing of it moves
            n = rng.randrange(len(rows))
            changed[n] = list(rows[n])
        updated = _apply(files, rows, changed)
        rows = [changed.get(n, row) for n, row in enumerate(rows)]
        scratch = search_files(rows)
        assert updated is not None
        assert sorted(updated) == sorted(scratch)
        assert updated == scratch
        files = updated


@pytest.mark.parametrize("edit", [
    lambda row: [row[0], "zebra crossings qqq qx", *row[2:]],  # description: new tokens, new prefixes
    lambda row: [row[0], row[1], "", [], ""],  # category, tags and headings dropped
    lambda row: [row[0], row[1], "zz-new", ["zebra", "qx"], "Zebra · Qx"],  # a new category and tags
    lambda row: [row[0], "", "", [], ""],  # nothing left but the name
])
def test_single_edits_equal_the_index_made_from_scratch(edit: Callable[[list], list]) -> None:
    rng = random.Random(3)
    rows = _rows(rng, 130)
    for n in (0, 64, 129):
        changed = {n: edit(rows[n])}
        updated = _apply(search_files(rows), rows, changed)
        assert updated == search_files([changed.get(i, row) for i, row in enumerate(rows)])


def test_a_missing_or_altered_file_or_other_names_make_no_update() -> None:
    rng = random.Random(5)
    rows = _rows(rng, 100)
    files = search_files(rows)
    changed = {10: [rows[10][0], "zebra", "", [], ""]}
    names = [row[0] for row in rows]
    changes = {rows[10][0]: (rows[10], changed[10])}
    row_at = [changed.get(n, row) for n, row in enumerate(rows)].__getitem__
    assert update_search_files(names, row_at, changes, files.__getitem__) is not None
    # One altered file (its bytes no longer match its name), one missing, and a manifest counting other names.
    for path in [p for p in files if "/prefix/z" in p or "/facets/" in p][:2]:
        altered = {**files, path: files[path] + b" "}
        assert update_search_files(names, row_at, changes, altered.__getitem__) is None
        missing = {p: d for p, d in files.items() if p != path}
        assert update_search_files(names, row_at, changes, missing.__getitem__) is None
    assert update_search_files(names[:-1], row_at, changes, files.__getitem__) is None
    renamed = {"other": (["other", "x", "", [], ""], ["other", "y", "", [], ""])}
    assert update_search_files(names, row_at, renamed, files.__getitem__) is None


def test_an_index_without_full_digests_is_made_whole_not_updated() -> None:
    """The previous build's index of version 2 (no ``sha256`` maps) or with a full digest that is not its file's
    gives no update: the caller makes the index whole, with every full digest."""
    import json

    from builder.core.bundle import dumps

    rng = random.Random(7)
    rows = _rows(rng, 70)
    files = search_files(rows)
    changed = {3: [rows[3][0], "zebra", "", [], ""]}
    names = [row[0] for row in rows]
    row_at = [changed.get(n, row) for n, row in enumerate(rows)].__getitem__
    changes = {rows[3][0]: (rows[3], changed[3])}
    assert update_search_files(names, row_at, changes, files.__getitem__) is not None
    manifest = json.loads(files[SHARDS_INDEX_PATH])
    older = {key: value for key, value in manifest.items() if key != "sha256"} | {"version": 2}
    wrong = {**manifest, "sha256": {**manifest["sha256"], "facets": "0" * 64}}
    for previous in (older, wrong):
        served = {**files, SHARDS_INDEX_PATH: dumps(previous)}
        assert update_search_files(names, row_at, changes, served.__getitem__) is None
