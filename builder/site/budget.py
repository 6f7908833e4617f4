"""What a skill page may weigh, and how its bytes split: the budget tests/site/test_site_budget.py holds on a real build
and ``python -m bench --scale N`` reports.

A page is the theme's chrome (everything outside ``<article>``: head, header tabs, footer, the theme's config and
scripts, plus that page's title, description and canonical URL) around the article. The article is the rendered
SKILL.md (the body, as long as its author made it) and the sections every page has: title, the panel (install tabs,
facts, safety summary), description, tags, file tree, frontmatter, provenance, versions and permissions.
"""

from __future__ import annotations

from dataclasses import dataclass

# The shell is ~2.55 KB whatever the skill (with the header's logo and menu button and the footer's line on how to
# get skillreg, which every page shares); the rest is the page's own title (a name of at most 64 characters),
# description (cut to 150 characters) and canonical URL: ~3.05 KB typical, ~3.15 KB for the longest name and
# description the validator allows. Before the shells, the chrome was ~9.4 KB; the footer's line added ~0.12 KB,
# and moving the theme's inline storage script to a shared file took ~0.25 KB off.
CHROME_BUDGET = 3.25 * 1024
# Sections besides the body for a typical skill (median: ~2 files, a few frontmatter fields, one version): ~7.8 KB,
# of which the panel beside the body (install, facts, safety) is ~1.7 KB. They grow with the description (up to
# 1,024 characters), files, frontmatter fields, contributors (three in the panel) and versions (at most 5 shown).
SECTIONS_BUDGET = 9 * 1024

_ARTICLE_OPEN = '<article class="md-content__inner md-typeset">'
_BODY_OPEN = '<div class="sr-body">'
_BODY_END = '<h2 id="files">'


@dataclass(frozen=True)
class PageParts:
    total: int
    chrome: int  # bytes outside the article
    body: int  # the rendered SKILL.md
    sections: int  # the rest of the article

    @property
    def within_budget(self) -> bool:
        return self.chrome <= CHROME_BUDGET and self.sections <= SECTIONS_BUDGET


def page_parts(page: bytes) -> PageParts:
    """Split a built skill page (``skills/<name>/index.html``) into chrome, body and other sections."""
    start = page.index(_ARTICLE_OPEN.encode()) + len(_ARTICLE_OPEN)
    end = page.rindex(b"</article>")
    article = page[start:end]
    body_start = article.find(_BODY_OPEN.encode())
    body_end = article.find(_BODY_END.encode())
    body = body_end - body_start if 0 <= body_start < body_end else 0
    return PageParts(len(page), len(page) - len(article), body, len(article) - body)
