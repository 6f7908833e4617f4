"""The registry's search: one compact index, one ranking, used by the website (search.js) and the CLI alike.

The index holds names, descriptions, categories, tags and body headings, never whole bodies. Scores are
integers so the Python and JavaScript rankings agree exactly; tests/search_vectors.json pins both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .model import Skill

SEARCH_INDEX_PATH = "api/v1/search-index.json"
SEARCH_VERSION = 1
_TOKEN = re.compile(r"[^a-z0-9]+")
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


def search_entry(skill: Skill) -> list[Any]:
    """One row of the index: [name, description, category, tags, headings]."""
    return [skill.name, skill.description, skill.category or "", list(skill.tags),
            " · ".join(dict.fromkeys(headings(skill.body)))]


def search_index(rows: Iterable[list[Any]]) -> dict[str, Any]:
    return {"version": SEARCH_VERSION, "fields": ["name", "description", "category", "tags", "headings"],
            "skills": sorted(rows, key=lambda r: r[0])}


@dataclass(frozen=True)
class Hit:
    name: str
    score: int
    row: tuple[Any, ...]


def _field_tokens(row: Sequence[Any]) -> dict[str, list[str]]:
    name, description, category, tags, heads = row
    return {"name": tokens(name), "tags": [t for tag in tags for t in tokens(tag)], "category": tokens(category),
            "description": tokens(description), "headings": tokens(heads)}


def score(row: Sequence[Any], query_tokens: list[str], query_text: str) -> int:
    """0 when some query token matches no field; otherwise the sum over tokens of the best field score."""
    fields = _field_tokens(row)
    total = 0
    for q in query_tokens:
        best = 0
        for field, (whole, prefix) in WEIGHTS.items():
            words = fields[field]
            if q in words:
                best = max(best, whole)
            elif any(w.startswith(q) for w in words):
                best = max(best, prefix)
        if best == 0:
            return 0
        total += best
    if "-".join(query_tokens) == row[0]:
        total += EXACT_NAME_BONUS
    return total


def rank(index: dict[str, Any], query: str, *, category: str | None = None, tag: str | None = None,
         limit: int = 10) -> list[Hit]:
    """Skills matching every query token (and the filters), best first, ties by name."""
    query_tokens = tokens(query)
    hits = []
    for row in index["skills"]:
        if category and row[2] != category:
            continue
        if tag and tag not in row[3]:
            continue
        points = score(row, query_tokens, query) if query_tokens else 1
        if points:
            hits.append(Hit(row[0], points, tuple(row)))
    hits.sort(key=lambda h: (-h.score, h.name))
    return hits[:limit]
