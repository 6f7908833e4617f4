"""One ranking, two implementations: builder/core/search.py and the site's search.js agree on every shared vector."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import REPO, missing

from builder.client.search import ShardedSearch
from builder.core.search import SHARDS_INDEX_PATH, rank
from builder.publish.search_shards import search_files

VECTORS = json.loads((REPO / "tests" / "search_vectors.json").read_text(encoding="utf-8"))
SEARCH_JS = REPO / "site_templates" / "assets" / "search.js"
IDS = [f"{v['query']!r}" + "".join(f" {k}={v[k]}" for k in ("category", "tag", "limit") if k in v)
       for v in VECTORS["vectors"]]

# Runs search.js over a sharded index written to a folder: one line of [[name, score], ...] and the count per query
# (or the error it threw).
HARNESS = """
const search = require(process.argv[2]);
const fs = require("fs"), path = require("path");
const root = process.argv[3];
const queries = JSON.parse(fs.readFileSync(process.argv[4], "utf8"));
const fetchJson = (p) => Promise.resolve(JSON.parse(fs.readFileSync(path.join(root, p), "utf8")));
search.open(fetchJson).then(async (index) => {
  const out = [];
  for (const v of queries) {
    try {
      const result = await index.rank(v.query, {category: v.category, tag: v.tag, limit: v.limit});
      out.push({hits: result.hits.map((hit) => [hit.name, hit.score]), count: result.count});
    } catch (error) {  // one query's failure is that query's answer, so the tests name the query that broke
      out.push({error: String(error && error.stack || error)});
    }
  }
  process.stdout.write(JSON.stringify(out));
}).catch((error) => { console.error(error); process.exit(1); });
"""


def node_program() -> str:
    """node, which CI installs (.ci/run): there a missing node fails the test rather than skipping the JS half."""
    node = shutil.which("node")
    if node is None:
        missing("node is not installed, and CI must run the JavaScript half of the search parity test",
                "node is not installed; search.js cannot be run outside a browser")
    return node


def write_shards(rows: list, folder: Path) -> Path:
    for rel, data in search_files(rows).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder


def js_rank(rows: list, queries: list[dict], folder: Path) -> list[dict]:
    """search.js's answers to ``queries`` over the sharded index of ``rows``, run under node."""
    node = node_program()
    write_shards(rows, folder / "site")
    (folder / "harness.js").write_text(HARNESS, encoding="utf-8")
    (folder / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    done = subprocess.run([node, str(folder / "harness.js"), str(SEARCH_JS), str(folder / "site"),
                           str(folder / "queries.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _options(vector: dict) -> dict:
    return {k: vector[k] for k in ("category", "tag", "limit") if k in vector}


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=IDS)
def test_python_rank_matches_the_vector(vector: dict) -> None:
    hits = rank(VECTORS["index"], vector["query"], **_options(vector))
    assert [h.name for h in hits] == vector["expected"]


@pytest.fixture(scope="module")
def js_results(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return js_rank(VECTORS["index"]["skills"], [{"query": v["query"], **_options(v)} for v in VECTORS["vectors"]],
                   tmp_path_factory.mktemp("node"))


@pytest.mark.parametrize("i", range(len(VECTORS["vectors"])), ids=IDS)
def test_javascript_rank_matches_python_names_order_and_scores(js_results: list[dict], i: int) -> None:
    vector = VECTORS["vectors"][i]
    python = [[h.name, h.score] for h in rank(VECTORS["index"], vector["query"], **_options(vector))]
    assert "error" not in js_results[i], js_results[i]["error"]
    assert js_results[i]["hits"] == python
    assert [name for name, _ in js_results[i]["hits"]] == vector["expected"]


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=IDS)
def test_sharded_python_rank_matches_the_vector(vector: dict, tmp_path: Path) -> None:
    sharded = _sharded(VECTORS["index"]["skills"])
    assert [h.name for h in sharded.rank(vector["query"], **_options(vector))] == vector["expected"]


def _sharded(rows: list) -> ShardedSearch:
    """The sharded index of ``rows``, read as the client reads it: each file against the full sha256 given it."""
    files = search_files(rows)

    def fetch(path: str, sha256: str | None) -> dict:
        assert sha256 == hashlib.sha256(files[path]).hexdigest(), path
        return json.loads(files[path])

    return ShardedSearch(json.loads(files[SHARDS_INDEX_PATH]), fetch)


def test_vectors_cover_filters_limits_ties_and_no_match() -> None:
    vectors = VECTORS["vectors"]
    assert any("category" in v for v in vectors) and any("tag" in v for v in vectors)
    assert any("limit" in v for v in vectors) and any(not v["expected"] for v in vectors)
    assert any(len(v["expected"]) > 1 for v in vectors)


# Keys every plain JavaScript object inherits: a term, prefix, tag or name spelled so must stay an ordinary word.
PROTOTYPE_KEYS = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]


def test_vectors_cover_object_prototype_keys_as_queries_descriptions_names_and_tags() -> None:
    queries = {v["query"] for v in VECTORS["vectors"]}
    assert set(PROTOTYPE_KEYS) <= queries
    skills = VECTORS["index"]["skills"]
    assert all(any(key in description for _, description, *_ in skills) for key in PROTOTYPE_KEYS)
    assert "constructor" in [name for name, *_ in skills]
    tags = {tag for *_, row_tags, _ in skills for tag in row_tags}
    assert {"constructor", "__proto__"} <= tags
    assert {v.get("tag") for v in VECTORS["vectors"] if v["expected"]} >= {"constructor", "__proto__"}


def test_exact_name_outranks_a_longer_name_with_the_same_word() -> None:
    # `schema` is a whole word of both names; the exact name earns the bonus.
    assert [h.name for h in rank(VECTORS["index"], "schema")][:2] == ["schema", "json-schema-check"]


def _reference_rank(index: dict, query: str, category: str | None = None, tag: str | None = None,
                    limit: int = 10) -> list[tuple[str, int]]:
    """The ranking's definition, row by row: what the prepared index must reproduce exactly. A query token that no
    word of any row equals or starts with scores, in each row, its best word sharing its first three characters
    and one edit away (two from eight characters on, none past 32), at the field's prefix points over the edits."""
    from builder.core.search import EXACT_NAME_BONUS, WEIGHTS, tokens

    def fields_of(row: list) -> dict[str, list[str]]:
        name, description, cat, tags, heads = row[:5]
        return {"name": tokens(name), "description": tokens(description), "category": tokens(cat),
                "tags": [t for g in tags for t in tokens(g)], "headings": tokens(heads)}

    query_tokens = tokens(query)
    corrected = {q for q in query_tokens if 4 <= len(q) <= 32 and not any(
        w.startswith(q) for row in index["skills"] for words in fields_of(row).values() for w in words)}
    hits = []
    for row in index["skills"]:
        name, _, cat, tags, _ = row[:5]
        if (category and cat != category) or (tag and tag not in tags):
            continue
        fields = fields_of(row)
        total = 0 if query_tokens else 1
        for q in query_tokens:
            if q in corrected:
                budget = 1 if len(q) <= 7 else 2
                best = max([max(1, prefix // distance) for f, (_, prefix) in WEIGHTS.items() for w in fields[f]
                            if w[:3] == q[:3] and 1 <= (distance := _edit_distance(q, w)) <= budget], default=0)
            else:
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


def _edit_distance(a: str, b: str) -> int:
    """Insertions, deletions, changes and swaps of neighbours from ``a`` to ``b``, the whole table filled in."""
    table = [[i + j if not i * j else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
    return table[len(a)][len(b)]


def test_edits_stops_early_but_agrees_with_the_whole_table() -> None:
    from builder.core.search import edits

    rng = random.Random(3)
    for _ in range(3000):
        a = "".join(rng.choice("abcd") for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice("abcd") for _ in range(rng.randint(0, 9)))
        budget = rng.randint(0, 3)
        assert edits(a, b, budget) == min(_edit_distance(a, b), budget + 1), (a, b, budget)


def test_a_typo_is_corrected_only_when_nothing_matches_as_typed() -> None:
    rows = [["docker-tips", "Tips.", "", ["docker"], ""], ["dockr-notes", "Notes on dockr.", "", [], ""],
            ["ducker", "Ducks.", "", [], ""]]
    index = {"version": 1, "fields": [], "skills": rows}
    # Typed words that exist are never corrected, so an exact match is never outranked by a correction.
    assert [h.name for h in rank(index, "dockr")] == ["dockr-notes"]
    assert [h.name for h in rank(index, "docker")] == ["docker-tips"]
    # One edit for up to seven characters; the first three characters are never corrected.
    assert [(h.name, h.score) for h in rank(index, "dokcer")] == []
    assert [(h.name, h.score) for h in rank(index, "dockre")] == [("docker-tips", 6), ("dockr-notes", 6)]
    assert [h.name for h in rank(index, "dockeer")] == ["docker-tips"]
    assert [h.name for h in rank(index, "dockerfle")] == []  # nothing within two edits


def test_a_corrected_query_reads_the_files_the_query_typed_right_reads() -> None:
    """The correction is made from the term file the query reads anyway: no extra request on the site."""
    rows = _random_rows()
    files = search_files(rows)

    def reads(query: str) -> set[str]:
        read: set[str] = set()

        def fetch(path: str, sha256: str | None) -> dict:
            read.add(path)
            return json.loads(files[path])

        assert ShardedSearch(json.loads(files[SHARDS_INDEX_PATH]), fetch).rank(query), query
        return read

    # The typed-right query may read one rows file more: the one that could hold a skill of its exact name.
    for right, typo in [("release", "relase"), ("schema", "schmea"), ("secret", "secrte"), ("review scan", "revew scan")]:
        assert reads(typo) <= reads(right), typo


def _random_rows(count: int = 1500) -> list[list]:
    rng = random.Random(7)
    words = ["csv", "data", "git", "log", "test", "lint", "schema", "json", "review", "secret", "scan", "diff",
             "Ünïcode", "doc", "docs", "docker", "file", "files", "x", "a1", "release", "note", "constructor",
             "__proto__", "toString"]
    rows = []
    for i in range(count):
        name = "-".join(rng.sample(words[:12], 2)).lower() + f"-{i}"
        description = " ".join(rng.choice(words) for _ in range(rng.randint(3, 25))) + rng.choice(["", ".", "\n", "–x"])
        tags = sorted({rng.choice(words).lower() for _ in range(rng.randint(0, 4))})
        rows.append([name, description, rng.choice(["data", "git", "testing", ""]), tags,
                     " · ".join(rng.choice(words) for _ in range(rng.randint(0, 4)))])
    # Exact names of one and two tokens, which also occur inside longer names and descriptions.
    return rows + [["csv", "x", "", [], ""], ["git-diff", "the diff", "git", ["git"], ""]]


def _random_queries(rows: list[list]) -> list[dict]:
    queries = ["", "csv", "cs", "c", "git diff", "doc", "docs", "x", "a1", "ünï", "review-scan", "secret scan json",
               rows[5][0], rows[6][0].replace("-", " "), "nothing-matches", "te", "f", "1", "git", "gi", "dif",
               "zz", "csv csv",
               "constructor", "__proto__", "toString", "hasOwnProperty", "con",
               "dockr", "dcoker", "schmea", "revew", "secrte scan", "relase", "construtcor", "tostrnig",
               "csv revieww", "reléase", "fiels", "dokcer", "docsx", "a1a1", "g" * 40]
    return [{"query": q, **o} for q in queries
            for o in ({}, {"category": "data"}, {"tag": "git"}, {"limit": 50}, {"tag": "no-such-tag"})]


def test_prepared_and_sharded_indexes_rank_exactly_as_the_row_by_row_definition() -> None:
    rows = _random_rows()
    index = {"version": 1, "fields": [], "skills": rows}
    sharded = _sharded(rows)
    for q in _random_queries(rows):
        options = {k: v for k, v in q.items() if k != "query"}
        expected = _reference_rank(index, q["query"], **options)
        assert [(h.name, h.score) for h in rank(index, q["query"], **options)] == expected, q
        assert [(h.name, h.score) for h in sharded.rank(q["query"], **options)] == expected, q


def test_javascript_ranks_the_sharded_index_exactly_as_the_definition(tmp_path: Path) -> None:
    rows = _random_rows()
    index = {"version": 1, "fields": [], "skills": rows}
    queries = _random_queries(rows)
    answers = js_rank(rows, queries, tmp_path)
    for q, answer in zip(queries, answers, strict=True):
        options = {k: v for k, v in q.items() if k != "query"}
        assert "error" not in answer, (q, answer["error"])
        assert answer["hits"] == [list(hit) for hit in _reference_rank(index, q["query"], **options)], q
        assert answer["count"] == len(_reference_rank(index, q["query"], **{**options, "limit": 10**6})), q


def test_sharded_files_are_named_by_their_digest_and_built_byte_identically() -> None:
    import hashlib

    rows = _random_rows(300)
    files = search_files(rows)
    assert files == search_files(list(reversed(rows)))
    for path, data in files.items():
        if path != SHARDS_INDEX_PATH:
            assert hashlib.sha256(data).hexdigest()[:12] in path.rpartition("/")[2], path


def test_every_sharded_file_has_its_full_sha256_in_the_document_naming_it() -> None:
    """The manifest gives the full sha256 of the rows, prefix and facet index files it names; a prefix file of two
    characters gives those of its term files, the facet index those of each category's and tag's rows file. Each
    matches the file's bytes and starts with the digits its name carries, and no file is left out."""
    files = search_files(_random_rows(300))
    manifest = json.loads(files[SHARDS_INDEX_PATH])
    root = "api/v1/search"
    full = manifest["sha256"]
    given = {f"{root}/rows/{digits}.json": sha256 for (_, digits), sha256 in zip(manifest["rows"], full["rows"],
                                                                                   strict=True)}
    given |= {f"{root}/prefix/{key}.{digits}.json": full["prefixes"][key] for key, digits in manifest["prefixes"].items()}
    given[f"{root}/facets/{manifest['facets']}.json"] = full["facets"]
    assert full["prefixes"].keys() == manifest["prefixes"].keys()
    for key, digits in manifest["prefixes"].items():
        document = json.loads(files[f"{root}/prefix/{key}.{digits}.json"])
        assert ("sha256" in document) == ("terms" in document) == (len(key) == 2), key
        if len(key) == 2:
            assert document["sha256"].keys() == document["terms"].keys()
            given |= {f"{root}/terms/{child}.{name}.json": document["sha256"][child]
                      for child, name in document["terms"].items()}
    facets = json.loads(files[f"{root}/facets/{manifest['facets']}.json"])
    assert sorted(facets) == ["category", "sha256", "tag"]
    for kind in ("category", "tag"):
        assert facets["sha256"][kind].keys() == facets[kind].keys()
        given |= {f"{root}/facets/{entry[1]}.json": facets["sha256"][kind][value]
                  for value, entry in facets[kind].items()}
    assert sorted(given) == sorted(path for path in files if path != SHARDS_INDEX_PATH)
    for path, sha256 in given.items():
        assert sha256 == hashlib.sha256(files[path]).hexdigest(), path
        assert path.endswith(f"{sha256[:12]}.json"), path


def test_the_best_hits_are_picked_as_a_full_sort_would() -> None:
    """``_top`` finds the cut from the counts of each score: ties across the cut, fewer matches than the limit,
    one score for every row, no limit."""
    import random

    from builder.client.search import _top

    generator = random.Random(17)
    for _ in range(300):
        rows = generator.sample(range(5000), generator.randint(0, 400))
        totals = {row: generator.choice([1, 2, 3, 5, 8, 13, 50]) for row in rows}
        if generator.random() < 0.2:
            totals = dict.fromkeys(rows, 7)
        limit = generator.choice([0, 1, 2, 10, 50, 1000])
        expected = sorted(((points, row) for row, points in totals.items()), key=lambda h: (-h[0], h[1]))[:limit]
        assert _top(totals, limit) == expected, (totals, limit)


def test_an_exact_name_past_the_first_hits_still_ranks_first() -> None:
    """The one-token path reads postings only down to the cut; the exact name may sort after more than a page of
    rows holding the same whole word, or be missing while such rows exist, and a limit may be 0 or 1."""
    rows = [[f"a-git-{i:02}", "tool", "git", ["git"], ""] for i in range(25)]
    rows += [["git", "the tool", "", [], ""], ["gitx", "git", "", [], ""], ["z-gi", "g", "", [], ""]]
    index = {"version": 1, "fields": [], "skills": rows}
    sharded = _sharded(rows)
    without_exact = _sharded([r for r in rows if r[0] != "git"])
    for query in ("git", "gi", "g", "gitx", "tool", "a"):
        for limit in (0, 1, 2, 10, 30):
            expected = _reference_rank(index, query, limit=limit)
            assert [(h.name, h.score) for h in sharded.rank(query, limit=limit)] == expected, (query, limit)
            expected = _reference_rank({"skills": [r for r in rows if r[0] != "git"]}, query, limit=limit)
            assert [(h.name, h.score) for h in without_exact.rank(query, limit=limit)] == expected, (query, limit)
    assert sharded.rank("git", limit=1)[0].name == "git"
