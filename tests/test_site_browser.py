"""The built website in a real browser: headless Chromium, driven by selenium, against http.server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.search import rank
from conftest import REPO
from site_helpers import bundled_site, hostile_site, serve

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = REPO / "test-artifacts"
WAIT = 15  # seconds; generous for a loaded two-core machine

pytestmark = pytest.mark.skipif(not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    os.environ["SE_OFFLINE"] = "true"  # selenium-manager must never try to download a browser or a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--window-size=1280,900",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    browser.set_page_load_timeout(WAIT * 2)
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundled_site(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def site(bundled: Path) -> Iterator[str]:
    with serve(bundled) as url:
        yield url


def _wait(driver, condition, message: str):  # type: ignore[no-untyped-def]
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(condition, message)


def _result_names(driver) -> list[str]:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".sr-search__results .sr-result__name")]


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
    assert install.text.startswith(f"skillreg install {target} --registry https://")
    tree = [a.text for a in driver.find_elements(By.CSS_SELECTOR, ".sr-tree a")]
    assert "SKILL.md" in tree
    driver.find_element(By.CSS_SELECTOR, "label[for='__tabbed_1_4']").click()
    curl = driver.find_elements(By.CSS_SELECTOR, ".sr-install .tabbed-block .sr-command")[2]
    _wait(driver, lambda d: curl.is_displayed(), "the curl tab did not open")
    assert curl.text.startswith(f"curl -fsSL -o {target}.zip https://")
    _screenshot(driver, "skill.png")

    driver.find_element(By.CSS_SELECTOR, ".sr-badge--category").click()
    _wait(driver, lambda d: "/categories/" in d.current_url, "the category badge did not open the category")
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
    shot = REPO / "docs" / "screenshot-home.png"
    if not shot.exists():
        pytest.skip("docs/screenshot-home.png is added with the README's Website section")
    assert shot.stat().st_size < 300_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True, scope="module")
def _keep_home_screenshot_for_the_readme() -> Iterator[None]:
    """Set SKILLREG_README_SCREENSHOT=1 to refresh docs/screenshot-home.png from this run's home.png."""
    yield
    if os.environ.get("SKILLREG_README_SCREENSHOT") == "1" and (ARTIFACTS / "home.png").is_file():
        (REPO / "docs").mkdir(exist_ok=True)
        shutil.copyfile(ARTIFACTS / "home.png", REPO / "docs" / "screenshot-home.png")
