"""The registry's search: one ranking, used by the website (search.js) and the CLI alike.

The index holds names, descriptions, categories, tags and body headings, never whole bodies. Scores are
integers so the Python and JavaScript rankings agree exactly; tests/search_vectors.json pins both.

It is published twice. ``api/v1/search-index.json`` is the whole index in one file, which clients released
before the sharded index read (kept for them until the date the README gives). ``api/v1/search/`` is the same
index cut so that a query fetches only what it needs (``builder.publish.search_shards`` writes it,
``builder.client.search`` reads it; this module keeps the format both follow):
a small manifest, then per query token one file of precomputed postings, then the rows of the hits shown.
Each file is named by the first 12 hex digits of its SHA-256; the document naming it (the manifest, a prefix file
of two characters, the facet index) also gives its full SHA-256, which the client checks its bytes against.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .model import Skill

SEARCH_INDEX_PATH = "api/v1/search-index.json"
SEARCH_VERSION = 1
_TOKEN = re.compile(r"[^a-z0-9]+")
_ROW_SEPARATOR = "\x00"
# Every byte but a-z, 0-9 and the row separator becomes a space: tokens() for a whole column at once.
_KEEP = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789\x00")
_TO_SPACES = bytes(b if b in _KEEP else 0x20 for b in range(256))


def normalise_column(values: list[str]) -> list[str]:
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
    Results equal scoring every row one by one (tests/core/test_search.py keeps that definition), in
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
            for row, text in enumerate(normalise_column(values)):
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
        if not levels and typo_budget(q):
            levels = self._typo_levels(q)
        best: dict[int, int] = {}
        for points, rows in sorted(levels, key=lambda level: -level[0]):
            for row in rows:
                best.setdefault(row, points)
        return best

    def _typo_levels(self, q: str) -> list[tuple[int, list[int]]]:
        """(points, rows) of the tokens a few edits from ``q`` that share its first ``TERM_KEY`` characters."""
        budget, key, levels = typo_budget(q), q[:TERM_KEY], []
        for field, name in enumerate(FIELDS):
            postings, vocabulary = self.postings[name], self.vocabulary[name]
            first = bisect.bisect_left(vocabulary, key)
            last = bisect.bisect_left(vocabulary, key + "\x7f", first)
            for token in vocabulary[first:last]:
                distance = edits(q, token, budget)
                if distance <= budget:
                    levels.append((typo_points(field, distance), postings[token]))
        return levels

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


# ------------------------------------------------------------------------------------- the sharded index's format

SHARDS_ROOT = "api/v1/search"
SHARDS_INDEX_PATH = f"{SHARDS_ROOT}/index.json"
SHARDS_VERSION = 3
# Version 2 named every file by the 12 hex digits in its name alone; version 3 adds each file's full sha256.
SHARDS_VERSIONS = (2, SHARDS_VERSION)
ROWS_PER_FILE = 64
TERM_KEY = 3  # tokens this long or longer are kept in the term file of their first three characters
HASH_CHARS = 12
FIELDS = list(WEIGHTS)
WHOLE_POINTS = [WEIGHTS[f][0] for f in FIELDS]
PREFIX_POINTS = [WEIGHTS[f][1] for f in FIELDS]
# A token's points in a row depend only on the best field holding it because both weight columns fall (or stay)
# field by field; the sharded postings keep that one field. A change of WEIGHTS that breaks it fails here.
assert all(a >= b for a, b in zip(WHOLE_POINTS, WHOLE_POINTS[1:]))
assert all(a >= b for a, b in zip(PREFIX_POINTS, PREFIX_POINTS[1:]))


def rows_of_gaps(gaps: Sequence[Any]) -> list[int]:
    """Row numbers from the first one and the gaps between neighbours, as the shards store them."""
    if not set(map(type, gaps)) <= _INT:  # one pass in C: a one-letter token's postings run to 60,000 gaps
        raise ValueError("a row gap is not an integer")
    return list(itertools.accumulate(gaps))


_INT = {int}


def best_points(levels: Iterable[tuple[int, Iterable[int]]]) -> dict[int, int]:
    """Row -> the most points any level gives it (lower levels first, so higher ones overwrite them)."""
    best: dict[int, int] = {}
    for points, rows in sorted(levels, key=lambda level: level[0]):
        best.update(zip(rows, itertools.repeat(points)))
    return best


def term_path(key: str, digest: str) -> str:
    return f"{SHARDS_ROOT}/terms/{key}.{digest}.json"


def prefix_path(key: str, digest: str) -> str:
    return f"{SHARDS_ROOT}/prefix/{key}.{digest}.json"


def rows_path(digest: str) -> str:
    return f"{SHARDS_ROOT}/rows/{digest}.json"


def facets_path(digest: str) -> str:
    return f"{SHARDS_ROOT}/facets/{digest}.json"


# ------------------------------------------------------------------------------------------- typo tolerance

# A query token that no indexed token equals or starts with is matched instead to the indexed tokens sharing its
# first TERM_KEY characters that are at most typo_budget() edits away, for typo_points() (a prefix match's points
# or fewer). A token that matches as typed is never corrected, so no correction outranks what was typed.
TYPO_SHORTEST = 4  # shorter tokens are too short to tell a typo from another word
TYPO_LONGEST = 32  # longer tokens are not words anyone types: no correction, and no quadratic work


def typo_budget(q: str) -> int:
    """How many edits may turn the query token ``q`` into an indexed token: one up to 7 characters, two beyond."""
    if not TYPO_SHORTEST <= len(q) <= TYPO_LONGEST:
        return 0
    return 1 if len(q) <= 7 else 2


def edits(a: str, b: str, budget: int) -> int:
    """The edits (insert, delete or change a character, or swap two neighbours) between ``a`` and ``b``: their
    optimal string alignment distance, or ``budget + 1`` as soon as it is known to be more than ``budget``."""
    if abs(len(a) - len(b)) > budget:
        return budget + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, before[j - 2] + 1)
            current[j] = best
        if min(current) > budget:  # a row's least distance never falls in the rows after it
            return budget + 1
        before, previous = previous, current
    return min(previous[len(b)], budget + 1)


def typo_points(field: int, distance: int) -> int:
    """Points for a token matched ``distance`` edits away in the field ``FIELDS[field]``: the field's prefix
    points for one edit, half of them (at least 1) for two; they fall field by field as the weights do."""
    return max(1, PREFIX_POINTS[field] // distance)
