"""The built website in a real browser: headless Chromium, driven by selenium, against http.server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO
from helpers.site import (
    BROWSER_WAIT as WAIT,
)
from helpers.site import (
    CHROMEDRIVER,
    CHROMIUM,
    PagesHandler,
    QuietHandler,
    hostile_site,
    read_page,
    serve,
    set_page_body,
    write_hostile_registry,
)

from builder.core.config import load_config
from builder.core.search import rank
from builder.publish.build import BuildOptions

ARTIFACTS = REPO / "test-artifacts"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")]


@pytest.fixture(scope="module")
def site(bundled: Path) -> Iterator[str]:
    with serve(bundled) as url:
        yield url


def _wait(driver, condition, message: str):  # type: ignore[no-untyped-def]
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(condition, message)


def _result_names(driver) -> list[str]:  # type: ignore[no-untyped-def]
    """The names shown, read in one script: answers arrive asynchronously and re-render the list, so elements
    found in one call could be stale by the next."""
    return driver.execute_script(  # type: ignore[no-any-return]
        "return Array.prototype.map.call(document.querySelectorAll('.sr-search__results .sr-result__name'),"
        " function (e) { return e.innerText; });")


def _errors(driver) -> list[dict]:  # type: ignore[no-untyped-def]
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def _screenshot(driver, name: str) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / name))


def test_search_from_home_then_open_the_skill_with_the_keyboard(driver, site: str, bundled: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    index = json.loads((bundled / "api/v1/search-index.json").read_text(encoding="utf-8"))
    query = "data"
    expected = [h.name for h in rank(index, query, limit=12)]
    assert expected, "the bundled registry has no skill for the scenario's query"
    target = expected[0]

    driver.get(site)
    box = driver.find_element(By.CSS_SELECTOR, ".sr-search__input")
    box.send_keys(query)
    _wait(driver, lambda d: _result_names(d) == expected, f"home search for {query!r} did not show {expected}")
    _screenshot(driver, "home.png")
    def active() -> list[str]:
        return [a.text for a in driver.find_elements(By.CSS_SELECTOR, ".sr-result.sr-active .sr-result__name")]

    assert active() == [target]
    box.send_keys(Keys.ARROW_DOWN)
    assert active() == [expected[1 % len(expected)]]
    box.send_keys(Keys.ARROW_UP)
    assert active() == [target]
    box.send_keys(Keys.ENTER)
    _wait(driver, lambda d: d.current_url == f"{site}skills/{target}/", f"Enter did not open {target}")

    install = driver.find_element(By.CSS_SELECTOR, ".sr-install .tabbed-block .sr-command")
    assert install.is_displayed()
    # Built for its public address, served here: the page's script names the registry where it is served.
    assert install.text == f"skillreg install {target} --registry {site}"
    tree = [a.text for a in driver.find_elements(By.CSS_SELECTOR, ".sr-tree a")]
    assert "SKILL.md" in tree
    driver.find_element(By.CSS_SELECTOR, "label[for='__tabbed_1_4']").click()
    curl = driver.find_elements(By.CSS_SELECTOR, ".sr-install .tabbed-block .sr-command")[2]
    _wait(driver, lambda d: curl.is_displayed(), "the curl tab did not open")
    assert curl.text.startswith(f"curl -fsSL -o {target}.zip {site}api/v1/bundles/{target}/")
    _screenshot(driver, "skill.png")

    driver.find_element(By.CSS_SELECTOR, ".sr-panel a[href*='/categories/']").click()
    _wait(driver, lambda d: "/categories/" in d.current_url, "the panel's category did not open the category")
    listed = [a.text for a in driver.find_elements(By.CSS_SELECTOR, ".sr-list .sr-list__name")]
    assert target in listed
    assert _errors(driver) == []


def test_search_page_filters_by_category_and_tag_like_the_python_ranking(driver, site: str, bundled: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    index = json.loads((bundled / "api/v1/search-index.json").read_text(encoding="utf-8"))
    category = index["skills"][0][2]
    driver.get(f"{site}search/?category={category}")
    expected = [h.name for h in rank(index, "", category=category, limit=50)]
    _wait(driver, lambda d: _result_names(d) == expected, f"category filter {category} did not list {expected}")

    tag = sorted({t for row in index["skills"] for t in row[3]})[0]
    Select(driver.find_element(By.CSS_SELECTOR, ".sr-search__category")).select_by_value("")
    Select(driver.find_element(By.CSS_SELECTOR, ".sr-search__tag")).select_by_value(tag)
    expected = [h.name for h in rank(index, "", tag=tag, limit=50)]
    _wait(driver, lambda d: _result_names(d) == expected, f"tag filter {tag} did not list {expected}")
    assert f"tag={tag}" in driver.current_url  # the filters stay in the address, so a search can be shared

    driver.find_element(By.CSS_SELECTOR, ".sr-search__input").send_keys("zzzz-no-such-skill")
    _wait(driver, lambda d: "No skill matches" in d.find_element(By.CSS_SELECTOR, ".sr-search__status").text,
          "no 'no match' message")
    assert _errors(driver) == []


def test_the_hostile_skill_never_runs_script(driver, tmp_path_factory: pytest.TempPathFactory) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    out = hostile_site(tmp_path_factory.getbasetemp())
    with serve(out) as url:
        for path in ("", "skills/evil-skill/", "categories/security/", "tags/xss/", "search/?q=evil"):
            driver.get(url + path)
            _wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", path)
            for element in driver.find_elements(By.CSS_SELECTOR, ".sr-lede, .sr-body *, .sr-result"):
                if element.is_displayed():
                    ActionChains(driver).move_to_element(element).perform()
            for link in driver.find_elements(By.CSS_SELECTOR, ".sr-body a:not([href])"):
                link.click()
            assert driver.execute_script("return window.__pwned === true") is False, path
        assert driver.find_elements(By.CSS_SELECTOR, ".sr-body script, .sr-body iframe, .sr-body form") == []


def test_readme_screenshot_is_small_enough_to_commit() -> None:
    shots = sorted((REPO / "docs").glob("screenshot-*.png"))
    if not shots:
        pytest.skip("docs/screenshot-home.png is added with the README's Website section")
    for shot in shots:
        assert shot.stat().st_size < 300_000, shot
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot


@pytest.fixture(autouse=True, scope="module")
def _keep_home_screenshot_for_the_readme() -> Iterator[None]:
    """Set SKILLREG_README_SCREENSHOT=1 to refresh docs/screenshot-home.png from this run's home.png."""
    yield
    if os.environ.get("SKILLREG_README_SCREENSHOT") == "1" and (ARTIFACTS / "home.png").is_file():
        (REPO / "docs").mkdir(exist_ok=True)
        shutil.copyfile(ARTIFACTS / "home.png", REPO / "docs" / "screenshot-home.png")
    if os.environ.get("SKILLREG_README_SCREENSHOT") == "1":
        for shot, name in README_SHOTS.items():
            if (ARTIFACTS / shot).is_file():
                shutil.copyfile(ARTIFACTS / shot, REPO / "docs" / name)


# -- the skill page's layout at a desktop and a phone width ---------------------------------------------------

WIDTHS = (1280, 390)  # a laptop, and a phone held upright
README_SHOTS = {f"skill-page-{w}-{part}.png": f"screenshot-skill-{w}-{part}.png"
                for w in WIDTHS for part in ("install", "frontmatter")}
README_SHOTS.update({"menu-390-skill.png": "screenshot-menu-390.png", "not-found-390.png": "screenshot-404-390.png"})

_KEY_CELLS = """
const rows = [...document.querySelectorAll('table.sr-frontmatter tbody tr')];
return rows.map(row => {
  const [key, value] = row.querySelectorAll('td');
  const code = key.querySelector('code');
  const r = code.getBoundingClientRect(), k = key.getBoundingClientRect(), v = value.getBoundingClientRect();
  return {key: code.textContent, lines: code.getClientRects().length, codeLeft: r.left, codeRight: r.right,
          cellLeft: k.left, cellRight: k.right, cellScroll: key.scrollWidth, cellClient: key.clientWidth,
          valueWidth: v.width, valueLeft: v.left, valueTop: v.top, keyBottom: k.bottom};
});
"""

_BUTTON_AND_TEXT = """
const pre = arguments[0], code = pre.querySelector('code'), button = pre.querySelector('.md-code__button');
const b = button.getBoundingClientRect();
const range = document.createRange();
range.selectNodeContents(code);
const lines = [...range.getClientRects()].filter(r => r.width > 0 && r.height > 0);
const tops = new Set(lines.map(r => Math.round(r.top)));
const hits = lines.filter(r => r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom);
return {button: [b.left, b.top, b.width, b.height], lines: tops.size, overlaps: hits.length,
        pageScroll: document.documentElement.scrollWidth, pageWidth: document.documentElement.clientWidth};
"""


def _at_width(driver, width: int) -> None:  # type: ignore[no-untyped-def]
    driver.set_window_size(width, 900)
    _wait(driver, lambda d: d.execute_script("return window.innerWidth") == width, f"window not {width} px wide")


def _scroll_to(driver, anchor: str) -> None:  # type: ignore[no-untyped-def]
    driver.execute_script("const e = document.getElementById(arguments[0]); "
                          "window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - 64);", anchor)
    time.sleep(0.6)  # let the theme's header finish its title transition before a screenshot


def _longest_key_skill(bundled: Path) -> str:
    """The bundled skill whose frontmatter has the longest key (as the page shows it: metadata.x)."""
    def longest(name: str) -> int:
        detail = json.loads((bundled / f"api/v1/skills/{name}.json").read_text(encoding="utf-8"))
        keys = [f"{k}.{sub}" if isinstance(v, dict) else k for k, v in detail["frontmatter"].items()
                for sub in (v if isinstance(v, dict) and v else [None])]
        return max(len(k) for k in keys)

    names = [p.stem for p in (bundled / "api/v1/skills").glob("*.json")]
    return max(sorted(names), key=longest)


@pytest.mark.parametrize("width", WIDTHS)
def test_frontmatter_keys_stay_whole_and_the_table_reads_at_each_width(driver, site: str, bundled: Path,
                                                                      width: int) -> None:
    try:
        _at_width(driver, width)
        for name in dict.fromkeys(["csv-profiler", _longest_key_skill(bundled)]):
            driver.get(f"{site}skills/{name}/")
            cells = driver.execute_script(_KEY_CELLS)
            assert cells, f"{name}: no frontmatter rows"
            for c in cells:
                assert c["lines"] == 1, f"{name} at {width} px: key {c['key']} wraps onto {c['lines']} lines"
                assert c["cellScroll"] <= c["cellClient"] + 1, f"{name} at {width} px: key {c['key']} overflows"
                assert c["cellLeft"] - 1 <= c["codeLeft"] and c["codeRight"] <= c["cellRight"] + 1, c
                assert c["valueWidth"] >= min(300, width * 0.6), \
                    f"{name} at {width} px: the value of {c['key']} is squeezed to {c['valueWidth']:.0f} px"
            page = driver.execute_script("return [document.documentElement.scrollWidth, "
                                         "document.documentElement.clientWidth]")
            assert page[0] <= page[1], f"{name} at {width} px: the page scrolls sideways ({page})"
            if width >= 1000:  # a real two-column table: the header sits over its column
                header = driver.execute_script(
                    "return [...document.querySelectorAll('table.sr-frontmatter th')].map(h => "
                    "h.getBoundingClientRect().left)")
                assert abs(header[1] - cells[0]["valueLeft"]) < 1, (header, cells[0])
            else:  # a phone: each value sits below its key
                assert all(c["valueTop"] >= c["keyBottom"] - 1 for c in cells), cells
        driver.get(f"{site}skills/csv-profiler/")
        _scroll_to(driver, "frontmatter")
        _screenshot(driver, f"skill-page-{width}-frontmatter.png")
    finally:
        driver.set_window_size(1280, 900)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_copy_button_never_covers_the_install_command(driver, site: str, width: int) -> None:
    from selenium.webdriver.common.by import By

    try:
        _at_width(driver, width)
        driver.get(f"{site}skills/csv-profiler/")
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".sr-install pre .md-code__button"),
              "mkdocs-material added no copy button")
        _scroll_to(driver, "install")
        _screenshot(driver, f"skill-page-{width}-install.png")
        wrapped = 0
        for tab in (1, 2, 4):  # skillreg, npx skills, curl (Download has no command)
            driver.find_element(By.CSS_SELECTOR, f"label[for='__tabbed_1_{tab}']").click()
            pres = [p for p in driver.find_elements(By.CSS_SELECTOR, ".sr-install .tabbed-block pre")
                    if p.is_displayed()]
            assert len(pres) == 1, f"tab {tab} shows {len(pres)} commands"
            _wait(driver, lambda d: pres[0].find_element(By.CSS_SELECTOR, ".md-code__button").is_displayed(),  # noqa: B023
                  f"tab {tab}: no copy button")
            found = driver.execute_script(_BUTTON_AND_TEXT, pres[0])
            assert found["overlaps"] == 0, f"tab {tab} at {width} px: the copy button covers the command ({found})"
            assert found["pageScroll"] <= found["pageWidth"], found
            wrapped += found["lines"] > 1
        if width < 500:
            assert wrapped, "at a phone width some command should wrap; the overlap check saw no wrapped text"
    finally:
        driver.set_window_size(1280, 900)




class _BeaconHandler(QuietHandler):
    """A static host that picks types itself, seen by a browser that renders every XML type: files are typed by the
    machine's tables (/etc/mime.types: .rs, .apxml and .mml are XML types there, as .rs is in mime-db, GitHub
    Pages' table), and an XML type Chromium would download instead of render (it renders a fixed few; other browsers
    render more, MathML for one) is sent as application/xml. Every request for /beacon/..., which a payload sends, is
    noted."""

    beacons: list[str] = []

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        from builder.core.content_types import is_executable

        media = super().guess_type(path)
        return "application/xml" if is_executable(media) and media.endswith("+xml") and media not in (
            "image/svg+xml", "application/xhtml+xml") else media

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        if self.path.startswith("/beacon/"):
            self.beacons.append(self.path)


def _beacon_handler() -> type[_BeaconHandler]:
    return type("Beacons", (_BeaconHandler,), {"beacons": []})


def _open(driver, url: str, click: str | None) -> bool:  # type: ignore[no-untyped-def]
    """Load ``url`` (and click the first ``click`` element), let what it started settle; whether a payload ran."""
    from selenium.webdriver.common.by import By

    driver.get("about:blank")  # a file the browser downloads instead leaves this page, not the last one, open
    driver.get(url)
    _wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", url)
    if click:
        for element in driver.find_elements(By.CSS_SELECTOR, click)[:1]:
            driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", element)
    driver.execute_async_script("setTimeout(arguments[arguments.length - 1], 100)")  # a navigation or fetch it began
    return driver.execute_script("return window.__pwned === true") is True


def test_the_scripted_files_really_run_when_served_as_they_are(driver, tmp_path: Path) -> None:
    """The control: served as they are by a static host that types them itself, every payload of the fixture runs
    and calls its beacon (feed.xml's through the style sheet it applies), so the next test can fail; Rust's
    main.rs, an XML type there too, is an XML error page that runs nothing."""
    from helpers.active import ACTIVE, PAYLOADS

    shutil.copytree(ACTIVE, tmp_path / "raw")
    handler = _beacon_handler()
    with serve(tmp_path / "raw", handler) as url:
        ran = {path: _open(driver, url + path, click) for path, click in PAYLOADS.items()}
        assert _open(driver, url + "src/main.rs", None) is False
        assert driver.execute_script("return document.contentType") == "application/xml"  # an XML error page
    assert ran == {path: True for path in PAYLOADS}
    assert {beacon.removeprefix("/beacon/") for beacon in handler.beacons} == {p.rpartition("/")[2] for p in PAYLOADS}


def _skill_urls(out: Path, name: str) -> list[str]:
    """Every file the build published for skill ``name``, its page, and the raw and discovery v0.1 addresses its
    files kept to archives would have had."""
    from helpers.active import KEPT

    from builder.core.urls import skill_units

    found = [f"skills/{name}/"]
    for unit in skill_units(name):
        if (out / unit).is_file():
            found.append(unit)
        found += sorted(p.relative_to(out).as_posix() for p in (out / unit).rglob("*") if p.is_file())
    found += [f"api/v1/skills/{name}/files/{path}" for path in sorted(KEPT)]
    return found + [f".well-known/skills/{name}/{path}" for path in sorted(KEPT)]


def _nothing_of_the_skill_runs(driver, url: str, out: Path, beacons: list[str]) -> None:  # type: ignore[no-untyped-def]
    from helpers.active import KEPT, NAME, PAYLOADS

    for path in _skill_urls(out, NAME):
        assert _open(driver, url + path, None) is False, path
    for path, click in PAYLOADS.items():  # and with the click a visitor would give it
        assert _open(driver, url + f"api/v1/skills/{NAME}/files/{path}", click) is False, path
    assert not any((out / f"api/v1/skills/{NAME}/files/{path}").exists() for path in KEPT)
    _open(driver, url + f"skills/{NAME}/", None)  # the last page's fetches, if any, have reached the server
    assert beacons == []


def test_a_skill_with_pages_is_published_and_nothing_of_it_runs_on_the_site(
        driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hostile fixture publishes (SK517 warns); its pages are in the archives only. Every address of the skill
    is loaded from a plain static server (the machine's types, as a host that picks them) and from `skillreg
    serve`: no payload runs, no beacon is called, and the page lists the pages without a link."""
    from click.testing import CliRunner
    from helpers.active import KEPT, NAME, RAW, active_registry

    from builder.cli.app import cli
    from builder.ops import serve as serve_module
    from builder.ops.serve import ServeEvent

    root = active_registry(tmp_path / "registry")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["build", "--out", "site", "--verbose"])
    assert result.exit_code == 0, result.output
    assert result.output.count("warning SK517") == len(KEPT)
    out = root / "site"

    page = read_page(out / f"skills/{NAME}/index.html")
    linked = {href.removeprefix(f"../../api/v1/skills/{NAME}/files/") for href in page.links_to("../../api/")
              if "/files/" in href}
    assert linked == RAW  # the file tree and the body link every raw file (main.rs too), no page kept to archives
    text = (out / f"skills/{NAME}/index.html").read_text(encoding="utf-8")
    assert text.count(">zip only</span>") == len(KEPT)
    assert all(f">{path.rpartition('/')[2]} <" in text for path in KEPT)  # listed by name in the file tree

    handler = _beacon_handler()
    with serve(out, handler) as url:
        _nothing_of_the_skill_runs(driver, url, out, handler.beacons)

    beacons: list[str] = []
    monkeypatch.setattr(serve_module._SiteHandler, "log_message",
                        lambda self, *args: beacons.append(self.path) if self.path.startswith("/beacon/") else None)
    events: list[ServeEvent] = []
    stop = threading.Event()
    served = root / "served"
    thread = threading.Thread(target=serve_module.serve, args=(load_config(root / "registry.yaml"), served),
                              kwargs={"port": 0, "interval": 0.5, "on_event": events.append, "stop": stop})
    thread.start()
    try:
        _wait(driver, lambda d: any(e.kind in ("serving", "failed") for e in events), "serve did not start")
        (url,) = [e.url for e in events if e.kind == "serving"]
        _nothing_of_the_skill_runs(driver, url, served, beacons)
        driver.get(url + f"api/v1/skills/{NAME}/files/src/main.rs")
        assert driver.execute_script("return document.contentType") == "text/plain"
    finally:
        stop.set()
        thread.join(timeout=30)


def test_the_page_fetches_the_sharded_index_a_query_at_a_time(driver, site: str, bundled: Path) -> None:
    """Never the whole index: the manifest and the files of the query's tokens; a keystroke that only extends a
    token of three or more characters fetches nothing more."""
    from selenium.webdriver.common.by import By

    index = json.loads((bundled / "api/v1/search-index.json").read_text(encoding="utf-8"))

    def fetched() -> list[str]:
        names = driver.execute_script(
            "return performance.getEntriesByType('resource').map(function (e) { return e.name; });")
        return [n[len(site):] for n in names if "/api/" in n]

    driver.get_log("browser")  # what earlier tests left in the log
    driver.get(site)
    box = driver.find_element(By.CSS_SELECTOR, ".sr-search__input")
    box.send_keys("csv")
    expected = [h.name for h in rank(index, "csv", limit=12)]
    _wait(driver, lambda d: _result_names(d) == expected and any("/terms/csv." in p for p in fetched()),
          f"home search for 'csv' did not show {expected}")
    first = fetched()
    assert first[0] == "api/v1/search/index.json"
    assert any(p.startswith("api/v1/search/terms/csv.") for p in first), first
    assert not any("search-index.json" in p for p in first), first
    box.send_keys("-pro")  # as typed, tokens p, pr and pro: their files are new, those of csv are not
    expected = [h.name for h in rank(index, "csv-pro", limit=12)]
    # "csv-pr" may show the same names: wait for the file of "pro" too, so its answer is the one shown.
    _wait(driver, lambda d: _result_names(d) == expected and any("/terms/pro." in p for p in fetched()),
          f"home search for 'csv-pro' did not show {expected}")
    second = fetched()[len(first):]
    assert sorted(p.rsplit(".", 2)[0] for p in second) == ["api/v1/search/prefix/p", "api/v1/search/prefix/pr",
                                                            "api/v1/search/terms/pro"], second
    box.send_keys("fil")
    expected = [h.name for h in rank(index, "csv-profil", limit=12)]
    _wait(driver, lambda d: _result_names(d) == expected, f"home search for 'csv-profil' did not show {expected}")
    assert fetched()[len(first) + len(second):] == []
    assert _errors(driver) == []


# Words every plain JavaScript object answers to: as queries, a name, tags and description words.
PROTOTYPE_SKILLS = {
    "constructor": ("Generates a class constructor, with toString and valueOf, from a list of fields.",
                    "constructor, tostring, valueof"),
    "prototype-keys": ("Audits JavaScript objects for constructor, __proto__, toString, hasOwnProperty and valueOf "
                       "keys.", "javascript, prototype"),
}


def _prototype_site(base: Path) -> Path:
    """A registry whose skills are named, tagged and described with Object.prototype's keys, built once."""
    from helpers import write_tree

    from builder.core.config import load_config
    from builder.publish.build import build

    root = base / "prototype-registry"
    out = root / "site"
    if not (out / "index.html").is_file():
        files = {"registry.yaml": (REPO / "registry.yaml").read_text(encoding="utf-8")}
        for name, (description, tags) in PROTOTYPE_SKILLS.items():
            files[f"skills/{name}/SKILL.md"] = (
                f"---\nname: {name}\ndescription: {description}\nlicense: MIT\nmetadata:\n  category: code-review\n"
                f"  tags: {tags}\n  version: \"1.0.0\"\n  author: Ada\n---\n# {name}\n\n## Usage\n\nRead it.\n")
        write_tree(root, files)
        assert build(load_config(root / "registry.yaml"), out).published == tuple(sorted(PROTOTYPE_SKILLS))
    return out


@pytest.mark.parametrize("page", ["", "search/"])
def test_object_prototype_keys_typed_into_the_search_box_find_skills_without_errors(
        driver, page: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    out = _prototype_site(tmp_path_factory.getbasetemp())
    index = json.loads((out / "api/v1/search-index.json").read_text(encoding="utf-8"))
    with serve(out) as url:
        driver.get_log("browser")  # what earlier tests left in the log
        driver.get(url + page)
        box = driver.find_element(By.CSS_SELECTOR, ".sr-search__input")
        for query in ("constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "con"):
            expected = [h.name for h in rank(index, query, limit=12)]
            assert expected, f"the registry has no skill for {query!r}"
            box.send_keys(Keys.CONTROL, "a")
            box.send_keys(query)
            _wait(driver, lambda d, expected=expected: _result_names(d) == expected,
                  f"search for {query!r} did not show {expected}")
            status = driver.find_element(By.CSS_SELECTOR, ".sr-search__status").text
            assert "could not" not in status, (query, status)
        assert _errors(driver) == []


def test_a_skill_tagged_constructor_is_listed_by_the_tag_filter(driver, tmp_path_factory: pytest.TempPathFactory,
                                                                ) -> None:
    from selenium.webdriver.common.by import By

    out = _prototype_site(tmp_path_factory.getbasetemp())
    with serve(out) as url:
        driver.get_log("browser")
        driver.get(f"{url}search/?tag=constructor")
        _wait(driver, lambda d: _result_names(d) == ["constructor"], "the tag filter constructor did not list it")
        tags = [o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, ".sr-search__tag option")]
        assert {"constructor", "tostring", "valueof"} <= set(tags)
        driver.get(f"{url}search/?tag=constructor&q=__proto__")  # only the other skill has proto
        _wait(driver, lambda d: "No skill matches" in d.find_element(By.CSS_SELECTOR, ".sr-search__status").text,
              "__proto__ within the tag constructor did not say no skill matches")
        assert _errors(driver) == []


# ------------------------------------------------------------------------------ publish.page_body: fetched

def _fetched_registry(base: Path) -> Path:
    """The bundled registry with ``publish.page_body: fetched``, built once per module."""
    from builder.core.config import load_config
    from builder.publish.build import build

    out = base / "fetched-site"
    if not (out / "index.html").is_file():
        registry = base / "fetched-registry"
        registry.mkdir(exist_ok=True)
        shutil.copy(REPO / "registry.yaml", registry / "registry.yaml")
        shutil.copytree(REPO / "skills", registry / "skills", dirs_exist_ok=True)
        set_page_body(registry, "fetched")
        build(load_config(registry / "registry.yaml"), out, BuildOptions(keep_going=True))
    return out


@pytest.fixture(scope="module")
def fetched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _fetched_registry(tmp_path_factory.getbasetemp())


def _body_html(driver) -> str:  # type: ignore[no-untyped-def]
    return driver.execute_script(  # type: ignore[no-any-return]
        "var b = document.querySelector('.sr-body'); return b && !b.hasAttribute('data-src') ? b.innerHTML : null;")


def test_a_fetched_page_shows_the_body_an_inline_page_holds(driver, fetched: Path, bundled: Path) -> None:
    import gzip

    from builder.site.skill_pages import SECTIONS_MARK

    name = "csv-profiler"
    inline = (bundled / f"skills/{name}/index.html").read_text(encoding="utf-8")
    body, _, sections = gzip.decompress((fetched / f"skills/{name}/skill-md.html.gz").read_bytes()).decode() \
        .rpartition(SECTIONS_MARK)
    assert body in inline  # the same bytes the inline build put in its page
    assert sections.startswith('<h2 id="files">')  # (its provenance differs: the fetched registry is no git checkout)
    with serve(fetched) as url:
        driver.get(f"{url}skills/{name}/")
        _wait(driver, lambda d: _body_html(d) is not None, "the body was not loaded")
        shown = driver.execute_script("return document.querySelector('.sr-body').innerHTML")
        # The browser's serialisation of the same markup: compare what it parsed, not the bytes.
        expected = driver.execute_script("var t = document.createElement('div'); t.innerHTML = arguments[0];"
                                         "return t.innerHTML;", body)
        assert shown == expected
        # The sections below the body come in the same file and stand where an inline page has them.
        placed = driver.execute_script(
            "var f = document.getElementById('files'), b = document.querySelector('.sr-body');"
            "return f && f.parentNode === b.parentNode && !!(b.compareDocumentPosition(f) & 4) ? "
            "[].slice.call(document.querySelectorAll('.sr-main > h2')).map(function (h) { return h.id; }) : null;")
        assert placed == ["skill-md", "files", "frontmatter", "provenance", "versions", "permissions", "standard"]
        headings = driver.find_elements("css selector", ".sr-body h2[id], .sr-body h3[id]")
        assert headings, "the body has no headings to link to"
        anchor = headings[-1].get_attribute("id")
        assert _errors(driver) == []
        # A link to one of the body's headings lands on it, although the heading arrives after the page.
        driver.get("about:blank")
        driver.get(f"{url}skills/{name}/#{anchor}")
        _wait(driver, lambda d: _body_html(d) is not None, "the body was not loaded")
        _wait(driver, lambda d: d.execute_script(
            "var r = document.getElementById(arguments[0]).getBoundingClientRect();"
            "return r.top >= -1 && r.top < window.innerHeight;", anchor), f"#{anchor} was not scrolled to")
        assert driver.execute_script("return window.scrollY") > 0
        # So does a link to one of the sections, which arrive with the body (the panel links #permissions).
        driver.get("about:blank")
        driver.get(f"{url}skills/{name}/#permissions")
        _wait(driver, lambda d: d.execute_script(
            "var h = document.getElementById('permissions'); if (!h) return false;"
            "var r = h.getBoundingClientRect(); return r.top >= -1 && r.top < window.innerHeight;"),
            "#permissions was not scrolled to")


class _EncodingHandler(QuietHandler):
    """Serves ``.gz`` files as ``Content-Encoding: gzip``, as some static hosts do (the browser unpacks them)."""

    def end_headers(self) -> None:
        if self.path.split("?")[0].endswith(".gz"):
            self.send_header("Content-Encoding", "gzip")
        super().end_headers()


def test_a_fetched_body_served_with_content_encoding_is_shown_too(driver, fetched: Path) -> None:
    with serve(fetched, _EncodingHandler) as url:
        driver.get(f"{url}skills/csv-profiler/")
        _wait(driver, lambda d: _body_html(d) is not None, "the body was not loaded")
        assert driver.find_elements("css selector", ".sr-body h2, .sr-body p")
        assert _errors(driver) == []


def test_a_missing_fetched_body_leaves_the_note_and_its_links(driver, fetched: Path, tmp_path: Path) -> None:
    copy = tmp_path / "site"
    shutil.copytree(fetched, copy)
    (copy / "skills/csv-profiler/skill-md.html.gz").unlink()
    (copy / "skills/secret-scanner/skill-md.html.gz").write_bytes(b"\x1f\x8bnot gzip at all")
    with serve(copy) as url:
        for name, why in (("csv-profiler", "HTTP 404"), ("secret-scanner", "")):  # gone; not gzip after all
            driver.get(f"{url}skills/{name}/")
            _wait(driver, lambda d: d.execute_script(
                "return document.querySelector('.sr-body').getAttribute('data-error')") is not None,
                f"{name}: no error shown")
            note = driver.find_element("css selector", ".sr-body__note").text
            assert "could not be loaded" in note and why in note, note
            link = driver.find_element("css selector", ".sr-body__note a").get_attribute("href")
            assert link.endswith(".zip")


def test_the_hostile_skill_fetched_never_runs_script(driver, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    from builder.core.config import load_config
    from builder.publish.build import build

    root = write_hostile_registry(tmp_path / "hostile")
    set_page_body(root, "fetched")
    build(load_config(root / "registry.yaml"), root / "site")
    with serve(root / "site") as url:
        driver.get(url + "skills/evil-skill/")
        _wait(driver, lambda d: _body_html(d) is not None, "the body was not loaded")
        for element in driver.find_elements(By.CSS_SELECTOR, ".sr-lede, .sr-body *"):
            if element.is_displayed():
                ActionChains(driver).move_to_element(element).perform()
        for link in driver.find_elements(By.CSS_SELECTOR, ".sr-body a:not([href])"):
            link.click()
        time.sleep(0.5)  # an injected handler would have run by now
        assert driver.execute_script("return window.__pwned === true") is False
        assert driver.find_elements(By.CSS_SELECTOR, ".sr-body script, .sr-body iframe, .sr-body form") == []


# -- every page's header, width and search box at a desktop and a phone width ---------------------------------

NAVIGATION = ["Home", "Categories", "Tags", "Search"]
MISSING = "skills/no-such-skill/deeper/page.html"  # a missing address a few folders down


class _PagesHandler(PagesHandler):
    """As GitHub Pages serves this project's site: under its base path."""

    base_path = "/skill-registry/"


@pytest.fixture(scope="module")
def pages_site(bundled: Path) -> Iterator[str]:
    """The bundled site at its published base path (its base_url is a project site, .../skill-registry/)."""
    assert json.loads((bundled / "api/v1/index.json").read_text())["registry"]["url"].endswith(_PagesHandler.base_path)
    with serve(bundled, _PagesHandler) as url:
        yield url.rstrip("/") + _PagesHandler.base_path


def _every_kind_of_page(bundled: Path) -> list[str]:
    category = sorted(p.name for p in (bundled / "categories").iterdir() if p.is_dir())[0]
    tag = sorted(p.name for p in (bundled / "tags").iterdir() if p.is_dir())[0]
    return ["", "categories/", "tags/", "search/", "skills/csv-profiler/", f"categories/{category}/", f"tags/{tag}/",
            MISSING]


_HEADER = """
const visible = e => { if (!e) return false; const r = e.getBoundingClientRect(), s = getComputedStyle(e);
  return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && r.bottom > 0 && r.top < innerHeight
    && document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.closest('a, label') === e.closest('a, label'); };
const logo = document.querySelector('.md-header .sr-logo'), menu = document.querySelector('.md-header label[for=__drawer]');
const links = [...document.querySelectorAll('.md-tabs a')];
const mask = logo ? getComputedStyle(logo).webkitMaskImage : '';
const logoFile = mask.includes('logo.svg') && performance.getEntriesByType('resource').some(
  e => e.name.endsWith('/assets/logo.svg') && e.responseStatus === 200);
return {logo: visible(logo) && logoFile, inlineLogo: visible(logo) && mask.startsWith('url("data:image/svg+xml'),
        menu: visible(menu),
        shown: links.filter(visible).map(a => a.textContent.trim()), all: links.map(a => a.textContent.trim()),
        sidebars: [...document.querySelectorAll('.md-sidebar')].filter(e => e.getBoundingClientRect().width > 0).length,
        header: getComputedStyle(document.querySelector('.md-header')).backgroundColor};
"""


def _header(driver) -> dict:  # type: ignore[no-untyped-def]
    time.sleep(0.3)  # the theme's transitions (overlay, tabs) settle
    return driver.execute_script(_HEADER)  # type: ignore[no-any-return]


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_has_the_logo_and_a_menu_that_opens_the_navigation(driver, pages_site: str, bundled: Path,
                                                                     width: int) -> None:
    from selenium.webdriver.common.by import By

    try:
        _at_width(driver, width)
        for path in _every_kind_of_page(bundled):
            driver.get(pages_site + path)
            _wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", path)
            found = _header(driver)
            # The 404 page carries its style sheets, and the logo in them, inside it (styled wherever it is served).
            logo = found["inlineLogo"] if path == MISSING else found["logo"]
            assert logo, f"{path or 'home'} at {width} px: no logo in the header ({found})"
            assert found["all"] == NAVIGATION, (path, found)
            assert found["header"] not in ("", "rgba(0, 0, 0, 0)"), (path, found)  # the theme's styles loaded
            if width >= 1000:  # the tabs are on show, no menu button
                assert (found["menu"], found["shown"]) == (False, NAVIGATION), (path, found)
                continue
            assert found["menu"] and found["shown"] == [], f"{path or 'home'} at {width} px: {found}"
            driver.find_element(By.CSS_SELECTOR, ".md-header label[for=__drawer]").click()
            assert _header(driver)["shown"] == NAVIGATION, f"{path or 'home'}: the menu did not open"
            if path == "skills/csv-profiler/":
                _screenshot(driver, f"menu-{width}-skill.png")
            driver.find_element(By.CSS_SELECTOR, ".md-header label[for=__drawer]").click()
            assert _header(driver)["shown"] == [], f"{path or 'home'}: the menu did not close"
    finally:
        driver.set_window_size(1280, 900)


def test_the_menu_works_from_the_keyboard(driver, pages_site: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    try:
        _at_width(driver, 390)
        driver.get(pages_site + "skills/csv-profiler/")
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        menu = driver.switch_to.active_element
        assert menu.get_attribute("id") == "__drawer" and menu.accessible_name == "Menu"
        outline = driver.execute_script(
            "return getComputedStyle(document.querySelector('.md-header label[for=__drawer]')).outlineStyle")
        assert outline == "solid"  # the button shows where the focus is
        menu.send_keys(Keys.SPACE)
        assert _header(driver)["shown"] == NAVIGATION
        reached = []
        while len(reached) < 6 and (not reached or reached[-1] != "Categories"):
            driver.switch_to.active_element.send_keys(Keys.TAB)
            reached.append(driver.switch_to.active_element.text)
        assert reached[-1] == "Categories", reached  # Tab goes from the button into the menu's links
        driver.switch_to.active_element.send_keys(Keys.ENTER)
        _wait(driver, lambda d: d.current_url.endswith("/categories/"), "Enter on the menu's link did not open it")
    finally:
        driver.set_window_size(1280, 900)


def test_escape_closes_the_phone_menu_and_gives_the_focus_back_to_its_button(driver, pages_site: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    try:
        _at_width(driver, 390)
        for path in ("skills/csv-profiler/", "search/", "categories/data/"):
            driver.get(pages_site + path)
            driver.find_element(By.CSS_SELECTOR, ".md-header label[for=__drawer]").click()
            assert _header(driver)["shown"] == NAVIGATION, f"{path}: the menu did not open"
            driver.find_element(By.CSS_SELECTOR, ".sr-tabs .md-tabs__link").send_keys(Keys.ESCAPE)
            assert _header(driver)["shown"] == [], f"{path}: Escape did not close the menu"
            focused = driver.switch_to.active_element
            assert (focused.get_attribute("id"), focused.accessible_name) == ("__drawer", "Menu"), path
            focused.send_keys(Keys.ESCAPE)  # a closed menu stays closed
            assert _header(driver)["shown"] == [], path
    finally:
        driver.set_window_size(1280, 900)


def test_navigation_pages_have_no_sidebar_and_use_the_width(driver, pages_site: str) -> None:
    article = "return document.querySelector('article').getBoundingClientRect().width"
    driver.get(pages_site + "skills/csv-profiler/")
    full = driver.execute_script(article)
    for path in ("search/", "tags/", "categories/", "", MISSING):
        driver.get(pages_site + path)
        assert _header(driver)["sidebars"] == 0, path
        assert abs(driver.execute_script(article) - full) < 1, f"{path or 'home'}: the content is narrower"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_404_page_leads_home_to_the_categories_and_to_search_from_any_depth(driver, pages_site: str,
                                                                               bundled: Path, width: int) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    index = json.loads((bundled / "api/v1/search-index.json").read_text(encoding="utf-8"))
    expected = [h.name for h in rank(index, "csv", limit=50)]
    driver.get_log("browser")  # what earlier tests left in the log
    try:
        _at_width(driver, width)
        for missing in ("no-such-page/", MISSING, "a/b/c/d/e/"):
            for link, lands, heading in (("home page", "", "Skill Registry"), ("categories", "categories/", "Categories")):
                driver.get(pages_site + missing)
                assert driver.find_element(By.TAG_NAME, "h1").text == "Page not found"
                assert "does not exist" in driver.find_element(By.CSS_SELECTOR, "article").text
                driver.find_element(By.LINK_TEXT, link).click()
                _wait(driver, lambda d: d.current_url == pages_site + lands, f"{missing}: {link} did not open")  # noqa: B023
                assert driver.find_element(By.TAG_NAME, "h1").text == heading
            driver.get(pages_site + missing)
            if missing == MISSING:
                _screenshot(driver, f"not-found-{width}.png")
            box = driver.find_element(By.CSS_SELECTOR, "form[role=search] input[name=q]")
            box.send_keys("csv", Keys.ENTER)
            _wait(driver, lambda d: d.current_url == pages_site + "search/?q=csv", f"{missing}: search did not open")
            _wait(driver, lambda d: _result_names(d) == expected, f"{missing}: the search did not show {expected}")
        # The browser logs each missing page's status 404; nothing else may fail.
        missed = tuple(f"{pages_site}{m} - Failed to load resource" for m in ("no-such-page/", MISSING, "a/b/c/d/e/"))
        assert [e for e in _errors(driver) if not e["message"].startswith(missed)] == []
    finally:
        driver.set_window_size(1280, 900)


_PLACEHOLDER = """
const input = document.querySelector(arguments[0]), s = getComputedStyle(input);
const context = document.createElement('canvas').getContext('2d');
context.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;  // s.font is empty for an input
return {font: context.font, size: s.fontSize, text: context.measureText(input.placeholder).width,
        room: input.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)};
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_the_search_placeholder_fits_its_box(driver, pages_site: str, width: int) -> None:
    try:
        _at_width(driver, width)
        for path, box in (("", ".sr-search__input"), ("search/", ".sr-search__input"),
                          (MISSING, "form[role=search] input")):
            driver.get(pages_site + path)
            found = driver.execute_script(_PLACEHOLDER, box)
            assert found["font"].startswith(found["size"]) and found["text"] > 50, found  # measured in the box's font
            assert found["text"] <= found["room"], f"{path or 'home'} at {width} px: the placeholder is cut ({found})"
    finally:
        driver.set_window_size(1280, 900)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_copy_button_never_covers_a_code_block_of_skill_md(driver, pages_site: str, bundled: Path,
                                                             width: int) -> None:
    """Every code block of every bundled SKILL.md: its copy button keeps clear of the text under it."""
    from selenium.webdriver.common.by import By

    try:
        _at_width(driver, width)
        checked = near = 0
        for page in sorted(bundled.glob("skills/*/index.html")):
            driver.get(f"{pages_site}skills/{page.parent.name}/")
            pres = driver.find_elements(By.CSS_SELECTOR, ".sr-body pre")
            if pres:
                _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".sr-body pre .md-code__button"),  # noqa: B023
                      "mkdocs-material added no copy button")
            for pre in pres:
                found = driver.execute_script(_BUTTON_AND_VISIBLE_TEXT, pre)
                assert found["overlaps"] == 0, f"{page.parent.name} at {width} px: the copy button covers code ({found})"
                assert found["pageScroll"] <= found["pageWidth"], found
                checked += 1
                near += driver.execute_script(_FIRST_LINE_REACHES_BUTTON, pre)
        assert checked > 20
        if width < 500:
            assert near, "at a phone width some first line should reach the button's column; none did"
    finally:
        driver.set_window_size(1280, 900)


# As _BUTTON_AND_TEXT, for code that scrolls: each line's text as far as the code's visible box shows it.
_BUTTON_AND_VISIBLE_TEXT = """
const pre = arguments[0], code = pre.querySelector('code'), button = pre.querySelector('.md-code__button');
const b = button.getBoundingClientRect(), c = code.getBoundingClientRect();
const left = c.left + code.clientLeft, right = left + code.clientWidth;
const top = c.top + code.clientTop, bottom = top + code.clientHeight;
const range = document.createRange();
range.selectNodeContents(code);
const lines = [...range.getClientRects()].map(r => ({left: Math.max(r.left, left), right: Math.min(r.right, right),
                                                       top: Math.max(r.top, top), bottom: Math.min(r.bottom, bottom)}))
  .filter(r => r.right > r.left && r.bottom > r.top);
const hits = lines.filter(r => r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom);
return {button: [b.left, b.top, b.width, b.height], code: [left, top, right, bottom], overlaps: hits.length,
        pageScroll: document.documentElement.scrollWidth, pageWidth: document.documentElement.clientWidth};
"""

_FIRST_LINE_REACHES_BUTTON = """
const pre = arguments[0], code = pre.querySelector('code'), b = pre.querySelector('.md-code__button').getBoundingClientRect();
const range = document.createRange();
range.selectNodeContents(code);
const lines = [...range.getClientRects()].filter(r => r.width > 0);
const first = Math.min(...lines.map(r => r.top));
return lines.some(r => Math.abs(r.top - first) < 1 && r.right > b.left - 30);
"""
