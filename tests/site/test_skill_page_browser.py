"""The skill page's panel, dates, the footer and the phone layout in a real browser (headless Chromium), and the
pages served from where they were not built for: install commands and the 404 page."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO, write_tree
from helpers.site import BROWSER_WAIT as WAIT
from helpers.site import CHROMEDRIVER, CHROMIUM, PagesHandler, serve

from builder.core.config import load_config
from builder.publish.build import BuildOptions, build
from builder.site.page_templates import SKILLREG_DOCS, SKILLREG_INSTALL, SKILLREG_UV_INSTALL, exact_time, human_date

ARTIFACTS = REPO / "test-artifacts"
SKILL = "csv-profiler"  # a bundled skill with a script, allowed tools, a licence, a version and an author
HUMAN_DATE = re.compile(r"[1-9][0-9]? (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4}")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")]


class _SubPathHandler(PagesHandler):
    """A static host that serves the folder only under ``base_path`` (a project site, a mirror, a preview at a path
    of its own) and answers every other address, inside or out, with the folder's 404.html and status 404."""

    only_under = True


def _under(base_path: str) -> type[_SubPathHandler]:
    return type("Under", (_SubPathHandler,), {"base_path": base_path})


@pytest.fixture(scope="module")
def site(bundled: Path) -> Iterator[str]:
    """The bundled site at its published base path, on 127.0.0.1 (not the address it was built for)."""
    with serve(bundled, _under("/skill-registry/")) as url:
        yield url + "skill-registry/"


@pytest.fixture(scope="module")
def unaddressed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry built with no base_url, as a newcomer's first build is."""
    root = tmp_path_factory.mktemp("no-base-url")
    write_tree(root, {"registry.yaml": "title: Local skills\ncategories:\n  - slug: data\n    title: Data\n"
                                      "    description: Data files.\n"})
    write_tree(root / "skills" / SKILL, {p.relative_to(REPO / "skills" / SKILL).as_posix(): p.read_bytes()
                                         for p in (REPO / "skills" / SKILL).rglob("*") if p.is_file()})
    out = root / "site"
    assert build(load_config(root / "registry.yaml"), out, BuildOptions(keep_going=True)).published == (SKILL,)
    return out


def _viewport(driver, width: int, height: int = 900) -> None:  # type: ignore[no-untyped-def]
    """The page's own area (not the window's) at ``width`` x ``height``."""
    from selenium.webdriver.support.ui import WebDriverWait

    extra = driver.execute_script("return outerHeight - innerHeight")
    driver.set_window_size(width, height + extra)
    WebDriverWait(driver, WAIT).until(
        lambda d: d.execute_script("return [innerWidth, innerHeight]") == [width, height], f"not {width}x{height}")


def _load(driver, url: str) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, WAIT).until(lambda d: d.execute_script("return document.readyState") == "complete", url)
    time.sleep(0.3)  # the theme's script sets the tabs' indicator and copy buttons


def _screenshot(driver, name: str) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / name))


DOCS_SHOTS = {f"skill-panel-{w}.png": f"screenshot-skill-{w}-panel.png" for w in (1280, 390)}


@pytest.fixture(autouse=True, scope="module")
def _keep_screenshots_for_the_docs() -> Iterator[None]:
    """Set SKILLREG_README_SCREENSHOT=1 to refresh docs/screenshot-skill-*-panel.png from this run's screenshots."""
    yield
    if os.environ.get("SKILLREG_README_SCREENSHOT") == "1":
        for shot, name in DOCS_SHOTS.items():
            if (ARTIFACTS / shot).is_file():
                shutil.copyfile(ARTIFACTS / shot, REPO / "docs" / name)


_PANEL = """
const box = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
  bottom: r.bottom, width: r.width, height: r.height}; };
const panel = document.querySelector('.sr-panel'), main = document.querySelector('.sr-main');
const facts = {};
for (const row of panel.querySelectorAll('.sr-facts > div')) {
  const dd = row.querySelector('dd'), time = dd.querySelector('time');
  facts[row.querySelector('dt').textContent] = {text: dd.textContent, box: box(dd), time: time &&
    {datetime: time.getAttribute('datetime'), title: time.title, text: time.textContent}};
}
return {panel: box(panel), main: box(main), body: box(document.querySelector('.sr-body')), facts: facts,
        install: {box: box(panel.querySelector('.sr-install pre')), text: panel.querySelector('.sr-command').innerText},
        safety: [...panel.querySelectorAll('.sr-safety li')].map(li => ({text: li.textContent, box: box(li)})),
        details: box(panel.querySelector('a[href="#permissions"]')),
        scroll: [document.documentElement.scrollWidth, document.documentElement.clientWidth]};
"""


@pytest.mark.parametrize("width", (1280, 390))
def test_the_panel_shows_what_an_installer_checks_first(driver, site: str, bundled: Path, width: int) -> None:
    """Beside the body at 1280x900 with install, version, licence, authors, updated and safety above the fold;
    above the body on a phone; each fact the detail document's."""
    detail = json.loads((bundled / f"api/v1/skills/{SKILL}.json").read_text(encoding="utf-8"))
    prov = detail["provenance"]
    try:
        _viewport(driver, width)
        _load(driver, f"{site}skills/{SKILL}/")
        found = driver.execute_script(_PANEL)
        _screenshot(driver, f"skill-panel-{width}.png")
        facts = found["facts"]
        assert facts["Version"]["text"] == detail["version"]
        assert facts["Licence"]["text"] == detail["license"]
        assert facts["Author"]["text"] == detail["frontmatter"]["metadata"]["author"]
        assert facts["Contributors"]["text"] == ", ".join(prov["authors"])
        assert facts["Updated"]["time"] == {"datetime": prov["updated"], "title": exact_time(prov["updated"]),
                                            "text": human_date(prov["updated"])}
        assert HUMAN_DATE.fullmatch(facts["Updated"]["time"]["text"]), facts["Updated"]
        assert facts["Size"]["text"].endswith(f"{len(detail['files'])} files")
        assert found["install"]["text"] == f"skillreg install {SKILL} --registry {site}"
        safety = [s["text"] for s in found["safety"]]
        assert safety[:2] == ["1 script shipped", "Allowed tools: " + " ".join(detail["permissions"]["allowed_tools"])]
        assert found["scroll"][0] <= found["scroll"][1], f"the page scrolls sideways at {width} px"
        panel, main = found["panel"], found["main"]
        if width >= 1000:
            assert panel["left"] >= main["right"] and panel["top"] < found["body"]["top"], found  # beside the body
            shown = [found["install"]["box"], found["details"], *(s["box"] for s in found["safety"])]
            shown += [facts[k]["box"] for k in ("Version", "Licence", "Author", "Contributors", "Updated")]
            assert all(b["top"] > 0 and b["bottom"] <= 900 for b in shown), f"not all above the fold: {found}"
        else:
            assert panel["bottom"] <= found["body"]["top"], found  # above the body
            assert abs(panel["width"] - main["width"]) < 2, found  # as wide as the text
    finally:
        driver.set_window_size(1280, 900)


_DATES = """
return [...document.querySelectorAll(arguments[0])].map(t => ({datetime: t.getAttribute('datetime'), title: t.title,
  text: t.textContent, ago: t.nextElementSibling && t.nextElementSibling.classList.contains('sr-ago')
    ? t.nextElementSibling.textContent : null}));
"""


def test_the_home_page_dates_each_recent_skill_as_a_day_with_the_exact_time_in_its_title(driver, site: str,
                                                                                          bundled: Path) -> None:
    index = json.loads((bundled / "api/v1/index.json").read_text(encoding="utf-8"))
    updated = {s["name"]: s["updated"] for s in index["skills"]}
    _load(driver, site)
    names = driver.execute_script("return [...document.querySelectorAll('#recently-updated + .sr-list li')]"
                                  ".map(li => li.querySelector('.sr-list__name').textContent)")
    dates = driver.execute_script(_DATES, "#recently-updated + .sr-list time")
    assert len(names) == len(dates) == min(10, len(updated))
    for name, date in zip(names, dates, strict=True):
        assert date["datetime"] == updated[name] and date["title"] == exact_time(updated[name]), (name, date)
        assert HUMAN_DATE.fullmatch(date["text"]) and date["text"] == human_date(updated[name]), (name, date)
        assert date["ago"] and re.fullmatch(r" \((today|yesterday|tomorrow|(in )?\d+ \w+( ago)?|last \w+|next \w+)\)",
                                            date["ago"]), date  # added by the page's script, from its clock
    raw = (bundled / "index.html").read_text(encoding="utf-8")
    assert "sr-ago" not in raw  # the build writes no relative time: it has no clock


_FOOTER = """
const footer = document.querySelector('footer.sr-footer'), r = footer && footer.getBoundingClientRect();
return footer && {text: footer.innerText, links: [...footer.querySelectorAll('a')].map(a => a.href),
                  shown: r.width > 0 && r.height > 0, scroll: [document.documentElement.scrollWidth,
                  document.documentElement.clientWidth]};
"""


def _pages(bundled: Path) -> list[str]:
    category = sorted(p.name for p in (bundled / "categories").iterdir() if p.is_dir())[0]
    return ["", "categories/", f"categories/{category}/", "tags/", "search/", f"skills/{SKILL}/",
            "skills/no-such-skill/deeper/"]


@pytest.mark.parametrize("width", (1280, 390))
def test_every_page_says_how_to_get_skillreg_and_none_scrolls_sideways(driver, site: str, bundled: Path,
                                                                       width: int) -> None:
    try:
        _viewport(driver, width)
        for path in _pages(bundled):
            _load(driver, site + path)
            found = driver.execute_script(_FOOTER)
            assert found and found["shown"], f"{path or 'home'}: no footer"
            assert SKILLREG_INSTALL in found["text"] and SKILLREG_DOCS in found["links"], (path, found)
            assert found["scroll"][0] <= found["scroll"][1], f"{path or 'home'} at {width} px scrolls sideways"
        _load(driver, site)
        get = driver.execute_script("return document.querySelector('#get-skillreg + p + pre').innerText")
        assert get.splitlines() == [SKILLREG_INSTALL, SKILLREG_UV_INSTALL]
    finally:
        driver.set_window_size(1280, 900)


_TOKENS = """
const lines = e => { const r = document.createRange(); r.selectNodeContents(e);
  return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size; };
const command = document.querySelector('.sr-install .sr-command');
return {tokens: [...command.querySelectorAll('.sr-nobr')].map(e => [e.textContent, lines(e)]), lines: lines(command)};
"""

_LIST_INDENT = """
const heading = document.querySelector(arguments[0]), list = heading.nextElementSibling;
return {heading: heading.getBoundingClientRect().left,
        items: [...list.querySelectorAll(':scope > li')].map(li => li.querySelector('a').getBoundingClientRect().left)};
"""


@pytest.mark.parametrize("width", (1280, 390))
def test_the_install_command_wraps_between_words_and_lists_start_under_their_headings(driver, site: str,
                                                                                     bundled: Path, width: int) -> None:
    try:
        _viewport(driver, width)
        _load(driver, f"{site}skills/{SKILL}/")
        found = driver.execute_script(_TOKENS)
        assert found["tokens"] == [[SKILL, 1], ["--registry", 1]], found
        if width < 500:
            assert found["lines"] > 1, found  # it does wrap on a phone: the check above saw a wrapped command
        category = sorted(p.name for p in (bundled / "categories").iterdir() if p.is_dir())[0]
        for path, heading in (("", "#recently-updated"), (f"categories/{category}/", "h1")):
            _load(driver, site + path)
            if heading == "h1":  # a category page: the list follows the counts line under the title
                heading = "article > h1 + .sr-group > .sr-counts"
            found = driver.execute_script(_LIST_INDENT, heading)
            assert found["items"] and all(abs(left - found["heading"]) < 1 for left in found["items"]), (path, found)
    finally:
        driver.set_window_size(1280, 900)


def test_install_commands_name_the_address_the_site_is_served_from(driver, unaddressed: Path) -> None:
    """A build with no base_url says so without script, and names where it is served with it."""
    raw = (unaddressed / f"skills/{SKILL}/index.html").read_text(encoding="utf-8")
    assert re.sub(r"<[^>]+>", "", raw).count("--registry &lt;registry-url&gt;/") == 1
    with serve(unaddressed, _under("/previews/local/")) as url:
        here = url + "previews/local/"
        _load(driver, f"{here}skills/{SKILL}/")
        commands = driver.execute_script("return [...document.querySelectorAll('.sr-install .sr-command')]"
                                         ".map(c => c.textContent)")
    assert commands[0] == f"skillreg install {SKILL} --registry {here}"
    assert commands[1] == f"npx skills add {here}api/v1/skills/{SKILL}"
    assert commands[2].startswith(f"curl -fsSL -o {SKILL}.zip {here}api/v1/bundles/{SKILL}/{SKILL}-")


_STYLED = """
const header = getComputedStyle(document.querySelector('.md-header')), footer = document.querySelector('.sr-footer');
const logo = getComputedStyle(document.querySelector('.sr-logo'));
return {header: header.backgroundColor, position: header.position, footer: getComputedStyle(footer).backgroundColor,
        logo: logo.webkitMaskImage.slice(0, 30), input: getComputedStyle(document.querySelector('.sr-notfound input'))
          .borderTopWidth, sheets: [...document.querySelectorAll('link[rel=stylesheet]')].length};
"""


@pytest.mark.parametrize("where", ("built", "other"))
def test_the_404_page_is_styled_wherever_it_is_served_from(driver, bundled: Path, unaddressed: Path,
                                                           where: str) -> None:
    """The bundled site was built for /skill-registry/, the other with no base_url (its links under /): each is
    served under a path it was not built for, and a missing address gets the 404 page, styled."""
    out, base = (bundled, "/mirror/of/skills/") if where == "built" else (unaddressed, "/previews/local/")
    with serve(out, _under(base)) as url:
        for missing in (base.lstrip("/") + "no-such-page/", base.lstrip("/") + "skills/gone/deeper/", "elsewhere"):
            _load(driver, url + missing)
            assert driver.find_element("tag name", "h1").text == "Page not found"
            found = driver.execute_script(_STYLED)
            assert found["header"] not in ("", "rgba(0, 0, 0, 0)") and found["position"] == "sticky", (missing, found)
            assert found["footer"] not in ("", "rgba(0, 0, 0, 0)"), (missing, found)
            assert found["logo"].startswith('url("data:image/svg+xml'), (missing, found)
            assert found["input"] == "2px" and found["sheets"] == 0, (missing, found)  # site.css, inlined
        _viewport(driver, 390)
        _load(driver, url + base.lstrip("/") + "no-such-page/")
        if where == "built":
            _screenshot(driver, "not-found-mirror-390.png")
        driver.set_window_size(1280, 900)


def test_without_script_the_page_reads_whole_and_names_the_address_it_was_built_for(driver, site: str,
                                                                                  bundled: Path) -> None:
    """Script off: the panel, the install commands (for the registry's published address), the dates and the
    body are all there, and the install tabs still switch (they are radio buttons and CSS)."""
    from selenium.webdriver.common.by import By

    built = json.loads((bundled / "api/v1/index.json").read_text(encoding="utf-8"))["registry"]["url"]
    driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        _viewport(driver, 1280)
        _load(driver, f"{site}skills/{SKILL}/")
        command = driver.find_element(By.CSS_SELECTOR, ".sr-install .sr-command")
        assert command.text == f"skillreg install {SKILL} --registry {built}"
        assert driver.find_elements(By.CSS_SELECTOR, ".sr-ago") == []
        assert HUMAN_DATE.fullmatch(driver.find_element(By.CSS_SELECTOR, ".sr-facts time").text)
        assert driver.find_element(By.CSS_SELECTOR, ".sr-safety").is_displayed()
        assert driver.find_element(By.CSS_SELECTOR, ".sr-body h1, .sr-body h2").is_displayed()
        driver.find_element(By.CSS_SELECTOR, "label[for='__tabbed_1_2']").click()
        shown = [c.text for c in driver.find_elements(By.CSS_SELECTOR, ".sr-install .sr-command") if c.is_displayed()]
        assert shown == [f"npx skills add {built}api/v1/skills/{SKILL}"]
    finally:
        driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
