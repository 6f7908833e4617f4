"""The sharded search index's writer: the files ``api/v1/search/`` holds, made whole (``search_files``) or
again only where a changed row lies (``update_search_files``). Only the build writes them; the client's reader
is ``builder.client.search`` and the ranking both follow is ``builder.core.search``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..core.bundle import dumps
from ..core.search import (
    EXACT_NAME_BONUS,
    FIELDS,
    HASH_CHARS,
    PREFIX_POINTS,
    ROWS_PER_FILE,
    SHARDS_INDEX_PATH,
    SHARDS_VERSION,
    TERM_KEY,
    WEIGHTS,
    WHOLE_POINTS,
    SearchRow,
    best_points,
    facets_path,
    normalise_column,
    prefix_path,
    rows_of_gaps,
    rows_path,
    term_path,
)


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _named(sha256: str) -> str:
    """The digits of a full digest that a file's name carries."""
    return sha256[:HASH_CHARS]


def _prefix_document(scores: list[list[Any]], children: dict[str, str] | None) -> dict[str, Any]:
    """A prefix file. One of two characters also names the term files of its three-character keys (``children``:
    key -> full sha256): ``terms`` the digits in their names, as the website reads them, ``sha256`` the full
    digests the client checks them against."""
    document: dict[str, Any] = {"scores": scores}
    if children is not None:
        document["terms"] = {key: _named(full) for key, full in children.items()}
        document["sha256"] = dict(children)
    return document


def _facet_document(values: dict[str, dict[str, tuple[int, str]]]) -> dict[str, Any]:
    """The facet index from kind -> value -> (rows, full sha256 of its rows file): ``[count, digits in the name]``
    per value, as the website reads them, and beside them ``sha256``, the full digests."""
    document: dict[str, Any] = {kind: {value: [count, _named(full)] for value, (count, full) in found.items()}
                                for kind, found in values.items()}
    document["sha256"] = {kind: {value: full for value, (_count, full) in found.items()}
                          for kind, found in values.items()}
    return document


def _manifest(count: int, chunks: list[tuple[str, str]], prefixes: dict[str, str], facets: str) -> dict[str, Any]:
    """The manifest from the first name and full sha256 of each rows file, key -> full sha256 of each prefix file,
    and the facet index's full sha256: the digits in their names where version 2 had them, the full digests in
    ``sha256`` beside them (a parallel map, so that a reader of the names needs no change)."""
    return {"version": SHARDS_VERSION, "count": count, "fields": list(SearchRow._fields),
            "rows_per_file": ROWS_PER_FILE, "rows": [[first, _named(full)] for first, full in chunks],
            "prefixes": {key: _named(full) for key, full in prefixes.items()}, "facets": _named(facets),
            "sha256": {"rows": [full for _first, full in chunks], "prefixes": dict(prefixes), "facets": facets},
            "weights": {f: list(w) for f, w in WEIGHTS.items()}, "exact_name_bonus": EXACT_NAME_BONUS}


def _gaps(rows: list[int]) -> list[int]:
    """Sorted row numbers as the first one and then the gaps between neighbours: small numbers compress well."""
    if len(rows) < 2:  # most postings of a token in a field (none, or one row): no iterators to set up
        return list(rows)
    return list(map(operator.sub, rows, itertools.chain((0,), rows)))


def _score_lists(best: dict[int, int]) -> list[list[Any]]:
    """Row -> points as [[points, gaps of its rows], ...], most points first."""
    by_points: dict[int, list[int]] = defaultdict(list)
    for row in sorted(best):
        by_points[best[row]].append(row)
    return [[points, _gaps(by_points[points])] for points in sorted(by_points, reverse=True)]


def _best_field_postings(table: list[SearchRow]) -> dict[str, list[list[int]]]:
    """Token -> per field (in ``FIELDS`` order) the rows holding it, each row under the first (best) field only."""
    columns = [normalise_column([r.name for r in table]), normalise_column([" ".join(r.tags) for r in table]),
               normalise_column([r.category for r in table]), normalise_column([r.description for r in table]),
               normalise_column([r.headings for r in table])]
    assert FIELDS == ["name", "tags", "category", "description", "headings"]
    by_field: list[dict[str, list[int]]] = []
    for column in columns:
        postings: dict[str, list[int]] = defaultdict(list)
        for row, text in enumerate(column):
            for token in set(text.split()):
                postings[token].append(row)
        by_field.append(postings)
    terms: dict[str, list[list[int]]] = {}
    for token in sorted(set().union(*by_field)):
        lists: list[list[int]] = []
        earlier: set[int] = set()
        for postings in by_field:
            found = postings.get(token, [])
            lists.append([row for row in found if row not in earlier] if earlier else list(found))
            earlier.update(found)
        terms[token] = lists
    return terms


class _Files:
    """The files made so far, path -> bytes, each named by its content's digest."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def put(self, path_of: Callable[[str], str], document: object) -> str:
        """Keep ``document`` under the name its digest gives; its full sha256."""
        data = dumps(document)
        full = _sha256(data)
        self.files[path_of(_named(full))] = data
        return full


def _put_term_files(out: _Files, terms: dict[str, list[list[int]]]) -> dict[str, dict[str, str]]:
    """The ``terms/`` files: two-character key -> three-character key -> full sha256 of its term file."""
    by_key: dict[str, list[str]] = defaultdict(list)
    for token in sorted(terms):
        if len(token) >= TERM_KEY:
            by_key[token[:TERM_KEY]].append(token)
    term_digests: dict[str, dict[str, str]] = defaultdict(dict)
    for key, names in by_key.items():
        shard = {"terms": {t: [_gaps(rs) for rs in terms[t]] for t in names}}
        term_digests[key[:2]][key] = out.put(functools.partial(term_path, key), shard)
    return term_digests


def _put_prefix_files(out: _Files, terms: dict[str, list[list[int]]],
                      term_digests: dict[str, dict[str, str]]) -> dict[str, str]:
    """The ``prefix/`` files: key -> full sha256, each with the points of every row for that key."""
    starting: dict[str, list[str]] = defaultdict(list)
    for token in terms:
        for n in range(1, min(len(token), TERM_KEY - 1) + 1):
            starting[token[:n]].append(token)
    prefixes: dict[str, str] = {}
    for key in sorted(starting):
        unions: list[set[int]] = [set(), set(), set(), set(), set()]
        for token in starting[key]:
            if token != key:
                for field, found in enumerate(terms[token]):
                    unions[field].update(found)
        levels: list[tuple[int, Iterable[int]]] = [(PREFIX_POINTS[f], unions[f]) for f in range(len(FIELDS))]
        if key in terms:
            levels += [(WHOLE_POINTS[f], found) for f, found in enumerate(terms[key])]
        children = dict(sorted(term_digests.get(key, {}).items())) if len(key) == TERM_KEY - 1 else None
        prefixes[key] = out.put(functools.partial(prefix_path, key),
                                _prefix_document(_score_lists(best_points(levels)), children))
    return prefixes


def _put_facet_files(out: _Files, table: list[SearchRow]) -> dict[str, dict[str, tuple[int, str]]]:
    """The rows file of every category and tag: kind -> value -> (rows, full sha256)."""
    facets: dict[str, dict[str, list[int]]] = {"category": defaultdict(list), "tag": defaultdict(list)}
    for row, entry in enumerate(table):
        if entry.category:
            facets["category"][entry.category].append(row)
        for tag in dict.fromkeys(entry.tags):
            facets["tag"][tag].append(row)
    return {kind: {value: (len(found), out.put(facets_path, {"rows": _gaps(found)}))
                   for value, found in sorted(values.items())} for kind, values in facets.items()}


def search_files(rows: Iterable[Sequence[Any]]) -> dict[str, bytes]:
    """Every file of the sharded index, path -> bytes; names carry their content's digest (cached forever) but
    the manifest's, ``SHARDS_INDEX_PATH``, which is the one file a client revalidates.

    Row numbers are positions in name order, so ties by name are ties by number. For a query token of one or
    two characters the points of every row are precomputed (``prefix/``); a longer token reads the postings of
    every token sharing its first three characters (``terms/``), each row under the best field holding it.
    """
    table = [SearchRow.of(r) for r in sorted(rows, key=lambda r: r[0])]
    terms = _best_field_postings(table)
    out = _Files()
    prefixes = _put_prefix_files(out, terms, _put_term_files(out, terms))
    facet_index = _put_facet_files(out, table)
    chunks = [(table[start].name, out.put(rows_path, {"rows": [list(r) for r in table[start:start + ROWS_PER_FILE]]}))
              for start in range(0, len(table), ROWS_PER_FILE)]
    manifest = _manifest(len(table), chunks, prefixes, out.put(facets_path, _facet_document(facet_index)))
    out.files[SHARDS_INDEX_PATH] = dumps(manifest)
    return out.files


def _row_tokens(row: SearchRow) -> dict[str, int]:
    """Token -> the first (best) field of ``row`` holding it, as ``search_files`` files it."""
    texts = (row.name, " ".join(row.tags), row.category, row.description, row.headings)
    best: dict[str, int] = {}
    for field, text in enumerate(texts):
        for token in normalise_column([text])[0].split():
            best.setdefault(token, field)
    return best


def _prefix_points(best: dict[str, int], key: str) -> int:
    """A row's points for the one- or two-character query token ``key`` (0: none), as ``prefix/`` files hold."""
    return max(((WHOLE_POINTS if token == key else PREFIX_POINTS)[field] for token, field in best.items()
                if token.startswith(key)), default=0)


def _postings(best: dict[str, int], key: str) -> set[tuple[str, int]]:
    """A row's entries in the term shard of ``key``: each token filed there, with its best field."""
    return {(token, field) for token, field in best.items() if len(token) >= TERM_KEY and token.startswith(key)}


class _Stale(Exception):
    """The published shards are not the ones the previous rows make: build them whole instead."""


def update_search_files(names: Sequence[str], row_at: Callable[[int], Sequence[Any]],
                        changes: dict[str, tuple[Sequence[Any], Sequence[Any]]],
                        read: Callable[[str], bytes]) -> tuple[dict[str, bytes], list[str]] | None:
    """The sharded index after ``changes`` (name -> (old row, new row)) to the rows of the same skills in the same
    order, from the files the previous build published (``read``: path -> bytes): the files that are new, with
    ``SHARDS_INDEX_PATH`` always among them, and the paths no longer named. Every row's postings, points and
    facets depend on that row only, so only the files holding a changed row's tokens, chunk or facets are made
    again; each is what ``search_files`` would make (tests/publish/test_search_update.py). None when it cannot be
    applied (other names, a missing or altered file): the caller then makes the index whole."""
    try:
        return _update(names, row_at, changes, read)
    except (_Stale, OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _load(read: Callable[[str], bytes], path: str, sha256: str | None = None) -> Any:
    """A published file's JSON, refused (``_Stale``) unless its bytes hash to ``sha256``, the full digest the
    document naming it gives (None only for the manifest, which the caller checked against its record)."""
    data = read(path)
    if sha256 is not None and _sha256(data) != sha256:
        raise _Stale(path)
    import json

    return json.loads(data)


_RowTokens = dict[int, tuple[dict[str, int], dict[str, int]]]  # changed row -> (its tokens before, after)


def _changed_rows(names: Sequence[str], changes: dict[str, tuple[Sequence[Any], Sequence[Any]]]
                  ) -> tuple[_RowTokens, dict[tuple[str, str], None]]:
    """The changed rows' numbers with their best fields per token before and after, and every (kind, value) of
    the facets they had or have."""
    position = {name: bisect.bisect_left(names, name) for name in changes}
    rows: _RowTokens = {}
    facet_moves: dict[tuple[str, str], None] = {}
    for name, (old, new) in changes.items():
        number = position[name]
        if number >= len(names) or names[number] != name or old[0] != name or new[0] != name:
            raise _Stale(name)
        was, now = SearchRow.of(old), SearchRow.of(new)
        rows[number] = (_row_tokens(was), _row_tokens(now))
        for row in (was, now):
            if row.category:
                facet_moves[("category", row.category)] = None
            for tag in row.tags:
                facet_moves[("tag", tag)] = None
    return rows, facet_moves


def _keys_to_redo(rows: _RowTokens) -> tuple[list[str], list[str]]:
    """The term keys and prefix keys whose documents a changed row's postings or points differ in: the rest keep
    their bytes. (The old rows are the ones these files were made from: the caller checked the shards' index
    against its record.) A term shard's digest is kept by the prefix document of its first two characters."""
    touched = {token for before, after in rows.values() for token in (*before, *after)}
    term_keys = sorted(key for key in {token[:TERM_KEY] for token in touched if len(token) >= TERM_KEY}
                       if any(_postings(before, key) != _postings(after, key) for before, after in rows.values()))
    prefix_keys = sorted({key for key in {token[:n] for token in touched
                                          for n in range(1, min(len(token), TERM_KEY - 1) + 1)}
                          if any(_prefix_points(before, key) != _prefix_points(after, key)
                                 for before, after in rows.values())}
                         | {key[:TERM_KEY - 1] for key in term_keys})
    return term_keys, prefix_keys


class _Update:
    """The published shards being brought up to date: what the manifest names, the new files and the old paths
    no longer named."""

    def __init__(self, names: Sequence[str], row_at: Callable[[int], Sequence[Any]],
                 read: Callable[[str], bytes]) -> None:
        manifest = _load(read, SHARDS_INDEX_PATH)
        if manifest.get("version") != SHARDS_VERSION:
            raise _Stale(SHARDS_INDEX_PATH)
        full = manifest["sha256"]
        self.chunks: list[tuple[str, str]] = [(first, sha256) for (first, _), sha256 in
                                              zip(manifest["rows"], full["rows"], strict=True)]
        self.prefixes: dict[str, str] = dict(full["prefixes"])
        self.facets_sha256: str = full["facets"]
        # What this builder would write for these files: the same count, settings, names and digests.
        if (_manifest(len(names), self.chunks, self.prefixes, self.facets_sha256) != manifest
                or [first for first, _ in self.chunks] != list(names[::ROWS_PER_FILE])):
            raise _Stale(SHARDS_INDEX_PATH)
        self.names, self.row_at, self.read = names, row_at, read
        self.files: dict[str, bytes] = {}
        self.gone: set[str] = set()
        self.named: set[str] = set()  # paths the new manifest still names through a changed document

    def put(self, path_of: Callable[[str], str], document: object, old: str | None) -> str:
        """Keep ``document`` unless it is the file of full sha256 ``old``; its full sha256."""
        data = dumps(document)
        sha256 = _sha256(data)
        if sha256 != old:
            self.files[path_of(_named(sha256))] = data
            if old is not None:
                self.gone.add(path_of(_named(old)))
        self.named.add(path_of(_named(sha256)))
        return sha256

    def prefix_document(self, key: str) -> dict[str, Any]:
        """The published prefix file of ``key`` (or an empty one), checked to be what this builder writes."""
        two = len(key) == TERM_KEY - 1
        if key not in self.prefixes:
            return _prefix_document([], {} if two else None)
        document: dict[str, Any] = _load(self.read, prefix_path(key, _named(self.prefixes[key])), self.prefixes[key])
        if _prefix_document(document["scores"], dict(document["sha256"]) if two else None) != document:
            raise _Stale(key)
        return document

    def redo_term_file(self, key: str, parent: dict[str, str], rows: _RowTokens) -> None:
        """terms/: each changed row leaves every token of the shard and comes back under its new best fields;
        ``parent`` is the term digests of the prefix document naming it, updated here."""
        old_digest = parent.get(key)
        terms: dict[str, list[list[int]]] = {}
        if old_digest is not None:
            shard = _load(self.read, term_path(key, _named(old_digest)), old_digest)
            terms = {token: [rows_of_gaps(gaps) for gaps in lists] for token, lists in shard["terms"].items()}
        for number, (_before, after) in rows.items():
            for lists in terms.values():
                for listed in lists:
                    if number in listed:
                        listed.remove(number)
            for token, field in after.items():
                if token.startswith(key) and len(token) >= TERM_KEY:
                    lists = terms.setdefault(token, [[] for _ in FIELDS])
                    bisect.insort(lists[field], number)
        terms = {token: lists for token, lists in terms.items() if any(lists)}
        if terms:
            parent[key] = self.put(functools.partial(term_path, key),
                                   {"terms": {t: [_gaps(rs) for rs in terms[t]] for t in sorted(terms)}}, old_digest)
        elif old_digest is not None:
            del parent[key]
            self.gone.add(term_path(key, _named(old_digest)))

    def redo_prefix_file(self, key: str, document: dict[str, Any], rows: _RowTokens) -> None:
        """prefix/: a row's points for a key come from its own tokens."""
        best: dict[int, int] = {}
        for points, gaps in document["scores"]:
            best.update(zip(rows_of_gaps(gaps), itertools.repeat(points)))
        for number, (_before, after) in rows.items():
            best.pop(number, None)
            points = _prefix_points(after, key)
            if points:
                best[number] = points
        old_digest = self.prefixes.get(key)
        if not best:
            if document.get("sha256"):
                raise _Stale(key)
            if old_digest is not None:
                del self.prefixes[key]
                self.gone.add(prefix_path(key, _named(old_digest)))
            return
        children = dict(sorted(document["sha256"].items())) if len(key) == TERM_KEY - 1 else None
        self.prefixes[key] = self.put(functools.partial(prefix_path, key),
                                      _prefix_document(_score_lists(best), children), old_digest)

    def redo_facets(self, facet_moves: dict[tuple[str, str], None], rows: _RowTokens) -> None:
        """facets/: the rows of each category and tag a changed row had or has, then the facet index."""
        published = _load(self.read, facets_path(_named(self.facets_sha256)), self.facets_sha256)
        facet_index: dict[str, dict[str, tuple[int, str]]] = {
            kind: {value: (count, published["sha256"][kind][value]) for value, (count, _) in published[kind].items()}
            for kind in ("category", "tag")}
        if _facet_document(facet_index) != published:
            raise _Stale(facets_path(_named(self.facets_sha256)))
        for kind, value in facet_moves:
            values = facet_index[kind]
            entry = values.get(value)
            members: set[int] = set()
            if entry is not None:
                members = set(rows_of_gaps(_load(self.read, facets_path(_named(entry[1])), entry[1])["rows"]))
            for number in rows:
                members.discard(number)
                if value in _holding(kind, SearchRow.of(self.row_at(number))):
                    members.add(number)
            if members:
                ordered = sorted(members)
                values[value] = (len(ordered), self.put(facets_path, {"rows": _gaps(ordered)},
                                                        entry[1] if entry is not None else None))
            else:
                values.pop(value, None)
                if entry is not None:
                    self.gone.add(facets_path(_named(entry[1])))
            facet_index[kind] = dict(sorted(values.items()))
        self.facet_index = facet_index
        self.facets_sha256 = self.put(facets_path, _facet_document(facet_index), self.facets_sha256)

    def redo_chunks(self, rows: _RowTokens) -> None:
        """rows/: the chunks holding a changed row."""
        for chunk in sorted({number // ROWS_PER_FILE for number in rows}):
            start = chunk * ROWS_PER_FILE
            block = [list(SearchRow.of(self.row_at(n)))
                     for n in range(start, min(start + ROWS_PER_FILE, len(self.names)))]
            self.chunks[chunk] = (self.chunks[chunk][0], self.put(rows_path, {"rows": block}, self.chunks[chunk][1]))

    def finish(self) -> tuple[dict[str, bytes], list[str]]:
        """The new files with the new manifest, and the paths no longer named."""
        self.files[SHARDS_INDEX_PATH] = dumps(_manifest(len(self.names), self.chunks, self.prefixes,
                                                        self.facets_sha256))
        # A content-addressed file of another facet, chunk or key may share a digest: never remove one still named.
        still = self.named | {rows_path(_named(sha256)) for _, sha256 in self.chunks} | {
            facets_path(_named(self.facets_sha256))} | {
            facets_path(_named(entry[1])) for values in self.facet_index.values() for entry in values.values()} | {
            prefix_path(key, _named(sha256)) for key, sha256 in self.prefixes.items()}
        return self.files, sorted(self.gone - still)


def _holding(kind: str, row: SearchRow) -> list[str]:
    return ([row.category] if row.category else []) if kind == "category" else row.tags


def _update(names: Sequence[str], row_at: Callable[[int], Sequence[Any]],
            changes: dict[str, tuple[Sequence[Any], Sequence[Any]]],
            read: Callable[[str], bytes]) -> tuple[dict[str, bytes], list[str]]:
    update = _Update(names, row_at, read)
    rows, facet_moves = _changed_rows(names, changes)
    term_keys, prefix_keys = _keys_to_redo(rows)
    documents: dict[str, Any] = {key: update.prefix_document(key) for key in prefix_keys}
    for key in term_keys:
        update.redo_term_file(key, documents[key[:2]]["sha256"], rows)
    for key in prefix_keys:
        update.redo_prefix_file(key, documents[key], rows)
    update.prefixes = dict(sorted(update.prefixes.items()))
    update.redo_facets(facet_moves, rows)
    update.redo_chunks(rows)
    return update.finish()
