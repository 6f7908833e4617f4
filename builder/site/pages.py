"""The website: mkdocs-material renders the few navigation pages and one *shell* per kind of page; Python fills
the shells with each skill, category and tag page.

The pages are generated from what the build has already written (``api/v1/index.json`` and the per-skill detail
documents), so the site shows exactly what clients download; each skill's body comes rendered by the worker that
published the skill (``bodies``), so no page worker parses a SKILL.md. mkdocs runs once per build
over a handful of pages (home, categories, tags, search, 404 and the shells, whose title, description, address
and article are placeholders), and not at all on a rebuild whose templates and settings are unchanged: the
shells are kept in the output's state. A skill page is its shell with the values filled in, so it carries the
theme's styles and scripts but none of its repeated chrome. A rebuild writes only the pages a change touches
and returns them as units for the build to commit. Skill pages stay out of the navigation and
mkdocs-material's full-text search is off: the site searches the sharded index under ``api/v1/search/`` with
``assets/search.js``, which ranks exactly like builder/core/search.py and fetches only the files a query needs.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import logging
import math
import os
import posixpath
import re
import shutil
import tempfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import jinja2
import yaml
from markdown.extensions.toc import slugify
from markupsafe import Markup

from .. import __version__
from ..core.config import RegistryConfig
from ..core.errors import BuildError
from ..core.model import SLUG
from ..core.fs import write_atomic
from ..core.search import SHARDS_INDEX_PATH
from ..core.urls import API_ROOT, INDEX_PATH, declared_author, detail_path, optional_site_file, versions_path
from ..core.workers import default_jobs, run_parallel
from . import bodies, sitemaps
from .mkdocs_run import move_into, run_mkdocs
from .render import BodyRenderer
from .sitemaps import robots_txt, sitemap_files


def _templates() -> Path:
    """The site templates: inside the package in a wheel (pyproject maps site_templates/ to
    builder.site.templates), at the repository's top in a source checkout or editable install."""
    here = Path(__file__).resolve().parent
    packaged = here / "templates"
    return packaged if packaged.is_dir() else here.parents[1] / "site_templates"


TEMPLATES = _templates()
PAGES = TEMPLATES / "pages"
RECENT = 10
PAGE_VERSIONS = 5  # the newest versions listed on a skill page; versions.json has them all
PAGE_SIZE = 100  # skills listed on one category or tag page; longer listings go on to page/2/, page/3/, ...
LISTED_DESCRIPTION_CHARS = 200
META_DESCRIPTION_CHARS = 150  # what search engines show of a description
TEMPLATES_CACHE = "site-templates"  # in the state folder: the page templates compiled
SHELLS_STATE = "site-shells.json"  # in the output's state folder: the shells and the hash of what made them
BODY_FILE = "skill-md.html.gz"  # with publish.page_body: fetched, beside the skill page: its body, gzip-compressed
_HEADING_UNSAFE = re.compile(r"[^\w .,:;'/+-]+")
_TOKEN = re.compile(r"SR0([A-Z]+)0")
# Top-level entries the website writes; a full rebuild replaces each (sitemap parts: core.urls.optional_site_file).
SITE_ENTRIES = ("404.html", "assets", "categories", "index.html", "robots.txt", "search", "sitemap.xml", "skills",
                "tags")


@dataclass(frozen=True)
class SiteResult:
    pages: int  # pages of the whole site (home, search, indexes, categories, tags, skills)
    skills: int
    warnings: tuple[str, ...]  # what mkdocs logged at WARNING or above
    # Paths relative to the output that this build wrote or that must go: on a rebuild only what changed.
    units: tuple[str, ...] = ()
    written: int = 0  # pages this build wrote


# ---------------------------------------------------------------------------------------------------- templates

def _filesize(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    for unit in ("KB", "MB", "GB"):
        size /= 1024  # type: ignore[assignment]
        if size < 1024 or unit == "GB":
            return f"{size:.1f} {unit}"
    raise AssertionError("unreachable")


def _truncate(text: str, limit: int = LISTED_DESCRIPTION_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rsplit(" ", 1)[0] + "…"


def heading_text(text: str, empty: str = "Untitled") -> str:
    """Text safe for a Markdown heading: mkdocs turns headings into page titles, which themes print unescaped."""
    return " ".join(_HEADING_UNSAFE.sub(" ", text).split()) or empty


@functools.lru_cache(maxsize=65536)  # a registry's tags repeat: 60,000 skills carry a few thousand distinct ones
def tag_slug(tag: str) -> str:
    """The folder name of a tag's page: lower-case letters, digits and hyphens, stable for any input."""
    slug = "-".join(t for t in re.split(r"[^a-z0-9]+", tag.lower()) if t)
    return slug if slug and len(slug) <= 64 else "tag-" + hashlib.sha256(tag.encode("utf-8")).hexdigest()[:12]


def page_environment(cache: Path | None = None) -> jinja2.Environment:
    """The page templates; with ``cache``, their compiled code is kept there (checked against each template's
    source), so a rebuild does not compile them again."""
    bytecode = None
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        bytecode = jinja2.FileSystemBytecodeCache(str(cache))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(PAGES), autoescape=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=False, bytecode_cache=bytecode)
    env.filters.update(filesize=_filesize, truncate_text=_truncate, heading=heading_text,
                       urlpath=lambda p: quote(p, safe="/"), basename=posixpath.basename)
    return env


# ------------------------------------------------------------------------------------------------------ shells

# The navigation pages mkdocs renders (Markdown source -> the page it becomes) and the shell of each kind of
# generated page. In a shell SR0TITLE0, SR0DESC0, SR0SLUG0, SR0PAGE0 and SR0ARTICLE0 stand for the values.
NAV_PAGES = {"Home": "index.md", "Categories": "categories/index.md", "Tags": "tags/index.md", "Search": "search.md"}
NAV_SHELLS = {"home": ("index.md", "index.html"), "categories": ("categories/index.md", "categories/index.html"),
              "tags": ("tags/index.md", "tags/index.html"), "search": ("search.md", "search/index.html")}
KIND_SHELLS = {"skill": "skills/SR0SLUG0", "category": "categories/SR0SLUG0",
               "category-page": "categories/SR0SLUG0/page/SR0PAGE0", "tag": "tags/SR0SLUG0",
               "tag-page": "tags/SR0SLUG0/page/SR0PAGE0"}
_NAV_HIDE = {"home": ["navigation", "toc"], "search": ["toc"]}
_NAV_TITLES = {"categories": "Categories", "tags": "Tags", "search": "Search"}
_ARTICLE_MARK = "<!--SR0ARTICLE0-->"

# Placeholders of the theme's that stay empty on every page of this site (no announcement, no skip link).
_EMPTY_PARTS = ('<div data-md-component="skip">\n</div>\n', '<div data-md-component="announce">\n</div>\n')
Shell = tuple[str, ...]  # literal text and placeholder names, alternating: literal, name, literal, ...


def _nav_markdown(kind: str, title: str, article: str = _ARTICLE_MARK) -> str:
    head = f"---\n{yaml.safe_dump({'hide': _NAV_HIDE[kind]})}---\n" if kind in _NAV_HIDE else ""
    return f"{head}# {title}\n\n{article}\n"


def _shell_sources(registry_title: str) -> dict[str, str]:
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


# ------------------------------------------------------------------------------------------------- page data

@dataclass(frozen=True)
class _Page:
    """One generated page: the file it is written to and what goes into its shell."""

    path: str  # relative to the output, e.g. skills/<name>/index.html
    unit: str  # what the build commits for it: the page's own folder, or the file for a folder's first page
    kind: str
    title: str
    description: str
    article: str
    heading: str = ""  # the h1 of a generated kind (the navigation pages take theirs from mkdocs)
    slug: str = ""
    number: int = 0
    body: bytes | None = None  # a fetched body: the page's rendered SKILL.md, written as BODY_FILE beside it
    rendering: str = ""  # the file of the state's ``bodies`` folder the body was read from


@dataclass(frozen=True)
class _Plan:
    """Everything the pages need, sent once to each worker process."""

    api_roots: tuple[Path, ...]  # folders holding api/, searched in order (a rebuild stages only changed skills)
    root: Path  # the output being written
    index: dict[str, Any]  # api/v1/index.json
    names: tuple[str, ...]  # skills that get a page
    site_url: str
    max_frontmatter_bytes: int
    shells: dict[str, Shell] = field(default_factory=dict)
    fetched_body: bool = False  # publish.page_body: fetched (the page loads its body from BODY_FILE)
    bodies: Path | None = None  # the state's folder of rendered bodies (``bodies``), when there is a state folder

    @property
    def categories(self) -> dict[str, dict[str, Any]]:
        """Categories whose slug can name a folder (registry.yaml does not check the form of a slug)."""
        return {c["slug"]: c for c in self.index["categories"] if SLUG.match(c["slug"])}


def _read_api(plan: _Plan, rel: str) -> bytes:
    for root in plan.api_roots:
        if (root / rel).is_file():
            return (root / rel).read_bytes()
    raise BuildError(f"{rel} is missing from the published API")


def _file_tree(files: Sequence[dict[str, Any]], root: str) -> list[dict[str, Any]]:
    """Nested folders and files, in the API's file order; a file links to its raw copy when one is published."""
    top: list[dict[str, Any]] = []
    folders: dict[str, list[dict[str, Any]]] = {"": top}
    for f in files:
        parts = f["path"].split("/")
        parent = ""
        for depth, part in enumerate(parts[:-1]):
            path = "/".join(parts[:depth + 1])
            if path not in folders:
                folders[path] = []
                folders[parent].append({"name": part, "children": folders[path]})
            parent = path
        href = root + quote(f["raw"], safe="/") if f.get("raw") else None
        folders[parent].append({"name": parts[-1], "children": None, "href": href, "size": f["size"],
                                "executable": f["executable"]})
    return top


def _frontmatter_rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            rows.extend((f"{key}.{k}", _scalar(v)) for k, v in value.items())
        else:
            rows.append((key, _scalar(value)))
    return rows


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _http_url(url: Any) -> str | None:
    return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None


def _skill_page(plan: _Plan, env: jinja2.Environment, renderer: BodyRenderer, name: str) -> _Page:
    detail = json.loads(_read_api(plan, detail_path(name)))
    root = bodies.PAGE_ROOT
    raw = [f["path"] for f in detail["files"] if f.get("raw")]
    raw_urls = bodies.raw_urls(name, raw)
    prov = detail["provenance"]
    site_url = plan.site_url or "<registry-url>/"
    body, packed, rendering = bodies.page_body(plan.bodies, renderer, detail, raw, functools.partial(_read_api, plan),
                                               plan.max_frontmatter_bytes, plan.fetched_body)
    fetched = plan.fetched_body
    article = env.get_template("skill.html").render(
        s=detail, root=root, body=Markup(body), body_src=BODY_FILE if fetched else None,
        category=plan.categories.get(detail["category"] or ""),
        tags=[{"name": t, "slug": tag_slug(t)} for t in detail["tags"]],
        perms=detail["permissions"], bundles=detail["bundles"], prov=prov,
        site_url=site_url, zip_url=site_url + quote(detail["bundles"]["zip"]["path"]),
        files=_file_tree(detail["files"], root), file_count=len(detail["files"]), raw_urls=raw_urls,
        frontmatter=_frontmatter_rows(detail["frontmatter"]),
        source_url=_http_url(prov.get("source_url")), history_url=_http_url(prov.get("history_url")),
        detail_path=detail_path(name), author=declared_author(detail["frontmatter"]),
        **_versions(plan, name))
    return _Page(f"skills/{name}/index.html", f"skills/{name}", "skill", name, detail["description"], article,
                 heading=name, slug=name, body=packed if fetched else None, rendering=rendering)


def _versions(plan: _Plan, name: str) -> dict[str, Any]:
    """The newest few versions for the page (the page stays small however long the history is)."""
    try:
        doc = json.loads(_read_api(plan, versions_path(name)))
    except BuildError:  # an output written before versions were published
        return {"versions": [], "versions_total": 0, "versions_path": versions_path(name)}
    repo = (plan.index["source"].get("repository") or "").rstrip("/")
    shown = [{**v, "commit_url": _http_url(f"{repo}/commit/{v['commit']}") if repo and v["commit"] else None}
             for v in doc["versions"][:PAGE_VERSIONS]]
    return {"versions": shown, "versions_total": len(doc["versions"]), "versions_path": versions_path(name)}


@dataclass(frozen=True)
class _Groups:
    """Which skills each category and tag page lists, from one index."""

    categories: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]  # slug -> (category, members)
    tags: dict[str, tuple[str, list[dict[str, Any]]]]  # slug -> (tag as first written, members)
    skills: list[dict[str, Any]]

    def of(self, row: dict[str, Any]) -> set[tuple[str, str]]:
        """The (section, slug) of every group page that lists ``row``."""
        found = {("tags", tag_slug(t)) for t in row["tags"]}
        if row["category"] in self.categories:
            found.add(("categories", row["category"]))
        return found

    def pages(self, section: str, slug: str) -> int:
        """How many pages the group's listing takes (0: the group has no page)."""
        group = (self.categories if section == "categories" else self.tags).get(slug)
        return 0 if group is None else max(1, math.ceil(len(group[1]) / PAGE_SIZE))


def _groups(index: dict[str, Any], categories: dict[str, dict[str, Any]]) -> _Groups:
    skills = [s for s in index["skills"] if SLUG.match(s["name"])]
    by_category: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
        slug: (c, []) for slug, c in categories.items()}
    by_tag: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for s in skills:
        if s["category"] in by_category:
            by_category[s["category"]][1].append(s)
        for tag in s["tags"]:
            by_tag.setdefault(tag_slug(tag), (tag, []))[1].append(s)
    return _Groups(by_category, dict(sorted(by_tag.items())), skills)


def _listing_url(section: str, slug: str, number: int) -> str:
    return f"{section}/{slug}/" + (f"page/{number}/" if number > 1 else "")


def _group_pages(env: jinja2.Environment, groups: _Groups, section: str, slug: str) -> list[_Page]:
    """Every page of one category's or tag's listing, PAGE_SIZE skills to a page."""
    count = groups.pages(section, slug)
    pages: list[_Page] = []
    for number in range(1, count + 1):
        root = "../../" if number == 1 else "../../../../"
        pager = None if count == 1 else {
            "number": number, "count": count, "first": root + _listing_url(section, slug, 1),
            "previous": root + _listing_url(section, slug, number - 1),
            "next": root + _listing_url(section, slug, number + 1), "last": root + _listing_url(section, slug, count)}
        suffix = f" (page {number} of {count})" if number > 1 else ""
        kind = ("category" if section == "categories" else "tag") + ("-page" if number > 1 else "")
        path = _listing_url(section, slug, number) + "index.html"
        unit = path if number == 1 else path.removesuffix("/index.html")
        if section == "categories":
            category, members = groups.categories[slug]
            article = env.get_template("category.html").render(
                root=root, category=category, total=len(members), pages=pager,
                skills=members[(number - 1) * PAGE_SIZE:number * PAGE_SIZE])
            heading = category["title"]
            description = category["description"] or f"Skills in the {category['title']} category"
        else:
            name, members = groups.tags[slug]
            tag = {"slug": slug, "name": name, "count": len(members)}
            article = env.get_template("tag.html").render(
                root=root, tag=tag, total=len(members), pages=pager,
                skills=members[(number - 1) * PAGE_SIZE:number * PAGE_SIZE])
            heading = f"Tag: {slug}"
            description = f"Skills tagged {name}"
        pages.append(_Page(path, unit, kind, heading + suffix, description, article, heading=heading, slug=slug,
                           number=number))
    return pages


def _nav_pages(plan: _Plan, env: jinja2.Environment, groups: _Groups) -> list[_Page]:
    """Home, the categories and tags indexes, and search."""
    cats = [dict(c, count=len(members)) for c, members in groups.categories.values()]
    tags = [{"slug": slug, "name": name, "count": len(members)} for slug, (name, members) in groups.tags.items()]
    skills = groups.skills
    recent = sorted(skills, key=lambda s: (s["updated"] or "", s["name"]), reverse=True)[:RECENT]
    registry = plan.index["registry"]
    home = env.get_template("home.html").render(
        root="", registry=registry, categories=cats, recent=recent,
        source_url=_http_url(plan.index["source"].get("repository")),
        counts={"skills": len(skills), "categories": sum(1 for c in cats if c["count"]),
                "tags": len(tags), "files": sum(s["files"] for s in skills)})
    return [
        _Page("index.html", "index.html", "home", registry["title"] or "Skill Registry", "", home),
        _Page("categories/index.html", "categories/index.html", "categories", "Categories", "",
              env.get_template("categories.html").render(categories=cats, root="../")),
        _Page("tags/index.html", "tags/index.html", "tags", "Tags", "",
              env.get_template("tags.html").render(tags=tags, root="../")),
        _Page("search/index.html", "search/index.html", "search", "Search", "",
              env.get_template("search.html").render(root="../", categories=cats)),
    ]


def _page_bytes(plan: _Plan, page: _Page) -> bytes:
    if page.kind in NAV_SHELLS:
        values = {"ARTICLE": page.article}
    else:
        # The description as plain words: search engines show it as text, and no markup can ride along.
        description = _truncate(heading_text(page.description, ""), META_DESCRIPTION_CHARS)
        values = {"TITLE": html.escape(page.title), "DESC": html.escape(description), "SLUG": page.slug,
                  "PAGE": str(page.number),
                  "ARTICLE": f'<h1 id="{slugify(page.heading, "-")}">{html.escape(page.heading)}</h1>\n{page.article}'}
    return fill_shell(plan.shells[page.kind], values).encode("utf-8")


def _write_page(plan: _Plan, page: _Page) -> None:
    path = plan.root / page.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_page_bytes(plan, page))
    if page.body is not None:
        (path.parent / BODY_FILE).write_bytes(page.body)


# ------------------------------------------------------------------------------------------------------- mkdocs

def mkdocs_config(plan: _Plan, docs: Path, site_dir: Path) -> dict[str, Any]:
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
    return data


def _mkdocs_site(plan: _Plan, work: Path, sources: dict[str, str]) -> tuple[Path, tuple[str, ...]]:
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


def _shells_key(plan: _Plan) -> str:
    """Everything the shells and mkdocs' own output (assets, 404.html) depend on, and the sizes every listing
    and sitemap is cut to: when any differs, a rebuild writes every page."""
    import material
    import mkdocs

    digest = hashlib.sha256()
    config = mkdocs_config(plan, Path("docs"), Path("site"))
    digest.update(json.dumps([__version__, mkdocs.__version__, getattr(material, "__version__", ""), config,
                              _shell_sources(plan.index["registry"]["title"] or ""),
                              [PAGE_SIZE, sitemaps.SITEMAP_MAX_URLS, sitemaps.SITEMAP_MAX_BYTES]], sort_keys=True).encode())
    for path in sorted(p for p in TEMPLATES.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(TEMPLATES).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _load_shells(state: Path | None, key: str) -> dict[str, Shell] | None:
    if state is None:
        return None
    try:
        saved = json.loads((state / SHELLS_STATE).read_bytes())
        if saved.get("key") == key:
            return {kind: tuple(parts) for kind, parts in saved["shells"].items()}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        pass
    return None


def _render_shells(plan: _Plan, work: Path) -> tuple[dict[str, Shell], tuple[str, ...]]:
    """Run mkdocs over the navigation pages and the shells; moves its output (assets, 404.html) into the
    output and returns the shells, which it takes out of the built site."""
    site_dir, warnings = _mkdocs_site(plan, work, _shell_sources(plan.index["registry"]["title"] or ""))
    shells: dict[str, Shell] = {}
    for kind, (_, built) in NAV_SHELLS.items():
        shells[kind] = _split_shell((site_dir / built).read_text(encoding="utf-8"))
        (site_dir / built).unlink()
    for kind, rel in KIND_SHELLS.items():
        shells[kind] = _split_shell((site_dir / rel / "index.html").read_text(encoding="utf-8"))
    for rel in ("skills/SR0SLUG0", "categories/SR0SLUG0", "tags/SR0SLUG0"):
        shutil.rmtree(site_dir / rel)
    for path in sorted(site_dir.rglob("*"), reverse=True):  # folders the shells leave empty
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    move_into(site_dir, plan.root)
    return shells, warnings


def _site_urls(groups: _Groups, names: Sequence[str]) -> list[str]:
    urls = ["", "categories/", "tags/", "search/"]
    for section, table in (("categories", groups.categories), ("tags", groups.tags)):
        for slug in sorted(table):
            urls += [_listing_url(section, slug, n) for n in range(1, groups.pages(section, slug) + 1)]
    return urls + [f"skills/{name}/" for name in names]


def _top_files(plan: _Plan, groups: _Groups) -> dict[str, bytes | None]:
    """The sitemap files and robots.txt of this build (None: the file must not exist)."""
    if not plan.site_url:
        return {}
    files: dict[str, bytes | None] = dict(sitemap_files(plan.site_url, _site_urls(groups, plan.names)))
    files["robots.txt"] = robots_txt(plan.site_url)
    return files


# ---------------------------------------------------------------------------------------------- skill workers

_WORKER: dict[str, Any] = {}


def _init_pages_worker(plan: _Plan, cache: Path | None) -> None:
    _WORKER.update(plan=plan, env=page_environment(cache), renderer=BodyRenderer())


def _write_skill_pages(names: Sequence[str]) -> list[str]:
    """Write the pages of ``names``; returns the renderings of the state they took their bodies from."""
    plan: _Plan = _WORKER["plan"]
    used = []
    for name in names:
        page = _skill_page(plan, _WORKER["env"], _WORKER["renderer"], name)
        _write_page(plan, page)
        if page.rendering:
            used.append(page.rendering)
    return used


def _write_skills(plan: _Plan, names: Sequence[str], jobs: int | None, cache: Path | None,
                  changed: Collection[str] | None = None) -> None:
    """Write the skill pages of ``names``, then remove the state's renderings no page needs any more (those of
    ``changed`` skills only, and of skills gone, when only some pages are written)."""
    jobs = default_jobs(len(names)) if jobs is None else jobs
    chunks = [list(names[i:i + 50]) for i in range(0, len(names), 50)]
    used = run_parallel(_write_skill_pages, chunks, initializer=_init_pages_worker, initargs=(plan, cache),
                        jobs=max(1, min(jobs, len(chunks))))
    if plan.bodies is not None:
        bodies.prune(plan.bodies, {rendering for chunk in used for rendering in chunk}, set(plan.names), changed)


# --------------------------------------------------------------------------------------------------- entry point

def _plan(config: RegistryConfig, root: Path, index: dict[str, Any],
          api_roots: Sequence[Path] | None = None, state: Path | None = None) -> _Plan:
    if not (root / SHARDS_INDEX_PATH).is_file():
        raise BuildError(f"{SHARDS_INDEX_PATH} is missing; the website searches it")
    site_url = index["registry"]["url"] or ""
    if site_url and not site_url.endswith("/"):
        site_url += "/"
    names = tuple(s["name"] for s in index["skills"] if SLUG.match(s["name"]))
    return _Plan(tuple(api_roots or (root,)), root, index, names, site_url, config.limits.max_frontmatter_bytes,
                 fetched_body=config.publish.page_body == "fetched",
                 bodies=state / bodies.BODIES_STATE if state is not None else None)


def write_site(config: RegistryConfig, root: Path, report: Any = None, *,
               jobs: int | None = None, api_roots: Sequence[Path] | None = None, previous: Path | None = None,
               changed: Collection[str] | None = None, state: Path | None = None) -> SiteResult:
    """Write the website into ``root`` beside the ``api/`` already published there (``report``, the build's
    validation report, is accepted for the build's call and not needed: the API already holds what is valid).

    ``state`` is where the shells are kept and where the build's workers left the skills' rendered bodies; without
    it each page worker renders its skills' bodies from SKILL.md as published. With ``previous`` (the output as it
    stands) and ``changed`` (skills written or removed since), only the pages those skills touch are written and the result's ``units`` name
    them; the output then reads exactly as a build from scratch would. Otherwise every page is written.
    """
    index = json.loads((root / INDEX_PATH).read_bytes())
    plan = _plan(config, root, index, api_roots=api_roots, state=state)
    groups = _groups(index, plan.categories)
    key = _shells_key(plan)
    if previous is not None and changed is not None and (previous / INDEX_PATH).is_file():
        shells = _load_shells(state, key)
        if shells is not None:
            return _write_changed(_with_shells(plan, shells), groups, previous, changed, jobs,
                                  state / TEMPLATES_CACHE if state is not None else None)
    work = Path(tempfile.mkdtemp(prefix=".site-work-", dir=root)).resolve()
    try:
        shells, warnings = _render_shells(plan, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if state is not None:
        write_atomic(state / SHELLS_STATE, json.dumps({"key": key, "shells": shells}, sort_keys=True).encode())
    plan = _with_shells(plan, shells)
    cache = state / TEMPLATES_CACHE if state is not None else None
    _write_skills(plan, plan.names, jobs, cache)
    env = page_environment(cache)
    pages = _nav_pages(plan, env, groups)
    for section, table in (("categories", groups.categories), ("tags", groups.tags)):
        for slug in table:
            pages += _group_pages(env, groups, section, slug)
    for page in pages:
        _write_page(plan, page)
    for name, data in _top_files(plan, groups).items():
        if data is not None:
            (root / name).write_bytes(data)
    entries = set(SITE_ENTRIES)
    units = {p.name for p in root.iterdir() if p.name in entries or optional_site_file(p.name)}
    if previous is not None and previous.is_dir():
        units |= {p.name for p in previous.iterdir() if p.name in entries or optional_site_file(p.name)}
    return SiteResult(pages=len(pages) + len(plan.names), skills=len(plan.names), warnings=warnings,
                      units=tuple(sorted(units)), written=len(pages) + len(plan.names))


def _with_shells(plan: _Plan, shells: dict[str, Shell]) -> _Plan:
    return replace(plan, shells=shells)


def _published_pages(previous: Path, section: str, slug: str) -> int:
    """How many pages of a category's or tag's listing ``previous`` holds."""
    folder = previous / section / slug
    if not (folder / "index.html").is_file():
        return 0
    return 1 + sum(1 for _ in (folder / "page").glob("*/index.html"))


def _previous_rows(previous: Path, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """What the listings showed of each skill that had a page in ``previous`` (from its detail document)."""
    rows = {}
    for name in sorted(names):
        if not (previous / "skills" / name / "index.html").is_file():
            continue
        try:
            detail = json.loads((previous / detail_path(name)).read_bytes())
            rows[name] = {"name": name, "category": detail["category"], "tags": list(detail["tags"]),
                          "description": detail["description"]}
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return rows


def _listed(row: dict[str, Any]) -> tuple[Any, ...]:
    """What a category or tag listing shows of a skill, and where."""
    return row["category"], list(row["tags"]), row["description"]


def _write_changed(plan: _Plan, groups: _Groups, previous: Path, changed: Collection[str],
                   jobs: int | None, templates_cache: Path | None) -> SiteResult:
    """A rebuild: the changed skills' pages, the category and tag pages that list them before or after, the
    navigation pages and sitemaps, each written only where its bytes differ from ``previous``."""
    root = plan.root
    changed = set(changed)
    named = set(plan.names)
    units: set[str] = {f"skills/{name}" for name in changed if SLUG.match(name)}
    _write_skills(plan, sorted(n for n in changed if n in named), jobs, templates_cache, changed)
    before_rows = _previous_rows(previous, changed)
    after_rows = {s["name"]: s for s in groups.skills if s["name"] in changed}
    touched: set[tuple[str, str]] = set()
    for name in changed:
        old, new = before_rows.get(name), after_rows.get(name)
        if old is not None and new is not None and _listed(old) == _listed(new):
            continue  # listed as before (a change to its body or files): every listing reads the same
        for row in (old, new):
            if row is not None:
                touched |= groups.of(row)
    same_urls = before_rows.keys() == after_rows.keys()  # no page added or removed, so far
    env = page_environment(templates_cache)
    pages = _nav_pages(plan, env, groups)
    for section, slug in sorted(touched):
        pages += _group_pages(env, groups, section, slug)
        before, after = _published_pages(previous, section, slug), groups.pages(section, slug)
        same_urls = same_urls and before == after
        if after == 0 and before:
            units.add(f"{section}/{slug}")  # the group has no page any more
        elif after <= 1 < before:
            units.add(f"{section}/{slug}/page")
        else:
            units |= {f"{section}/{slug}/page/{n}" for n in range(after + 1, before + 1)}
    written = len([n for n in changed if n in named])
    for page in pages:
        data = _page_bytes(plan, page)
        if _differs(previous / page.path, data):
            (root / page.path).parent.mkdir(parents=True, exist_ok=True)
            (root / page.path).write_bytes(data)
            units.add(page.unit)
            written += 1
    # The sitemaps list every page: unchanged unless a page was added or removed.
    top = {} if same_urls else _top_files(plan, groups)
    for name in [] if same_urls else [p.name for p in previous.iterdir() if optional_site_file(p.name)]:
        top.setdefault(name, None)
    for name, blob in top.items():
        if blob is None:
            if os.path.lexists(previous / name):
                units.add(name)
        elif _differs(previous / name, blob):
            (root / name).write_bytes(blob)
            units.add(name)
    return SiteResult(pages=len(_site_urls(groups, plan.names)), skills=len(plan.names), warnings=(),
                      units=tuple(sorted(units)), written=written)


def _differs(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() != data
    except OSError:
        return True
