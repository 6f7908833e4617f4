"""The registry's search: one ranking, used by the website (search.js) and the CLI alike.

The index holds names, descriptions, categories, tags and body headings, never whole bodies. Scores are
integers so the Python and JavaScript rankings agree exactly; tests/search_vectors.json pins both.

It is published twice. ``api/v1/search-index.json`` is the whole index in one file, which clients released
before the sharded index read (kept for them until the date the README gives). ``api/v1/search/`` is the same
index cut so that a query fetches only what it needs (``search_files`` writes it, ``ShardedSearch`` reads it):
a small manifest, then per query token one file of precomputed postings, then the rows of the hits shown.
Each file is named by the first 12 hex digits of its SHA-256; the document naming it (the manifest, a prefix file
of two characters, the facet index) also gives its full SHA-256, which the client checks its bytes against.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import operator
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .bundle import dumps
from .errors import ClientError
from .model import Skill

SEARCH_INDEX_PATH = "api/v1/search-index.json"
SEARCH_VERSION = 1
_TOKEN = re.compile(r"[^a-z0-9]+")
_ROW_SEPARATOR = "\x00"
# Every byte but a-z, 0-9 and the row separator becomes a space: tokens() for a whole column at once.
_KEEP = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789\x00")
_TO_SPACES = bytes(b if b in _KEEP else 0x20 for b in range(256))


def _normalise_column(values: list[str]) -> list[str]:
    """Each value lower-cased with everything but ASCII letters and digits turned into spaces, as tokens() splits.

    Non-ASCII characters left after lower() are separators there too, so encoding them as '?' is the same.
    """
    joined = _ROW_SEPARATOR.join(v.replace(_ROW_SEPARATOR, " ") for v in values).lower()
    return joined.encode("ascii", "replace").translate(_TO_SPACES).decode("ascii").split(_ROW_SEPARATOR)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")

# Points for a query token found in a field: (whole-token match, prefix match).
WEIGHTS = {"name": (10, 6), "tags": (5, 3), "category": (4, 2), "description": (2, 1), "headings": (1, 1)}
EXACT_NAME_BONUS = 20


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.split(text.lower()) if t]


def headings(body: str) -> list[str]:
    out, fence = [], False
    for line in body.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        match = None if fence else _HEADING.match(line)
        if match:
            out.append(match.group(1))
    return out


class SearchRow(NamedTuple):
    """One row of the index. Published as a JSON array in this order (the index's ``fields``), which keeps the
    index small; code reads the fields by name."""

    name: str
    description: str
    category: str  # "" when the skill has none
    tags: list[str]
    headings: str  # the body's headings, joined with " · "

    @classmethod
    def of(cls, row: Sequence[Any]) -> SearchRow:
        """A row as read from a published index (which may carry further columns after these)."""
        return cls(*row[:5])


def search_entry(skill: Skill) -> SearchRow:
    return SearchRow(skill.name, skill.description, skill.category or "", list(skill.tags),
                     " · ".join(dict.fromkeys(headings(skill.body))))


def search_index(rows: Iterable[Sequence[Any]]) -> dict[str, Any]:
    return {"version": SEARCH_VERSION, "fields": ["name", "description", "category", "tags", "headings"],
            "skills": sorted(rows, key=lambda r: r[0])}


@dataclass(frozen=True)
class Hit:
    name: str
    score: int
    row: SearchRow


class SearchIndex:
    """The index prepared for queries: per field, a sorted vocabulary and the rows holding each token.

    A whole-token match is one dictionary look-up; a prefix match is a slice of the sorted vocabulary.
    Results equal scoring every row one by one (tests/test_search.py keeps that definition), in
    milliseconds at 50,000 skills.
    """

    def __init__(self, document: dict[str, Any]) -> None:
        self.rows: list[SearchRow] = [SearchRow.of(row) for row in document["skills"]]
        self.postings: dict[str, dict[str, list[int]]] = {}
        self.vocabulary: dict[str, list[str]] = {}
        columns = {"name": [r.name for r in self.rows], "description": [r.description for r in self.rows],
                   "category": [r.category for r in self.rows], "tags": [" ".join(r.tags) for r in self.rows],
                   "headings": [r.headings for r in self.rows]}
        for field, values in columns.items():
            postings: dict[str, list[int]] = defaultdict(list)
            for row, text in enumerate(_normalise_column(values)):
                for token in set(text.split()):
                    postings[token].append(row)
            self.postings[field] = postings
            self.vocabulary[field] = sorted(postings)

    def _token_scores(self, q: str) -> dict[int, int]:
        """Row -> best points for one query token over all fields."""
        levels: list[tuple[int, list[int]]] = []
        for field, (whole, prefix) in WEIGHTS.items():
            postings, vocabulary = self.postings[field], self.vocabulary[field]
            if q in postings:
                levels.append((whole, postings[q]))
            first = bisect.bisect_left(vocabulary, q)
            last = bisect.bisect_left(vocabulary, q + "\x7f", first)
            for token in vocabulary[first:last]:
                if token != q:
                    levels.append((prefix, postings[token]))
        best: dict[int, int] = {}
        for points, rows in sorted(levels, key=lambda level: -level[0]):
            for row in rows:
                best.setdefault(row, points)
        return best

    def _matching(self, query: str, category: str | None, tag: str | None) -> Iterator[tuple[int, int]]:
        """Every matching (points, row), the filters applied, in no order."""
        query_tokens = tokens(query)
        if query_tokens:
            totals: dict[int, int] | None = None
            for q in query_tokens:
                found = self._token_scores(q)
                if totals is None:
                    totals = found
                else:
                    totals = {row: points + found[row] for row, points in totals.items() if row in found}
                if not totals:
                    return iter(())
            assert totals is not None
            exact = "-".join(query_tokens)
            scored = totals
            for row, points in totals.items():
                if self.rows[row].name == exact:
                    scored[row] = points + EXACT_NAME_BONUS
        else:
            scored = dict.fromkeys(range(len(self.rows)), 1)
        rows = self.rows
        return ((points, row) for row, points in scored.items()
                if (not category or rows[row].category == category) and (not tag or tag in rows[row].tags))

    def rank(self, query: str, *, category: str | None = None, tag: str | None = None,
             limit: int = 10) -> list[Hit]:
        rows = self.rows
        best = heapq.nsmallest(limit, self._matching(query, category, tag),
                               key=lambda item: (-item[0], rows[item[1]].name))
        return [Hit(rows[row].name, points, rows[row]) for points, row in best]

    def total(self, query: str, *, category: str | None = None, tag: str | None = None) -> int:
        """How many skills match, however few ``rank`` returns."""
        return sum(1 for _ in self._matching(query, category, tag))


_PREPARED: tuple[dict[str, Any], SearchIndex] | None = None


def rank(index: dict[str, Any], query: str, *, category: str | None = None, tag: str | None = None,
         limit: int = 10) -> list[Hit]:
    """Skills matching every query token (and the filters), best first, ties by name.

    Every query token must match some field: a whole token earns the field's first weight, a token that
    only starts with it the second; a row scores the sum over query tokens of its best field, plus a
    bonus when the query spells the skill's name.
    """
    global _PREPARED
    if _PREPARED is None or _PREPARED[0] is not index:
        _PREPARED = (index, SearchIndex(index))
    return _PREPARED[1].rank(query, category=category, tag=tag, limit=limit)


# --------------------------------------------------------------------------------------- the sharded index

SHARDS_ROOT = "api/v1/search"
SHARDS_INDEX_PATH = f"{SHARDS_ROOT}/index.json"
SHARDS_VERSION = 3
# Version 2 named every file by the 12 hex digits in its name alone; version 3 adds each file's full sha256.
SHARDS_VERSIONS = (2, SHARDS_VERSION)
ROWS_PER_FILE = 64
TERM_KEY = 3  # tokens this long or longer are kept in the term file of their first three characters
HASH_CHARS = 12
_FIELDS = list(WEIGHTS)
_WHOLE = [WEIGHTS[f][0] for f in _FIELDS]
_PREFIX = [WEIGHTS[f][1] for f in _FIELDS]
_KEY = re.compile(r"^[a-z0-9]{1,3}$")
_HASH = re.compile(r"^[0-9a-f]{12}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# A token's points in a row depend only on the best field holding it because both weight columns fall (or stay)
# field by field; the sharded postings keep that one field. A change of WEIGHTS that breaks it fails here.
assert all(a >= b for a, b in zip(_WHOLE, _WHOLE[1:])) and all(a >= b for a, b in zip(_PREFIX, _PREFIX[1:]))


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


def _rows_of(gaps: Sequence[Any]) -> list[int]:
    if not set(map(type, gaps)) <= _INT:  # one pass in C: a one-letter token's postings run to 60,000 gaps
        raise ValueError("a row gap is not an integer")
    return list(itertools.accumulate(gaps))


_INT = {int}


def _top(totals: dict[int, int], limit: int) -> list[tuple[int, int]]:
    """The ``limit`` best (points, row) of ``totals``, most points first, ties by row number (= by name).

    Few distinct scores exist, so the lowest score that makes the cut is found from their counts; the rows
    above it and the tied rows at it are then picked out in passes that run in C, not a Python step per
    match (a one-letter query matches most of the registry).
    """
    if limit <= 0 or not totals:
        return []
    counts = Counter(totals.values())
    threshold, above = 0, 0
    for points in sorted(counts, reverse=True):
        threshold = points
        if above + counts[points] >= limit:
            break
        above += counts[points]
    better = sorted(((totals[row], row) for row in
                     itertools.compress(totals, map(threshold.__lt__, totals.values()))),
                    key=lambda item: (-item[0], item[1]))
    tied = sorted(itertools.compress(totals, map(threshold.__eq__, totals.values())))
    return better + [(threshold, row) for row in tied[:limit - len(better)]]


def _best_of(levels: Iterable[tuple[int, Iterable[int]]]) -> dict[int, int]:
    """Row -> the most points any level gives it (lower levels first, so higher ones overwrite them)."""
    best: dict[int, int] = {}
    for points, rows in sorted(levels, key=lambda level: level[0]):
        best.update(zip(rows, itertools.repeat(points)))
    return best


def _score_lists(best: dict[int, int]) -> list[list[Any]]:
    """Row -> points as [[points, gaps of its rows], ...], most points first."""
    by_points: dict[int, list[int]] = defaultdict(list)
    for row in sorted(best):
        by_points[best[row]].append(row)
    return [[points, _gaps(by_points[points])] for points in sorted(by_points, reverse=True)]


def term_path(key: str, digest: str) -> str:
    return f"{SHARDS_ROOT}/terms/{key}.{digest}.json"


def prefix_path(key: str, digest: str) -> str:
    return f"{SHARDS_ROOT}/prefix/{key}.{digest}.json"


def rows_path(digest: str) -> str:
    return f"{SHARDS_ROOT}/rows/{digest}.json"


def facets_path(digest: str) -> str:
    return f"{SHARDS_ROOT}/facets/{digest}.json"


def search_files(rows: Iterable[Sequence[Any]]) -> dict[str, bytes]:
    """Every file of the sharded index, path -> bytes; names carry their content's digest (cached forever) but
    the manifest's, ``SHARDS_INDEX_PATH``, which is the one file a client revalidates.

    Row numbers are positions in name order, so ties by name are ties by number. For a query token of one or
    two characters the points of every row are precomputed (``prefix/``); a longer token reads the postings of
    every token sharing its first three characters (``terms/``), each row under the best field holding it.
    """
    table = [SearchRow.of(r) for r in sorted(rows, key=lambda r: r[0])]
    columns = [_normalise_column([r.name for r in table]), _normalise_column([" ".join(r.tags) for r in table]),
               _normalise_column([r.category for r in table]), _normalise_column([r.description for r in table]),
               _normalise_column([r.headings for r in table])]
    assert _FIELDS == ["name", "tags", "category", "description", "headings"]
    by_field: list[dict[str, list[int]]] = []
    for column in columns:
        postings: dict[str, list[int]] = defaultdict(list)
        for row, text in enumerate(column):
            for token in set(text.split()):
                postings[token].append(row)
        by_field.append(postings)
    # Each row under the first (best) field that holds the token only.
    terms: dict[str, list[list[int]]] = {}
    for token in sorted(set().union(*by_field)):
        lists: list[list[int]] = []
        earlier: set[int] = set()
        for postings in by_field:
            found = postings.get(token, [])
            lists.append([row for row in found if row not in earlier] if earlier else list(found))
            earlier.update(found)
        terms[token] = lists
    files: dict[str, bytes] = {}

    def put(path_of: Callable[[str], str], document: object) -> str:
        """Keep ``document`` under the name its digest gives; its full sha256."""
        data = dumps(document)
        full = _sha256(data)
        files[path_of(_named(full))] = data
        return full

    def keyed(make: Callable[[str, str], str], key: str) -> Callable[[str], str]:
        return lambda digest: make(key, digest)

    by_key: dict[str, list[str]] = defaultdict(list)
    for token in sorted(terms):
        if len(token) >= TERM_KEY:
            by_key[token[:TERM_KEY]].append(token)
    term_digests: dict[str, dict[str, str]] = defaultdict(dict)
    for key, names in by_key.items():
        shard = {"terms": {t: [_gaps(rs) for rs in terms[t]] for t in names}}
        term_digests[key[:2]][key] = put(keyed(term_path, key), shard)
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
        levels: list[tuple[int, Iterable[int]]] = [(_PREFIX[f], unions[f]) for f in range(len(_FIELDS))]
        if key in terms:
            levels += [(_WHOLE[f], found) for f, found in enumerate(terms[key])]
        children = dict(sorted(term_digests.get(key, {}).items())) if len(key) == TERM_KEY - 1 else None
        prefixes[key] = put(keyed(prefix_path, key), _prefix_document(_score_lists(_best_of(levels)), children))
    facets: dict[str, dict[str, list[int]]] = {"category": defaultdict(list), "tag": defaultdict(list)}
    for row, entry in enumerate(table):
        if entry.category:
            facets["category"][entry.category].append(row)
        for tag in dict.fromkeys(entry.tags):
            facets["tag"][tag].append(row)
    facet_index = {kind: {value: (len(found), put(facets_path, {"rows": _gaps(found)}))
                          for value, found in sorted(values.items())} for kind, values in facets.items()}
    chunks = [(table[start].name, put(rows_path, {"rows": [list(r) for r in table[start:start + ROWS_PER_FILE]]}))
              for start in range(0, len(table), ROWS_PER_FILE)]
    manifest = _manifest(len(table), chunks, prefixes, put(facets_path, _facet_document(facet_index)))
    files[SHARDS_INDEX_PATH] = dumps(manifest)
    return files


_FETCHERS: Any = None  # the process's ThreadPoolExecutor for search files, made on first use


def _fetchers() -> Any:
    """Up to 6 threads fetching search files side by side, kept for the process: starting threads for every
    round of every query cost more than the requests on a busy machine. Six, as browsers open at most six
    connections to a host: a server with a short listen queue (Python's http.server keeps 5) drops the
    connections past it, and the client's next try comes a second later."""
    global _FETCHERS
    if _FETCHERS is None:
        import os
        from concurrent.futures import ThreadPoolExecutor

        _FETCHERS = ThreadPoolExecutor(max_workers=6, thread_name_prefix="skillreg-search")
        os.register_at_fork(after_in_child=_forget_fetchers)  # its threads are not copied into a child
    return _FETCHERS


def _forget_fetchers() -> None:
    global _FETCHERS
    _FETCHERS = None


def _row_tokens(row: SearchRow) -> dict[str, int]:
    """Token -> the first (best) field of ``row`` holding it, as ``search_files`` files it."""
    texts = (row.name, " ".join(row.tags), row.category, row.description, row.headings)
    best: dict[str, int] = {}
    for field, text in enumerate(texts):
        for token in _normalise_column([text])[0].split():
            best.setdefault(token, field)
    return best


def _prefix_points(best: dict[str, int], key: str) -> int:
    """A row's points for the one- or two-character query token ``key`` (0: none), as ``prefix/`` files hold."""
    return max(((_WHOLE if token == key else _PREFIX)[field] for token, field in best.items()
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
    again; each is what ``search_files`` would make (tests/test_search_update.py). None when it cannot be
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


def _update(names: Sequence[str], row_at: Callable[[int], Sequence[Any]],
            changes: dict[str, tuple[Sequence[Any], Sequence[Any]]],
            read: Callable[[str], bytes]) -> tuple[dict[str, bytes], list[str]]:
    manifest = _load(read, SHARDS_INDEX_PATH)
    if manifest.get("version") != SHARDS_VERSION:
        raise _Stale(SHARDS_INDEX_PATH)
    full = manifest["sha256"]
    chunks: list[tuple[str, str]] = [(first, sha256) for (first, _), sha256 in
                                     zip(manifest["rows"], full["rows"], strict=True)]
    prefixes: dict[str, str] = dict(full["prefixes"])
    facets_sha256: str = full["facets"]
    # What this builder would write for these files: the same count, settings, names and digests.
    if (_manifest(len(names), chunks, prefixes, facets_sha256) != manifest
            or [first for first, _ in chunks] != list(names[::ROWS_PER_FILE])):
        raise _Stale(SHARDS_INDEX_PATH)
    files: dict[str, bytes] = {}
    gone: set[str] = set()
    named: set[str] = set()  # paths the new manifest still names through a changed document

    def put(path_of: Callable[[str], str], document: object, old: str | None) -> str:
        """Keep ``document`` unless it is the file of full sha256 ``old``; its full sha256."""
        data = dumps(document)
        sha256 = _sha256(data)
        if sha256 != old:
            files[path_of(_named(sha256))] = data
            if old is not None:
                gone.add(path_of(_named(old)))
        named.add(path_of(_named(sha256)))
        return sha256

    def prefix_document(key: str) -> dict[str, Any]:
        """The published prefix file of ``key`` (or an empty one), checked to be what this builder writes."""
        two = len(key) == TERM_KEY - 1
        if key not in prefixes:
            return _prefix_document([], {} if two else None)
        document: dict[str, Any] = _load(read, prefix_path(key, _named(prefixes[key])), prefixes[key])
        if _prefix_document(document["scores"], dict(document["sha256"]) if two else None) != document:
            raise _Stale(key)
        return document

    position = {name: bisect.bisect_left(names, name) for name in changes}
    rows: dict[int, tuple[dict[str, int], dict[str, int]]] = {}
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
    # Only the documents where a changed row's postings or points differ: the rest keep their bytes. (The old
    # rows are the ones these files were made from: the caller checked the shards' index against its record.)
    touched = {token for before, after in rows.values() for token in (*before, *after)}
    term_keys = sorted(key for key in {token[:TERM_KEY] for token in touched if len(token) >= TERM_KEY}
                       if any(_postings(before, key) != _postings(after, key) for before, after in rows.values()))
    prefix_keys = sorted({key for key in {token[:n] for token in touched
                                          for n in range(1, min(len(token), TERM_KEY - 1) + 1)}
                          if any(_prefix_points(before, key) != _prefix_points(after, key)
                                 for before, after in rows.values())}
                         | {key[:TERM_KEY - 1] for key in term_keys})
    # A term shard's digest is kept by the prefix document of its first two characters (one of prefix_keys).
    documents: dict[str, Any] = {key: prefix_document(key) for key in prefix_keys}

    # terms/: each changed row leaves every token of the shard and comes back under its new best fields.
    for key in term_keys:
        parent = documents[key[:2]]["sha256"]
        old_digest = parent.get(key)
        terms: dict[str, list[list[int]]] = {}
        if old_digest is not None:
            shard = _load(read, term_path(key, _named(old_digest)), old_digest)
            terms = {token: [_rows_of(gaps) for gaps in lists] for token, lists in shard["terms"].items()}
        for number, (_before, after) in rows.items():
            for lists in terms.values():
                for listed in lists:
                    if number in listed:
                        listed.remove(number)
            for token, field in after.items():
                if token.startswith(key) and len(token) >= TERM_KEY:
                    lists = terms.setdefault(token, [[] for _ in _FIELDS])
                    bisect.insort(lists[field], number)
        terms = {token: lists for token, lists in terms.items() if any(lists)}
        if terms:
            parent[key] = put(functools.partial(term_path, key),
                              {"terms": {t: [_gaps(rs) for rs in terms[t]] for t in sorted(terms)}}, old_digest)
        elif old_digest is not None:
            del parent[key]
            gone.add(term_path(key, _named(old_digest)))

    # prefix/: a row's points for a key come from its own tokens.
    for key in prefix_keys:
        document = documents[key]
        best: dict[int, int] = {}
        for points, gaps in document["scores"]:
            best.update(zip(_rows_of(gaps), itertools.repeat(points)))
        for number, (_before, after) in rows.items():
            best.pop(number, None)
            points = _prefix_points(after, key)
            if points:
                best[number] = points
        old_digest = prefixes.get(key)
        if not best:
            if document.get("sha256"):
                raise _Stale(key)
            if old_digest is not None:
                del prefixes[key]
                gone.add(prefix_path(key, _named(old_digest)))
            continue
        children = dict(sorted(document["sha256"].items())) if len(key) == TERM_KEY - 1 else None
        prefixes[key] = put(functools.partial(prefix_path, key), _prefix_document(_score_lists(best), children),
                            old_digest)
    prefixes = dict(sorted(prefixes.items()))

    # facets/: the rows of each category and tag a changed row had or has.
    published = _load(read, facets_path(_named(facets_sha256)), facets_sha256)
    facet_index: dict[str, dict[str, tuple[int, str]]] = {
        kind: {value: (count, published["sha256"][kind][value]) for value, (count, _) in published[kind].items()}
        for kind in ("category", "tag")}
    if _facet_document(facet_index) != published:
        raise _Stale(facets_path(_named(facets_sha256)))

    def holding(kind: str, row: SearchRow) -> list[str]:
        return ([row.category] if row.category else []) if kind == "category" else row.tags

    for kind, value in facet_moves:
        values = facet_index[kind]
        entry = values.get(value)
        members: set[int] = set()
        if entry is not None:
            members = set(_rows_of(_load(read, facets_path(_named(entry[1])), entry[1])["rows"]))
        for number in rows:
            members.discard(number)
            if value in holding(kind, SearchRow.of(row_at(number))):
                members.add(number)
        if members:
            ordered = sorted(members)
            values[value] = (len(ordered), put(facets_path, {"rows": _gaps(ordered)},
                                               entry[1] if entry is not None else None))
        else:
            values.pop(value, None)
            if entry is not None:
                gone.add(facets_path(_named(entry[1])))
        facet_index[kind] = dict(sorted(values.items()))
    facets_sha256 = put(facets_path, _facet_document(facet_index), facets_sha256)

    # rows/: the chunks holding a changed row.
    for chunk in sorted({number // ROWS_PER_FILE for number in rows}):
        start = chunk * ROWS_PER_FILE
        block = [list(SearchRow.of(row_at(n))) for n in range(start, min(start + ROWS_PER_FILE, len(names)))]
        chunks[chunk] = (chunks[chunk][0], put(rows_path, {"rows": block}, chunks[chunk][1]))
    files[SHARDS_INDEX_PATH] = dumps(_manifest(len(names), chunks, prefixes, facets_sha256))
    # A content-addressed file of another facet, chunk or key may share a digest: never remove one still named.
    still = named | {rows_path(_named(sha256)) for _, sha256 in chunks} | {facets_path(_named(facets_sha256))} | {
        facets_path(_named(entry[1])) for values in facet_index.values() for entry in values.values()} | {
        prefix_path(key, _named(sha256)) for key, sha256 in prefixes.items()}
    return files, sorted(gone - still)


class ShardedSearch:
    """Queries over the sharded index, fetching only the files a query needs through ``fetch``, each once per
    instance. Ranks exactly as ``rank`` over the whole index (tests/test_search.py).

    ``fetch(path, sha256)`` returns the file's JSON object, refusing bytes whose SHA-256 is not ``sha256``: from
    a version-3 index the full digest the manifest (or the prefix file or facet index naming the file) gives, from
    a version-2 index None, and then only the 12 hex digits in the file's name can be checked."""

    def __init__(self, manifest: dict[str, Any], fetch: Callable[[str, str | None], dict[str, Any]],
                 where: str = SHARDS_INDEX_PATH) -> None:
        self.where = where
        try:
            self.count = int(manifest["count"])
            self.per_file = int(manifest["rows_per_file"])
            self.chunks = [(str(first), str(digest)) for first, digest in manifest["rows"]]
            self.prefixes = {str(k): str(v) for k, v in manifest["prefixes"].items()}
            self.facets_digest = str(manifest["facets"])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ClientError(f"{where} is not a sharded search index; refusing it") from None
        version = manifest.get("version")
        if (version not in SHARDS_VERSIONS or self.per_file < 1
                or len(self.chunks) != -(-self.count // self.per_file)
                or not all(_HASH.match(d) for _, d in self.chunks) or not _HASH.match(self.facets_digest)
                or not all(_KEY.match(k) and _HASH.match(v) for k, v in self.prefixes.items())):
            raise ClientError(f"{where} is not a sharded search index of version "
                              f"{' or '.join(map(str, SHARDS_VERSIONS))}; refusing it")
        self.version = int(version)
        self._sha256 = self._full_digests(manifest) if self.version >= 3 else {}  # path -> what its bytes hash to
        self._fetch = fetch
        self._documents: dict[str, dict[str, Any]] = {}
        self._scores: dict[str, dict[int, int]] = {}
        self._row_sets: dict[str, set[int]] = {}
        self._rows: dict[int, list[SearchRow]] = {}

    def _full_digests(self, manifest: dict[str, Any]) -> dict[str, str]:
        """Path -> full sha256 of every file a version-3 manifest names, from its ``sha256`` map."""
        full: Any = manifest.get("sha256")
        try:
            rows = [str(sha256) for sha256 in full["rows"]]
            prefixes = {str(key): str(sha256) for key, sha256 in full["prefixes"].items()}
            facets = str(full["facets"])
        except (KeyError, TypeError, AttributeError):
            rows, prefixes, facets = [], {}, ""
        if (len(rows) != len(self.chunks) or prefixes.keys() != self.prefixes.keys()
                or not all(_SHA256.match(sha256) for sha256 in (*rows, *prefixes.values(), facets))):
            raise ClientError(f"{self.where} does not give the full sha256 of every file it names; refusing it")
        return {**{rows_path(digest): sha256 for (_, digest), sha256 in zip(self.chunks, rows)},
                **{prefix_path(key, digest): prefixes[key] for key, digest in self.prefixes.items()},
                facets_path(self.facets_digest): facets}

    def _named_file(self, parent: str, digest: object, sha256: object, path_of: Callable[[str], str]) -> str | None:
        """The path of the file ``parent`` names by ``digest`` (the digits in its name), None when it names none.
        A version-3 index gives beside it the full ``sha256`` the file's bytes must have: without one, or with
        one that another file of the index contradicts, ``parent`` is refused."""
        if not (isinstance(digest, str) and _HASH.match(digest)):
            return None
        path = path_of(digest)
        if self.version >= 3:
            if not (isinstance(sha256, str) and _SHA256.match(sha256)) or self._sha256.get(path, sha256) != sha256:
                raise self._broken(parent)
            self._sha256[path] = sha256
        return path

    def _term_file(self, parent: str, key: str) -> str | None:
        """The term file of the three-character ``key`` as the prefix file ``parent`` names it (None: no token
        starts with ``key``)."""
        document = self._document(parent)
        children, full = document.get("terms"), document.get("sha256")
        if not isinstance(children, dict):
            raise self._broken(parent)
        return self._named_file(parent, children.get(key), full.get(key) if isinstance(full, dict) else None,
                                functools.partial(term_path, key))

    def _facet_file(self, kind: str, value: str) -> str | None:
        """The rows file of one category or tag as the facet index names it (None: no skill has it)."""
        index = self.facets()
        entry = index[kind].get(value)
        if not (isinstance(entry, list) and len(entry) == 2):
            return None
        full = index.get("sha256")
        by_value = full.get(kind) if isinstance(full, dict) else None
        return self._named_file(facets_path(self.facets_digest), entry[1],
                                by_value.get(value) if isinstance(by_value, dict) else None, facets_path)

    def _read(self, path: str) -> dict[str, Any]:
        return self._fetch(path, self._sha256.get(path))

    def _document(self, path: str) -> dict[str, Any]:
        if path not in self._documents:
            self._documents[path] = self._read(path)
        return self._documents[path]

    def _fetch_all(self, paths: Iterable[str]) -> None:
        """Fetch the files not yet held side by side, as the browser does: a query's files in one round trip."""
        missing = [path for path in dict.fromkeys(paths) if path not in self._documents]
        if len(missing) == 1:
            self._document(missing[0])
        elif missing:
            for path, document in zip(missing, _fetchers().map(self._read, missing)):
                self._documents[path] = document

    def _prefetch(self, query_tokens: Sequence[str], filters: Sequence[tuple[str, str]]) -> None:
        """The files a query reads, in two rounds of side-by-side requests: the prefix files of its tokens (and
        the facet index, with a filter), then the term files of the long tokens (and the filters' row files)."""
        wanted = [q if len(q) < TERM_KEY else q[:2] for q in query_tokens if q not in self._scores]
        first = [prefix_path(k, self.prefixes[k]) for k in wanted if k in self.prefixes]
        unread = [(kind, value) for kind, value in filters if f"{kind}\x00{value}" not in self._row_sets]
        if unread:
            first.append(facets_path(self.facets_digest))
        self._fetch_all(first)
        second = []
        for q in query_tokens:
            if len(q) >= TERM_KEY and q not in self._scores and q[:2] in self.prefixes:
                second.append(self._term_file(prefix_path(q[:2], self.prefixes[q[:2]]), q[:TERM_KEY]))
        second += [self._facet_file(kind, value) for kind, value in unread]
        self._fetch_all(path for path in second if path is not None)

    def _broken(self, path: str) -> ClientError:
        root = self.where.removesuffix(SHARDS_INDEX_PATH) if self.where.endswith(SHARDS_INDEX_PATH) else ""
        return ClientError(f"{root}{path} does not hold what {self.where} says; refusing the search index")

    def _levels(self, q: str) -> tuple[str, list[tuple[int, Any]]] | None:
        """(the file read, [(points, row gaps), ...]) of the postings matching one query token, or None: a prefix
        file's score lists (one per score, each row in one), or a term file's field lists of every token that
        starts with ``q`` (a row may be in several; its best points count)."""
        if len(q) < TERM_KEY:
            if q not in self.prefixes:
                return None
            path = prefix_path(q, self.prefixes[q])
            scores: Any = self._document(path).get("scores")
            try:
                return path, [(int(points), gaps) for points, gaps in scores]
            except (TypeError, ValueError):
                raise self._broken(path) from None
        if q[:2] not in self.prefixes:
            return None
        term_file = self._term_file(prefix_path(q[:2], self.prefixes[q[:2]]), q[:TERM_KEY])
        if term_file is None:
            return None
        path = term_file
        found = self._document(path).get("terms")
        if not isinstance(found, dict):
            raise self._broken(path)
        levels: list[tuple[int, Any]] = []
        try:
            for token, lists in found.items():
                if token.startswith(q):
                    weights = _WHOLE if token == q else _PREFIX
                    levels += [(weights[f], gaps) for f, gaps in enumerate(lists[:len(_FIELDS)])]
        except (TypeError, ValueError, AttributeError):
            raise self._broken(path) from None
        return path, levels

    def token_scores(self, q: str) -> dict[int, int]:
        """Row -> best points for one query token, as SearchIndex._token_scores."""
        if q not in self._scores:
            found = self._levels(q)
            best: dict[int, int] = {}
            if found is not None:
                path, levels = found
                try:
                    best = _best_of((points, _rows_of(gaps)) for points, gaps in levels)
                except (TypeError, ValueError):
                    raise self._broken(path) from None
            self._scores[q] = best
        return self._scores[q]

    def _token_top(self, q: str, limit: int) -> list[tuple[int, int]]:
        """``_top(token_scores(q), limit)`` without building the whole map: postings are read from the highest
        score down and only until ``limit`` rows are found (a one-letter token matches most of the registry,
        and its best rows are in its first list)."""
        found = self._levels(q)
        if found is None or limit <= 0:
            return []
        path, levels = found
        by_points: dict[int, list[Any]] = defaultdict(list)
        for points, gaps in levels:
            by_points[points].append(gaps)
        best: list[tuple[int, int]] = []
        seen: set[int] = set()
        try:
            for points in sorted(by_points, reverse=True):
                fresh = set().union(*map(_rows_of, by_points[points])) - seen  # rows whose best this is
                best += [(points, row) for row in sorted(fresh)[:limit - len(best)]]
                if len(best) >= limit:
                    break
                seen |= fresh
        except (TypeError, ValueError):
            raise self._broken(path) from None
        return best

    def facets(self) -> dict[str, dict[str, list[Any]]]:
        """{"category": {slug: [count, digest]}, "tag": {...}}: the values the filters offer."""
        path = facets_path(self.facets_digest)
        document = self._document(path)
        if not all(isinstance(document.get(kind), dict) for kind in ("category", "tag")):
            raise self._broken(path)
        return document

    def _facet_rows(self, kind: str, value: str) -> set[int]:
        key = f"{kind}\x00{value}"
        if key not in self._row_sets:
            path = self._facet_file(kind, value)
            rows: set[int] = set()
            if path is not None:
                try:
                    rows = set(_rows_of(self._document(path)["rows"]))
                except (KeyError, TypeError, ValueError):
                    raise self._broken(path) from None
            self._row_sets[key] = rows
        return self._row_sets[key]

    def _chunk(self, number: int) -> list[SearchRow]:
        if number not in self._rows:
            path = rows_path(self.chunks[number][1])
            try:
                rows = [SearchRow.of(r) for r in self._document(path)["rows"]]
            except (KeyError, TypeError):
                raise self._broken(path) from None
            expected = min(self.per_file, self.count - number * self.per_file)
            if len(rows) != expected or not all(isinstance(r.name, str) for r in rows):
                raise self._broken(path)
            self._rows[number] = rows
        return self._rows[number]

    def row(self, number: int) -> SearchRow:
        return self._chunk(number // self.per_file)[number % self.per_file]

    def row_named(self, name: str) -> int | None:
        """The row number of the skill called ``name``: one rows file, found from the manifest's first names."""
        chunk = bisect.bisect_right([first for first, _ in self.chunks], name) - 1
        if chunk < 0:
            return None
        for offset, row in enumerate(self._chunk(chunk)):
            if row.name == name:
                return chunk * self.per_file + offset
        return None

    def _totals(self, query: str, category: str | None, tag: str | None) -> dict[int, int]:
        """Row -> points of every matching row (the filters applied)."""
        query_tokens = tokens(query)
        self._prefetch(query_tokens, [(kind, value) for kind, value in (("category", category), ("tag", tag))
                                      if value])
        if query_tokens:
            # The sum over tokens of rows holding every one: start from the token with fewest rows.
            maps = sorted((self.token_scores(q) for q in query_tokens), key=len)
            totals = dict(maps[0])
            for found in maps[1:]:
                if not totals:
                    break
                totals = {row: totals[row] + found[row] for row in totals.keys() & found.keys()}
            if not totals:
                return {}
            # Only a row whose name holds every query token as a whole word can be the exact name.
            if WEIGHTS["name"][0] * len(query_tokens) in totals.values():
                exact = self.row_named("-".join(query_tokens))
                if exact is not None and exact in totals:
                    totals[exact] += EXACT_NAME_BONUS
        else:
            totals = dict.fromkeys(range(self.count), 1)
        for kind, value in (("category", category), ("tag", tag)):
            if value:
                allowed = self._facet_rows(kind, value)
                if len(allowed) < len(totals):
                    totals = {row: totals[row] for row in allowed if row in totals}
                else:
                    totals = {row: points for row, points in totals.items() if row in allowed}
        return totals

    def _single_top(self, q: str, limit: int) -> list[tuple[int, int]]:
        """``_top(self._totals(q, None, None), limit)`` for a one-token query with no filter, reading only the
        postings that reach the cut."""
        self._prefetch([q], [])
        found = self._levels(q)
        if found is None or limit <= 0:
            return []
        path, levels = found
        whole_name = WEIGHTS["name"][0]  # the highest weight: a row holding it has no better score
        try:
            named = set().union(*(_rows_of(gaps) for points, gaps in levels if points == whole_name))
        except (TypeError, ValueError):
            raise self._broken(path) from None
        best = self._token_top(q, limit)
        if not named:
            return best
        # Only a row whose name holds the token as a whole word can be the exact name.
        exact = self.row_named(q)
        points = None if exact is None else whole_name if exact in named else self.token_scores(q).get(exact)
        if exact is None or points is None:
            return best
        best = [hit for hit in best if hit[1] != exact] + [(points + EXACT_NAME_BONUS, exact)]
        return sorted(best, key=lambda hit: (-hit[0], hit[1]))[:limit]

    def total(self, query: str, *, category: str | None = None, tag: str | None = None) -> int:
        """How many skills match, however few ``rank`` returns; after ``rank`` it reads no other file. A one-token
        query without a filter counts its prefix file's score lists (each row is in one) or its term file's rows."""
        query_tokens = tokens(query)
        if len(query_tokens) != 1 or category or tag:
            return len(self._totals(query, category, tag))
        q = query_tokens[0]
        if len(q) >= TERM_KEY:
            return len(self.token_scores(q))
        found = self._levels(q)
        if found is None:
            return 0
        path, levels = found
        if not all(isinstance(gaps, list) for _, gaps in levels):
            raise self._broken(path)
        return sum(len(gaps) for _, gaps in levels)

    def matches(self, query: str, *, category: str | None = None, tag: str | None = None) -> list[tuple[int, int]]:
        """Every matching (points, row), in no order; ``rank`` orders them."""
        return [(points, row) for row, points in self._totals(query, category, tag).items()]

    def rank(self, query: str, *, category: str | None = None, tag: str | None = None,
             limit: int = 10) -> list[Hit]:
        """Skills matching every query token (and the filters), best first, ties by name: ``rank``'s contract."""
        query_tokens = tokens(query)
        if len(query_tokens) == 1 and not category and not tag:
            best = self._single_top(query_tokens[0], limit)
        else:
            best = _top(self._totals(query, category, tag), limit)
        self._fetch_all(rows_path(self.chunks[number // self.per_file][1]) for _, number in best)
        hits = []
        for points, number in best:
            row = self.row(number)
            hits.append(Hit(row.name, points, row))
        return hits
