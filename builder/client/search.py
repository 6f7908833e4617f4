"""The sharded search index's reader: queries that fetch only the files they need, side by side on a thread
pool kept for the process, and rank exactly as ``builder.core.search`` does over the whole index.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..core.errors import ClientError
from ..core.search import (
    EXACT_NAME_BONUS,
    FIELDS,
    PREFIX_POINTS,
    SHARDS_INDEX_PATH,
    SHARDS_VERSIONS,
    TERM_KEY,
    WEIGHTS,
    WHOLE_POINTS,
    Hit,
    SearchIndex,
    SearchRow,
    best_points,
    edits,
    facets_path,
    prefix_path,
    rows_of_gaps,
    rows_path,
    term_path,
    tokens,
    typo_budget,
    typo_points,
)

_KEY = re.compile(r"^[a-z0-9]{1,3}$")
_HASH = re.compile(r"^[0-9a-f]{12}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


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


def _typo_levels(q: str, terms: dict[str, Any]) -> list[tuple[int, Any]]:
    """(points, row gaps) of the tokens of a term file a few edits from ``q``, as ``SearchIndex._typo_levels``."""
    budget, levels = typo_budget(q), []
    for token, lists in terms.items():
        distance = edits(q, token, budget)
        if distance <= budget:
            levels += [(typo_points(f, distance), gaps) for f, gaps in enumerate(lists[:len(FIELDS)])]
    return levels


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


class ShardedSearch:
    """Queries over the sharded index, fetching only the files a query needs through ``fetch``, each once per
    instance. Ranks exactly as ``rank`` over the whole index (tests/core/test_search.py).

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
                    weights = WHOLE_POINTS if token == q else PREFIX_POINTS
                    levels += [(weights[f], gaps) for f, gaps in enumerate(lists[:len(FIELDS)])]
            if not levels and typo_budget(q):
                levels = _typo_levels(q, found)
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
                    best = best_points((points, rows_of_gaps(gaps)) for points, gaps in levels)
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
                fresh = set().union(*map(rows_of_gaps, by_points[points])) - seen  # rows whose best this is
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
                    rows = set(rows_of_gaps(self._document(path)["rows"]))
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
            named = set().union(*(rows_of_gaps(gaps) for points, gaps in levels if points == whole_name))
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


def search_with_total(index: ShardedSearch | SearchIndex, query: str, *, category: str | None = None,
                      tag: str | None = None, limit: int = 10) -> tuple[list[Hit], int]:
    """The best ``limit`` hits and how many skills match in all: counted only when the hits fill ``limit``, since
    fewer hits are all there are."""
    hits = index.rank(query, category=category, tag=tag, limit=limit)
    total = index.total(query, category=category, tag=tag) if len(hits) == limit else len(hits)
    return hits, total
