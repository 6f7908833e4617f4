"""Collections on the website: a page per plugin or category folder listing exactly its skills, the collections
on each skill page's panel, and the search page's collection filter (in headless Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import write_tree
from helpers.build import make_registry
from helpers.history import commit
from helpers.plugins import plugin_repository
from helpers.site import BROWSER_WAIT, CHROMEDRIVER, CHROMIUM, broken_links, read_page, serve

from builder.core.config import load_config
from builder.publish.build import build

# The ops plugin, as the maintainer's marketplace file has it, also lists the docs plugin's pdf.
MARKETPLACE = json.dumps({"name": "acme", "owner": {"name": "Acme"}, "plugins": [
    {"name": "ops", "source": "./plugins/ops", "description": "Operations.",
     "skills": ["./skills/pdf", "../docs/skills/pdf"]}]})


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _listed(page: Path) -> list[str]:
    """The skills a listing page links to, by name, in its order."""
    return [href.split("/")[-2] for href in read_page(page).links_to("../../skills/")]


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin registry (plugins docs and ops, both with a skill named pdf; a category folder, writing) built."""
    base = tmp_path_factory.mktemp("collections")
    repo = plugin_repository(base / "repo")
    out = base / "out"
    build(load_config(repo / "registry.yaml"), out)
    return out


def test_each_collection_page_lists_exactly_its_skills(plugins: Path) -> None:
    index = json.loads((plugins / "api/v1/index.json").read_text(encoding="utf-8"))
    assert {c["name"]: c["skills"] for c in index["collections"]} == {
        "docs": ["docx", "pdf"], "ops": ["ops-pdf"], "writing": ["notes"]}
    for collection in index["collections"]:
        assert _listed(plugins / "collections" / collection["name"] / "index.html") == collection["skills"]
    docs = (plugins / "collections/docs/index.html").read_text(encoding="utf-8")
    for shown in ("Document skills.", "<dd>1.0.0</dd>", "<dd>Ada</dd>", '<a href="https://example.com">',
                  "search/?collection=docs"):
        assert shown in docs
    home = read_page(plugins / "index.html")
    assert home.links_to("collections/") == ["collections/docs/", "collections/ops/", "collections/writing/"]
    assert broken_links(plugins, "") == []


def test_a_skill_page_links_to_its_collection(plugins: Path) -> None:
    for skill, collection in (("pdf", "docs"), ("docx", "docs"), ("ops-pdf", "ops"), ("notes", "writing")):
        page = read_page(plugins / "skills" / skill / "index.html")
        assert page.links_to("../../collections/") == [f"../../collections/{collection}/"]


def test_a_category_registry_gets_no_collection_pages(tmp_path: Path) -> None:
    """registry.yaml's categories are collections in the API, but they keep their category pages only."""
    registry = make_registry(tmp_path / "repo", ["csv-profiler", "branch-cleanup"])
    out = tmp_path / "out"
    build(load_config(registry / "registry.yaml"), out)
    index = json.loads((out / "api/v1/index.json").read_text(encoding="utf-8"))
    assert index["collections"] and all(c["kind"] == "category" for c in index["collections"])
    assert not (out / "collections").exists()
    home = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="categories"' in home and 'id="collections"' not in home
    assert "sr-search__collection" not in (out / "search/index.html").read_text(encoding="utf-8")
    assert "collections/" not in (out / "skills/csv-profiler/index.html").read_text(encoding="utf-8")


def test_collection_pages_rebuild_byte_identically_and_follow_a_changed_marketplace(tmp_path: Path) -> None:
    repo = plugin_repository(tmp_path / "repo")
    config = load_config(repo / "registry.yaml")
    first, second = tmp_path / "first", tmp_path / "second"
    build(config, first)
    build(config, second)
    assert _files(first) == _files(second)

    write_tree(repo, {".claude-plugin/marketplace.json": MARKETPLACE})
    commit(repo, "list pdf in ops too", "2026-01-02T00:00:00Z")
    build(config, first)  # a rebuild over the output as it stands
    page = read_page(first / "skills/pdf/index.html")
    assert page.links_to("../../collections/") == ["../../collections/docs/", "../../collections/ops/"]
    assert _listed(first / "collections/ops/index.html") == ["ops-pdf", "pdf"]
    fresh = tmp_path / "fresh"
    build(config, fresh)
    assert _files(first) == _files(fresh)


def test_a_rebuild_writes_the_collection_pages_a_changed_skill_is_listed_on_and_no_other(tmp_path: Path) -> None:
    """A member's new description changes its collection's page; a change to a body alone changes no listing."""
    repo = plugin_repository(tmp_path / "repo")
    config = load_config(repo / "registry.yaml")
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    build(config, out)
    before = _files(out)
    docx = repo / "plugins/docs/skills/docx/SKILL.md"
    docx.write_text(docx.read_text(encoding="utf-8").replace("Says hello in docx", "Writes Word files"),
                    encoding="utf-8")
    notes = repo / "writing/skills/notes/SKILL.md"
    notes.write_text(notes.read_text(encoding="utf-8") + "\nA longer body.\n", encoding="utf-8")
    build(config, out)
    after = _files(out)
    assert "Writes Word files" in after["collections/docs/index.html"].decode()
    assert after["collections/writing/index.html"] == before["collections/writing/index.html"]
    build(config, fresh)
    assert after == _files(fresh)


def _result_names(driver) -> list[str]:  # type: ignore[no-untyped-def]
    return driver.execute_script(  # type: ignore[no-any-return]
        "return Array.prototype.map.call(document.querySelectorAll('.sr-search__results .sr-result__name'),"
        " function (e) { return e.innerText; });")


def _wait(driver, condition, message: str):  # type: ignore[no-untyped-def]
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, BROWSER_WAIT).until(condition, message)


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
                    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")
def test_the_collection_filter_narrows_search_results(driver, plugins: Path) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    with serve(plugins) as site:
        driver.get(f"{site}search/")
        _wait(driver, lambda d: sorted(_result_names(d)) == ["docx", "notes", "ops-pdf", "pdf"], "not every skill")
        Select(driver.find_element(By.CSS_SELECTOR, ".sr-search__collection")).select_by_value("docs")
        _wait(driver, lambda d: sorted(_result_names(d)) == ["docx", "pdf"], "the docs filter did not narrow")
        assert "collection=docs" in driver.current_url  # the filter stays in the address, so it can be shared
        driver.find_element(By.CSS_SELECTOR, ".sr-search__input").send_keys("pdf")
        _wait(driver, lambda d: _result_names(d) == ["pdf"], "query and collection together")
        driver.get(f"{site}search/?collection=ops&q=pdf")
        _wait(driver, lambda d: _result_names(d) == ["ops-pdf"], "a shared address did not filter by ops")
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []


def test_the_previous_collections_are_read_alone_from_an_index_of_any_size(tmp_path: Path) -> None:
    """A rebuild decodes only the previous index's ``collections``, in cuts that grow until the list is whole: a
    list longer than the first cut, with a character cut in two at each cut, reads as the whole index does."""
    from builder.core.bundle import dumps
    from builder.site.pages import _index_collections
    from builder.site.plan import page_collections

    members = [f"skill-{n}-é" for n in range(30_000)]  # about 400 KB: past the first two cuts
    collection = {"name": "docs", "kind": "plugin", "folder": "plugins/docs", "title": "Dócs", "skills": members}
    index = {"api_version": 1, "categories": [], "collections": [collection], "count": 0, "registry": {},
             "skills": [{"name": f"s{n}", "description": "ü" * 50} for n in range(20_000)], "source": {}}
    path = tmp_path / "index.json"
    path.write_bytes(dumps(index))
    assert _index_collections(path) == page_collections(index) == [collection]
    path.write_bytes(dumps(index)[:-10])  # an index cut short past its collections still gives them
    assert _index_collections(path) == [collection]
    path.write_bytes(dumps({**index, "collections": []})[:200])
    assert _index_collections(path) == []
