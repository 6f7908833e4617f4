"""The shells: one page per kind of generated page, rendered once by mkdocs with placeholders where the values go,
and each generated page filled into its kind's shell and written."""

from __future__ import annotations

import base64
import html
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from markdown.extensions.toc import slugify

from .mkdocs_run import move_into, run_mkdocs
from .page_templates import SKILLREG_DOCS, SKILLREG_INSTALL, TEMPLATES, heading_text, truncate_text
from .plan import BODY_FILE, Page, Plan

META_DESCRIPTION_CHARS = 150  # what search engines show of a description
_TOKEN = re.compile(r"SR0([A-Z]+)0")

# The navigation pages mkdocs renders (Markdown source -> the page it becomes) and the shell of each kind of
# generated page. In a shell SR0TITLE0, SR0DESC0, SR0SLUG0, SR0PAGE0 and SR0ARTICLE0 stand for the values.
NAV_PAGES = {"Home": "index.md", "Categories": "categories/index.md", "Tags": "tags/index.md", "Search": "search.md"}
NAV_SHELLS = {"home": ("index.md", "index.html"), "categories": ("categories/index.md", "categories/index.html"),
              "tags": ("tags/index.md", "tags/index.html"), "search": ("search.md", "search/index.html")}
KIND_SHELLS = {"skill": "skills/SR0SLUG0", "category": "categories/SR0SLUG0",
               "category-page": "categories/SR0SLUG0/page/SR0PAGE0", "tag": "tags/SR0SLUG0",
               "tag-page": "tags/SR0SLUG0/page/SR0PAGE0", "collection": "collections/SR0SLUG0"}
_NAV_HIDE = {"home": ["navigation", "toc"], "search": ["toc"]}
_NAV_TITLES = {"categories": "Categories", "tags": "Tags", "search": "Search"}
_ARTICLE_MARK = "<!--SR0ARTICLE0-->"

# Placeholders of the theme's that stay empty on every page of this site (no announcement, no skip link).
_EMPTY_PARTS = ('<div data-md-component="skip">\n</div>\n', '<div data-md-component="announce">\n</div>\n')
Shell = tuple[str, ...]  # literal text and placeholder names, alternating: literal, name, literal, ...


def _nav_markdown(kind: str, title: str, article: str = _ARTICLE_MARK) -> str:
    head = f"---\n{yaml.safe_dump({'hide': _NAV_HIDE[kind]})}---\n" if kind in _NAV_HIDE else ""
    return f"{head}# {title}\n\n{article}\n"


def shell_sources(registry_title: str) -> dict[str, str]:
    """The Markdown mkdocs renders for the shells: docs-relative path -> text."""
    sources = {src: _nav_markdown(kind, heading_text(registry_title or "Skill Registry") if kind == "home"
                                  else _NAV_TITLES[kind]) for kind, (src, _) in NAV_SHELLS.items()}
    meta = yaml.safe_dump({"title": "SR0TITLE0", "description": "SR0DESC0", "template": "shell.html"})
    for rel in KIND_SHELLS.values():
        sources[rel + ".md"] = f"---\n{meta}---\n"
    return sources


def _split_shell(text: str) -> Shell:
    """Collapse the theme's indentation (a shell holds no preformatted text; the article goes in afterwards)
    and cut the page at its placeholders."""
    text = "\n".join(line.strip() for line in text.replace(_ARTICLE_MARK, "SR0ARTICLE0").splitlines() if line.strip())
    for empty in _EMPTY_PARTS:
        text = text.replace(empty, "")
    return tuple(_TOKEN.split(text + "\n"))


def fill_shell(shell: Shell, values: dict[str, str]) -> str:
    """The shell with every placeholder replaced; values are already HTML (escaped by the caller)."""
    parts = list(shell)
    for i in range(1, len(parts), 2):
        parts[i] = values[parts[i]]
    return "".join(parts)


def mkdocs_config(plan: Plan, docs: Path, site_dir: Path) -> dict[str, Any]:
    """site_templates/mkdocs.yml filled in for one build."""
    data: dict[str, Any] = yaml.safe_load((TEMPLATES / "mkdocs.yml").read_text(encoding="utf-8"))
    registry = plan.index["registry"]
    # Themes print the site name and description into attributes and titles without escaping them.
    data.update(site_name=heading_text(registry["title"] or "Skill Registry"),
                site_description=heading_text(registry["description"] or "", ""),
                docs_dir=str(docs), site_dir=str(site_dir))
    if plan.site_url:
        data["site_url"] = plan.site_url
    data["theme"]["custom_dir"] = str(TEMPLATES / "overrides")
    data["extra"] = {"skillreg_install": SKILLREG_INSTALL, "skillreg_docs": SKILLREG_DOCS}
    return data


def _mkdocs_site(plan: Plan, work: Path, sources: dict[str, str]) -> tuple[Path, tuple[str, ...]]:
    """mkdocs over ``sources`` (docs-relative path -> Markdown) and the assets; returns the built folder."""
    docs = work / "docs"
    for rel, text in sources.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    shutil.copytree(TEMPLATES / "assets", docs / "assets")
    site_dir = work / "site"
    mkdocs_yml = work / "mkdocs.yml"
    mkdocs_yml.write_text(yaml.safe_dump(mkdocs_config(plan, docs, site_dir), sort_keys=False), encoding="utf-8")
    return site_dir, run_mkdocs(mkdocs_yml)


_STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)">')
_CSS_URL = re.compile(r"url\(([\w./-]+\.(svg|png))\)")
_SOURCE_MAP = re.compile(r"/\*# sourceMappingURL=[^*]*\*/")
_IMAGE_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


def _inline_css(css: str, folder: Path) -> str:
    """A style sheet that no longer depends on where it is: its images as data: URLs, no source map."""
    def image(match: re.Match[str]) -> str:
        path = folder / match.group(1)
        if not path.is_file():
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'url("data:{_IMAGE_TYPES[match.group(2)]};base64,{data}")'
    return _CSS_URL.sub(image, _SOURCE_MAP.sub("", css.removeprefix('@charset "UTF-8";')))


def self_contained_404(site_dir: Path, site_url: str) -> None:
    """404.html with its style sheets inside it. A host serves it for any missing address at any depth, so
    mkdocs links it site-absolutely, under base_url's path: served from anywhere else (a build with no base_url
    under a sub-path, a copy at another path) those links miss and the page would be unstyled."""
    page = site_dir / "404.html"
    base = urlsplit(site_url).path or "/"
    text = page.read_text(encoding="utf-8")

    def inline(match: re.Match[str]) -> str:
        href = match.group(1)
        sheet = site_dir / href.removeprefix(base) if href.startswith(base) else None
        if sheet is None or not sheet.is_file():
            return match.group(0)
        css = sheet.read_text(encoding="utf-8")
        return match.group(0) if "</style" in css.lower() else f"<style>{_inline_css(css, sheet.parent)}</style>"
    page.write_text(_STYLESHEET.sub(inline, text), encoding="utf-8")


def render_shells(plan: Plan, work: Path) -> tuple[dict[str, Shell], tuple[str, ...]]:
    """Run mkdocs over the navigation pages and the shells; moves its output (assets, 404.html) into the
    output and returns the shells, which it takes out of the built site."""
    site_dir, warnings = _mkdocs_site(plan, work, shell_sources(plan.index["registry"]["title"] or ""))
    self_contained_404(site_dir, plan.site_url)
    shells: dict[str, Shell] = {}
    for kind, (_, built) in NAV_SHELLS.items():
        shells[kind] = _split_shell((site_dir / built).read_text(encoding="utf-8"))
        (site_dir / built).unlink()
    for kind, rel in KIND_SHELLS.items():
        shells[kind] = _split_shell((site_dir / rel / "index.html").read_text(encoding="utf-8"))
    for rel in ("skills/SR0SLUG0", "categories/SR0SLUG0", "tags/SR0SLUG0", "collections/SR0SLUG0"):
        shutil.rmtree(site_dir / rel)
    for path in sorted(site_dir.rglob("*"), reverse=True):  # folders the shells leave empty
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    move_into(site_dir, plan.root)
    return shells, warnings


def page_bytes(plan: Plan, page: Page) -> bytes:
    if page.kind in NAV_SHELLS:
        values = {"ARTICLE": page.article}
    else:
        # The description as plain words: search engines show it as text, and no markup can ride along.
        description = truncate_text(heading_text(page.description, ""), META_DESCRIPTION_CHARS)
        values = {"TITLE": html.escape(page.title), "DESC": html.escape(description), "SLUG": page.slug,
                  "PAGE": str(page.number),
                  "ARTICLE": f'<h1 id="{slugify(page.heading, "-")}">{html.escape(page.heading)}</h1>\n{page.article}'}
    return fill_shell(plan.shells[page.kind], values).encode("utf-8")


def write_page(plan: Plan, page: Page) -> None:
    path = plan.root / page.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(page_bytes(plan, page))
    if page.body is not None:
        (path.parent / BODY_FILE).write_bytes(page.body)
