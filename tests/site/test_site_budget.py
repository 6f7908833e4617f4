"""Skill pages keep their byte budget (builder/site/budget.py) on a real build: chrome and non-body sections."""

from __future__ import annotations

from pathlib import Path

from helpers import write_tree
from helpers.build import make_registry

from builder.core.config import load_config
from builder.publish.build import BuildOptions, build
from builder.site.budget import CHROME_BUDGET, SECTIONS_BUDGET, page_parts


def test_every_bundled_skill_page_keeps_the_budget(bundled: Path) -> None:
    pages = sorted(bundled.glob("skills/*/index.html"))
    assert len(pages) >= 5
    for page in pages:
        parts = page_parts(page.read_bytes())
        assert parts.body > 1000, page  # the split found the rendered SKILL.md
        assert parts.chrome <= CHROME_BUDGET, (page, parts)
        assert parts.sections <= SECTIONS_BUDGET, (page, parts)
        assert parts.within_budget


def test_category_and_tag_pages_carry_no_more_chrome_than_skill_pages(bundled: Path) -> None:
    pages = sorted(bundled.glob("categories/*/index.html")) + sorted(bundled.glob("tags/*/index.html"))
    assert len(pages) > 10
    for page in pages:
        assert page_parts(page.read_bytes()).chrome <= CHROME_BUDGET, page


def test_the_longest_name_and_description_stay_inside_the_chrome_budget(tmp_path: Path) -> None:
    """The chrome holds the page's own title, description and canonical URL: the largest the validator allows."""
    registry = make_registry(tmp_path / "repo", ["csv-profiler"], commit=False)
    name = "a" + "-b" * 31 + "c"  # 64 characters
    description = ("Quotes \" and ' & <angle> brackets, " * 40)[:1024]
    write_tree(registry / "skills" / name, {"SKILL.md": (
        f"---\nname: {name}\ndescription: '{description.replace(chr(39), chr(39) * 2)}'\nmetadata:\n"
        "  category: data\n---\n# Body\n\nText.\n")})
    out = tmp_path / "out"
    build(load_config(registry / "registry.yaml"), out, BuildOptions(keep_going=True))
    parts = page_parts((out / "skills" / name / "index.html").read_bytes())
    assert parts.chrome <= CHROME_BUDGET, parts


def test_the_split_finds_an_older_pages_chrome_over_budget() -> None:
    """The budget can fail: a page with the theme's full chrome (~9 KB before the shells) is over it."""
    chrome = b"<html><nav>" + b"x" * 9000 + b"</nav>"
    article = b'<article class="md-content__inner md-typeset"><div class="sr-body">body</div><h2 id="files">'
    parts = page_parts(chrome + article + b"</article></html>")
    assert parts.chrome > CHROME_BUDGET and not parts.within_budget
