"""One ranking, two implementations: builder/core/search.py and the site's search.js agree on every shared vector."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import REPO

from builder.core.search import rank

VECTORS = json.loads((REPO / "tests" / "search_vectors.json").read_text(encoding="utf-8"))
SEARCH_JS = REPO / "site_templates" / "assets" / "search.js"
IDS = [f"{v['query']!r}" + "".join(f" {k}={v[k]}" for k in ("category", "tag", "limit") if k in v)
       for v in VECTORS["vectors"]]

HARNESS = """
const search = require(process.argv[2]);
const data = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
const out = data.vectors.map((v) => search.rank(data.index, v.query,
  {category: v.category, tag: v.tag, limit: v.limit}).map((hit) => [hit.name, hit.score]));
process.stdout.write(JSON.stringify(out));
"""


def _options(vector: dict) -> dict:
    return {k: vector[k] for k in ("category", "tag", "limit") if k in vector}


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=IDS)
def test_python_rank_matches_the_vector(vector: dict) -> None:
    hits = rank(VECTORS["index"], vector["query"], **_options(vector))
    assert [h.name for h in hits] == vector["expected"]


@pytest.fixture(scope="module")
def js_results(tmp_path_factory: pytest.TempPathFactory) -> list[list[list]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; search.js cannot be run outside a browser")
    harness = tmp_path_factory.mktemp("node") / "harness.js"
    harness.write_text(HARNESS, encoding="utf-8")
    done = subprocess.run([node, str(harness), str(SEARCH_JS), str(REPO / "tests" / "search_vectors.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("i", range(len(VECTORS["vectors"])), ids=IDS)
def test_javascript_rank_matches_python_names_order_and_scores(js_results: list[list[list]], i: int) -> None:
    vector = VECTORS["vectors"][i]
    python = [[h.name, h.score] for h in rank(VECTORS["index"], vector["query"], **_options(vector))]
    assert js_results[i] == python
    assert [name for name, _ in js_results[i]] == vector["expected"]


def test_vectors_cover_filters_limits_ties_and_no_match() -> None:
    vectors = VECTORS["vectors"]
    assert any("category" in v for v in vectors) and any("tag" in v for v in vectors)
    assert any("limit" in v for v in vectors) and any(not v["expected"] for v in vectors)
    assert any(len(v["expected"]) > 1 for v in vectors)


def test_exact_name_outranks_a_longer_name_with_the_same_word() -> None:
    # `schema` is a whole word of both names; the exact name earns the bonus.
    assert [h.name for h in rank(VECTORS["index"], "schema")][:2] == ["schema", "json-schema-check"]


def _reference_rank(index: dict, query: str, category: str | None = None, tag: str | None = None,
                    limit: int = 10) -> list[tuple[str, int]]:
    """The ranking's definition, row by row: what the prepared index must reproduce exactly."""
    from builder.core.search import EXACT_NAME_BONUS, WEIGHTS, tokens

    query_tokens = tokens(query)
    hits = []
    for name, description, cat, tags, heads in index["skills"]:
        if (category and cat != category) or (tag and tag not in tags):
            continue
        fields = {"name": tokens(name), "description": tokens(description), "category": tokens(cat),
                  "tags": [t for g in tags for t in tokens(g)], "headings": tokens(heads)}
        total = 0 if query_tokens else 1
        for q in query_tokens:
            best = max([whole if q in fields[f] else prefix if any(w.startswith(q) for w in fields[f]) else 0
                        for f, (whole, prefix) in WEIGHTS.items()])
            if not best:
                total = 0
                break
            total += best
        if total and query_tokens and "-".join(query_tokens) == name:
            total += EXACT_NAME_BONUS
        if total:
            hits.append((name, total))
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:limit]


def test_prepared_index_ranks_exactly_as_the_row_by_row_definition() -> None:
    import random

    rng = random.Random(7)
    words = ["csv", "data", "git", "log", "test", "lint", "schema", "json", "review", "secret", "scan", "diff",
             "Ünïcode", "doc", "docs", "docker", "file", "files", "x", "a1", "release", "note"]
    rows = []
    for i in range(1500):
        name = "-".join(rng.sample(words[:12], 2)).lower() + f"-{i}"
        description = " ".join(rng.choice(words) for _ in range(rng.randint(3, 25))) + rng.choice(["", ".", "\n", "–x"])
        tags = sorted({rng.choice(words).lower() for _ in range(rng.randint(0, 4))})
        rows.append([name, description, rng.choice(["data", "git", "testing", ""]), tags,
                     " · ".join(rng.choice(words) for _ in range(rng.randint(0, 4)))])
    index = {"version": 1, "fields": [], "skills": rows}
    queries = ["", "csv", "cs", "c", "git diff", "doc", "docs", "x", "a1", "ünï", "review-scan", "secret scan json",
               rows[5][0], rows[6][0].replace("-", " "), "nothing-matches", "te", "f", "1"]
    for query in queries:
        for options in ({}, {"category": "data"}, {"tag": "git"}, {"limit": 50}):
            assert [(h.name, h.score) for h in rank(index, query, **options)] == \
                _reference_rank(index, query, **options), (query, options)
