"""One ranking, two implementations: builder/search.py and the site's search.js agree on every shared vector."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from builder.search import rank
from conftest import REPO

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
