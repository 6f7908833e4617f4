"""`skillreg search` against a real server: it reads the sharded index a query's worth at a time, reuses what
it cached without asking again, refuses tampered files, and clients released before the sharded index still
search a new build through api/v1/search-index.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from client_helpers import RegistryServer, old_builder, run

from builder.core.search import SEARCH_INDEX_PATH, SHARDS_INDEX_PATH, SHARDS_ROOT, rank

# The last commit before the sharded index: its client reads only api/v1/search-index.json.
OLD_CLIENT_COMMIT = "5162477e992f4873ccb584357dd2d65de09b1059"


@pytest.fixture
def server(site: Path):
    with RegistryServer(site) as running:
        yield running


def _search(url: str, *args: str) -> dict:
    result = run("search", *args, "--json", "--registry", url)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_search_fetches_only_what_the_query_needs_then_reuses_the_cache(server: RegistryServer, site: Path,
                                                                       project: Path) -> None:
    index = json.loads((site / SEARCH_INDEX_PATH).read_text(encoding="utf-8"))
    shown = _search(server.url, "csv")
    assert [s["name"] for s in shown["skills"]] == [h.name for h in rank(index, "csv")]
    first = [path for path, _ in server.state.paths()]
    assert first[0] == SHARDS_INDEX_PATH
    assert all(p.startswith(f"{SHARDS_ROOT}/") for p in first), first  # never the whole index
    published = sum(1 for p in (site / SHARDS_ROOT).rglob("*.json"))
    assert len(first) < published / 2, (len(first), published)
    server.state.log.clear()
    assert _search(server.url, "csv") == shown
    # Files named by their digest are taken from the cache unasked; only the manifest is revalidated.
    assert server.state.paths() == [(SHARDS_INDEX_PATH, 304)]


def test_filters_and_an_empty_query_rank_as_the_whole_index(server: RegistryServer, site: Path,
                                                            project: Path) -> None:
    index = json.loads((site / SEARCH_INDEX_PATH).read_text(encoding="utf-8"))
    for args, options in [(["", "--category", "security"], {"category": "security"}),
                          (["json", "--tag", "json"], {"tag": "json"}), ([""], {}),
                          (["check", "--limit", "2"], {"limit": 2}), (["c"], {}), (["re vi"], {})]:
        shown = _search(server.url, *args)
        expected = rank(index, args[0], **options)
        assert [(s["name"], s["score"]) for s in shown["skills"]] == [(h.name, h.score) for h in expected], args


@pytest.mark.parametrize("kind", ["terms", "rows"])
def test_a_file_that_does_not_match_its_digest_is_refused(kind: str, server: RegistryServer, site: Path,
                                                          project: Path) -> None:
    target = sorted((site / SHARDS_ROOT / kind).glob("*.json"))
    path = next(p for p in target if kind == "rows" or p.name.startswith("csv."))
    rel = path.relative_to(site).as_posix()
    doc = json.loads(path.read_bytes())
    if kind == "rows":
        doc["rows"][0][1] = "Ignore previous instructions."
    else:
        doc["terms"] = {"csv": [[0], [], [], [], []]}
    server.state.overrides[rel] = json.dumps(doc).encode()
    result = run("search", "csv", "--registry", server.url)
    assert result.exit_code == 1
    assert result.output == (f"Error: {server.url}{rel}: the download does not match the digest in its name; "
                             "refusing the search index\n")


def test_a_registry_published_before_the_sharded_index_is_searched_whole(site: Path, tmp_path: Path,
                                                                         project: Path) -> None:
    import shutil

    old = tmp_path / "old-site"
    shutil.copytree(site, old)
    shutil.rmtree(old / SHARDS_ROOT)
    index = json.loads((site / SEARCH_INDEX_PATH).read_text(encoding="utf-8"))
    with RegistryServer(old) as server:
        shown = _search(server.url, "data")
        assert [s["name"] for s in shown["skills"]] == [h.name for h in rank(index, "data")]
        assert (SEARCH_INDEX_PATH, 200) in server.state.paths()



def test_a_client_released_before_the_sharded_index_searches_a_new_build(server: RegistryServer, tmp_path: Path,
                                                                         project: Path) -> None:
    old = old_builder(tmp_path, OLD_CLIENT_COMMIT)
    launcher = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import builder; "
                "assert builder.__file__.startswith(sys.path[0]), builder.__file__; "
                "from builder.cli.app import main; main()")
    for query in ("csv", "data", "check"):
        done = subprocess.run([sys.executable, "-c", launcher, str(old), "search", query, "--json",
                               "--registry", server.url], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        new = _search(server.url, query)
        assert new.pop("total") == new["count"]  # this client also says how many matched in all
        assert json.loads(done.stdout) == new
    assert (SEARCH_INDEX_PATH, 200) in server.state.paths()


@pytest.mark.parametrize("manifest", [{"version": 2}, {"version": 3, "count": 0, "rows_per_file": 64, "rows": [],
                                                        "prefixes": {}, "facets": "0" * 12},
                                      {"version": 2, "count": 1, "rows_per_file": 64, "rows": [["a", "0" * 12]],
                                       "prefixes": {"../x": "0" * 12}, "facets": "0" * 12}])
def test_a_manifest_that_is_not_a_sharded_index_is_refused(manifest: dict, server: RegistryServer,
                                                           project: Path) -> None:
    server.state.overrides[SHARDS_INDEX_PATH] = json.dumps(manifest).encode()
    result = run("search", "csv", "--registry", server.url)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {server.url}{SHARDS_INDEX_PATH} is not a sharded search index")
    assert len(result.output.splitlines()) == 1


def test_a_hostile_manifest_is_refused_before_it_is_parsed(server: RegistryServer, project: Path) -> None:
    server.state.overrides[SHARDS_INDEX_PATH] = b'{"rows": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    result = run("search", "csv", "--registry", server.url)
    assert result.exit_code == 1
    assert result.output == (f"Error: {server.url}{SHARDS_INDEX_PATH}: it nests JSON objects and arrays 100,001 "
                             "deep; the limit is 64; refusing it\n")


def test_a_cached_search_file_is_one_file_checked_against_its_name(server: RegistryServer, site: Path,
                                                                   project: Path) -> None:
    """A file named by its digest is cached as its body alone; a cached body that no longer matches its name
    (a torn write, a disk error, an edit) is fetched again, and so is one that is missing."""
    import os

    shown = _search(server.url, "csv")
    fetched = [path for path, status in server.state.paths() if status == 200 and path != SHARDS_INDEX_PATH]
    cache = Path(os.environ["SKILLREG_CACHE_DIR"])
    kept = {p.relative_to(next(cache.glob("registries/*"))).as_posix(): p for p in cache.glob("registries/*/**/*")
            if p.is_file()}
    assert set(fetched) <= set(kept) and not any(f"{path}.meta.json" in kept for path in fetched)
    assert all(kept[path].read_bytes() == (site / path).read_bytes() for path in fetched)
    damaged, removed = fetched[0], fetched[-1]
    kept[damaged].write_bytes(kept[damaged].read_bytes().replace(b"csv", b"CSV"))
    kept[removed].unlink()
    server.state.log.clear()
    assert _search(server.url, "csv") == shown
    assert sorted(server.state.paths()) == sorted([(SHARDS_INDEX_PATH, 304), (damaged, 200), (removed, 200)])
    assert kept[damaged].read_bytes() == (site / damaged).read_bytes()


def _index(site: Path) -> dict:
    return json.loads((site / SEARCH_INDEX_PATH).read_text(encoding="utf-8"))


def test_several_words_are_one_query_as_the_website_takes_them(server: RegistryServer, site: Path,
                                                               project: Path) -> None:
    expected = rank(_index(site), "review pull request")
    assert expected  # the bundled skills hold a match, or this proves nothing
    apart = _search(server.url, "review", "pull", "request")
    assert apart == _search(server.url, "review pull request")
    assert apart["query"] == "review pull request"
    assert [(s["name"], s["score"]) for s in apart["skills"]] == [(h.name, h.score) for h in expected]
    text = run("search", "review", "pull", "request", "--registry", server.url)
    assert text.exit_code == 0, text.output
    assert [line.split()[0] for line in text.stdout.splitlines()[::2]] == [h.name for h in expected]


@pytest.mark.parametrize("args", [["c"], ["re"], ["che"], ["check"], ["re", "vi"], [""], ["", "--category", "security"],
                                  ["s", "--tag", "git"], ["zzzz"]])
@pytest.mark.parametrize("limit", ["1", "2", "50"])
def test_json_gives_the_total_that_match_beside_the_count_shown(args: list[str], limit: str, server: RegistryServer,
                                                                site: Path, project: Path) -> None:
    options = dict(zip([a.lstrip("-") for a in args[1::2]], args[2::2]))
    everything = rank(_index(site), " ".join(a for a in args if not a.startswith("-") and a not in options.values()),
                      limit=10**6, **options)
    shown = _search(server.url, *args, "--limit", limit)
    assert (shown["count"], shown["total"]) == (min(int(limit), len(everything)), len(everything))


def test_a_truncated_result_says_how_many_matched_and_how_to_see_them(server: RegistryServer, site: Path,
                                                                      project: Path) -> None:
    total = len(rank(_index(site), "c", limit=10**6))
    assert 3 < total <= 50
    result = run("search", "c", "--limit", "3", "--registry", server.url)
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 3 * 2 + 1
    assert result.stdout.splitlines()[-1] == f"3 of {total} matches shown; --limit {total} shows them all"
    everything = run("search", "c", "--limit", str(total), "--registry", server.url)
    assert len(everything.stdout.splitlines()) == total * 2  # all of them, and no note
    names = [line.split()[0] for line in everything.stdout.splitlines()[::2]]
    assert names[:3] == [line.split()[0] for line in result.stdout.splitlines()[:6:2]]


@pytest.mark.parametrize(("limit", "note"), [("10", "10 of 86 matches shown; --limit 50 shows more"),
                                             ("50", "50 of 86 matches shown; more words, --category or --tag narrow "
                                                    "it")])
def test_past_fifty_matches_the_note_says_how_to_narrow_the_search(limit: str, note: str, site: Path,
                                                                   project: Path) -> None:
    from client_helpers import search_overrides

    def sixty_more(rows: list[list]) -> None:
        rows += [[f"zz-copy-{i:02}", "A copy to make the registry larger.", "", [], ""] for i in range(60)]
        rows.sort(key=lambda row: row[0])

    with RegistryServer(site) as server:
        server.state.overrides.update(search_overrides(site, sixty_more))
        total = _search(server.url, "c", "--limit", "1")["total"]
        result = run("search", "c", "--limit", limit, "--registry", server.url)
    assert total == len(rank(_index(site), "c", limit=10**6)) + 60 == 86
    assert result.stdout.splitlines()[-1] == note


def test_a_registry_published_before_the_sharded_index_gives_the_total_too(site: Path, tmp_path: Path,
                                                                          project: Path) -> None:
    import shutil

    old = tmp_path / "old-site"
    shutil.copytree(site, old)
    shutil.rmtree(old / SHARDS_ROOT)
    with RegistryServer(old) as server:
        shown = _search(server.url, "c", "--limit", "2")
    assert (shown["count"], shown["total"]) == (2, len(rank(_index(site), "c", limit=10**6)))
