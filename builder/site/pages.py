"""The website: Markdown pages rendered from site_templates/ out of the published API, then built by mkdocs.

The pages are generated from what the build has already written (``api/v1/index.json``, the per-skill detail
documents and raw SKILL.md files), so the site shows exactly what clients download. Skill pages stay out of the
navigation and mkdocs-material's full-text search is off: the site searches the sharded index under
``api/v1/search/`` with ``assets/search.js``, which ranks exactly like builder/core/search.py and fetches only
the files a query needs. That keeps each page, and each search, small however many skills there are.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import logging
import os
import posixpath
import re
import shutil
import tempfile
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence
from urllib.parse import quote, urlsplit

import jinja2
import yaml
from markupsafe import Markup

from ..core.urls import API_ROOT, INDEX_PATH, declared_author, detail_path, versions_path
from ..core.config import RegistryConfig
from ..core.errors import BuildError
from ..core.frontmatter import parse_skill_md
from ..core.search import SHARDS_INDEX_PATH
from .hooks import fragments_path
from .render import BodyRenderer
from ..core.workers import default_jobs


def _templates() -> Path:
    """The site templates: inside the package in a wheel (pyproject maps site_templates/ to
    builder.site.templates), at the repository's top in a source checkout or editable install."""
    here = Path(__file__).resolve().parent
    packaged = here / "templates"
    return packaged if packaged.is_dir() else here.parents[1] / "site_templates"


TEMPLATES = _templates()
PAGES = TEMPLATES / "pages"
# Below this many skills a pool of processes costs more than it saves (as in build.py).
RECENT = 10
PAGE_VERSIONS = 5  # the newest versions listed on a skill page; versions.json has them all
SHM = "/dev/shm"
SHM_MARGIN = 256 * 1024 * 1024  # left free for everything else that uses shared memory
LISTED_DESCRIPTION_CHARS = 200
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_HEADING_UNSAFE = re.compile(r"[^\w .,:;'/+-]+")


@dataclass(frozen=True)
class SiteResult:
    pages: int  # Markdown pages mkdocs built
    skills: int
    warnings: tuple[str, ...]  # what mkdocs logged at WARNING or above


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


def tag_slug(tag: str) -> str:
    """The folder name of a tag's page: lower-case letters, digits and hyphens, stable for any input."""
    slug = "-".join(t for t in re.split(r"[^a-z0-9]+", tag.lower()) if t)
    return slug if slug and len(slug) <= 64 else "tag-" + hashlib.sha256(tag.encode("utf-8")).hexdigest()[:12]


def page_environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(PAGES), autoescape=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=False)
    env.filters.update(filesize=_filesize, truncate_text=_truncate, heading=heading_text,
                       urlpath=lambda p: quote(p, safe="/"), basename=posixpath.basename)
    return env


# ------------------------------------------------------------------------------------------------- page data

@dataclass(frozen=True)
class _Plan:
    """Everything a shard of the site needs, sent once to each worker process."""

    api_roots: tuple[Path, ...]  # folders holding api/, searched in order (a rebuild stages only changed skills)
    work: Path  # beside the output (same file system, so pages are moved in by rename): site/ per shard
    scratch: Path  # the Markdown, fragments and mkdocs.yml of each shard: in memory where the system allows
    index: dict[str, Any]  # api/v1/index.json
    names: tuple[str, ...]  # skills that get a page
    site_url: str
    max_frontmatter_bytes: int
    naive: bool  # the benchmark's baseline: HTML kept in the Markdown, every page in the nav, full-text search

    @property
    def categories(self) -> dict[str, dict[str, Any]]:
        """Categories whose slug can name a folder (registry.yaml does not check the form of a slug)."""
        return {c["slug"]: c for c in self.index["categories"] if _SLUG.match(c["slug"])}


def _read_api(plan: _Plan, rel: str) -> bytes:
    for root in plan.api_roots:
        if (root / rel).is_file():
            return (root / rel).read_bytes()
    raise BuildError(f"{rel} is missing from the published API")


def _skill_md_bytes(plan: _Plan, detail: dict[str, Any]) -> bytes:
    """SKILL.md as published: its raw copy, or (``publish.raw_files: linked`` copies none) the zip's entry."""
    entry: dict[str, Any] = next((f for f in detail["files"] if f["path"] == detail["skill_md"]), {})
    if "raw" in entry:
        return _read_api(plan, entry["raw"])
    with zipfile.ZipFile(io.BytesIO(_read_api(plan, detail["bundles"]["zip"]["path"]))) as archive:
        return archive.read(detail["skill_md"])


def _file_tree(files: Sequence[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """Nested folders and files, in the API's file order, each file linking to its raw URL."""
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
        folders[parent].append({"name": parts[-1], "children": None, "href": prefix + quote(f["path"], safe="/"),
                                "size": f["size"], "executable": f["executable"]})
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


class _Fragments:
    """``{% call fragment() %}<html>{% endcall %}`` in a page template: keep the HTML out of the Markdown."""

    def __init__(self, inline: bool) -> None:
        self.inline = inline
        self.parts: list[str] = []

    def __call__(self, caller: Any) -> Markup:
        html = caller()
        if self.inline:
            return Markup(html)
        self.parts.append(str(html).strip("\n"))
        return Markup(f"<!--sr:{len(self.parts) - 1}-->")


def render_page(env: jinja2.Environment, template: str, docs: Path, rel: str, inline: bool, **values: Any) -> None:
    """Render a page template to ``docs/rel``; its HTML blocks go to the fragments file unless ``inline``."""
    fragments = _Fragments(inline)
    text = env.get_template(template).render(fragment=fragments, **values)
    _write_text(docs / rel, text)
    if fragments.parts:
        _write_text(fragments_path(docs, rel), json.dumps(fragments.parts, ensure_ascii=False))


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _skill_page(plan: _Plan, env: jinja2.Environment, renderer: BodyRenderer, docs: Path, name: str) -> None:
    detail = json.loads(_read_api(plan, detail_path(name)))
    raw_prefix = f"{API_ROOT}/skills/{name}/files/"
    parsed = parse_skill_md(_skill_md_bytes(plan, detail), detail["skill_md"],
                            max_frontmatter_bytes=plan.max_frontmatter_bytes, skill=name)
    root = "../../"
    raw_url = root + quote(raw_prefix, safe="/")
    files = [f["path"] for f in detail["files"]]
    zip_path = detail["bundles"]["zip"]["path"]
    prov = detail["provenance"]
    site_url = plan.site_url or "<registry-url>/"
    render_page(
        env, "skill.md", docs, f"skills/{name}.md", plan.naive, s=detail, root=root,
        body=Markup(renderer.render(parsed.body, set(files), raw_url)),
        category=plan.categories.get(detail["category"] or ""),
        tags=[{"name": t, "slug": tag_slug(t)} for t in detail["tags"]],
        perms=detail["permissions"], bundles=detail["bundles"], prov=prov,
        site_url=site_url, zip_url=site_url + quote(zip_path),
        files=_file_tree(detail["files"], raw_url), file_count=len(files),
        frontmatter=_frontmatter_rows(detail["frontmatter"]), raw_prefix=raw_prefix,
        source_url=_http_url(prov.get("source_url")), history_url=_http_url(prov.get("history_url")),
        detail_path=detail_path(name), author=declared_author(detail["frontmatter"]),
        **_versions(plan, name))


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


def _group_pages(plan: _Plan, env: jinja2.Environment, docs: Path) -> None:
    """Home, search, and one page per category and per tag, with their index pages."""
    named = set(plan.names)
    skills = [s for s in plan.index["skills"] if s["name"] in named]
    categories = plan.categories
    by_category: dict[str, list[dict[str, Any]]] = {slug: [] for slug in categories}
    by_tag: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for s in skills:
        if s["category"] in by_category:
            by_category[s["category"]].append(s)
        for tag in s["tags"]:
            by_tag.setdefault(tag_slug(tag), (tag, []))[1].append(s)
    cats = [dict(c, count=len(by_category[c["slug"]])) for c in categories.values()]
    for c in cats:
        render_page(env, "category.md", docs, f"categories/{c['slug']}.md", plan.naive,
                    root="../../", category=c, skills=by_category[c["slug"]])
    tags: list[dict[str, Any]] = []
    for slug, (name, members) in sorted(by_tag.items()):
        tags.append({"slug": slug, "name": name, "count": len(members)})
        render_page(env, "tag.md", docs, f"tags/{slug}.md", plan.naive, root="../../", tag=tags[-1], skills=members)
    recent = sorted(skills, key=lambda s: (s["updated"] or "", s["name"]), reverse=True)[:RECENT]
    render_page(env, "home.md", docs, "index.md", plan.naive,
                root="", registry=plan.index["registry"], categories=cats, recent=recent,
                source_url=_http_url(plan.index["source"].get("repository")),
                counts={"skills": len(skills), "categories": sum(1 for c in cats if c["count"]),
                        "tags": len(tags), "files": sum(s["files"] for s in skills)})
    render_page(env, "categories.md", docs, "categories/index.md", plan.naive, categories=cats, root="../")
    render_page(env, "tags.md", docs, "tags/index.md", plan.naive, tags=tags, root="../")
    render_page(env, "search.md", docs, "search.md", plan.naive, root="../", categories=cats)
    shutil.copytree(TEMPLATES / "assets", docs / "assets")


# ------------------------------------------------------------------------------------------------------- mkdocs

NAV_PAGES = {"Home": "index.md", "Categories": "categories/index.md", "Tags": "tags/index.md", "Search": "search.md"}


def mkdocs_config(plan: _Plan, docs: Path, site_dir: Path) -> dict[str, Any]:
    """site_templates/mkdocs.yml filled in for one build. The naive variant puts every skill page in the
    navigation and turns mkdocs-material's full-text search on: the set-up the benchmark compares against."""
    data: dict[str, Any] = yaml.safe_load((TEMPLATES / "mkdocs.yml").read_text(encoding="utf-8"))
    registry = plan.index["registry"]
    # Themes print the site name and description into attributes and titles without escaping them.
    data.update(site_name=heading_text(registry["title"] or "Skill Registry"),
                site_description=heading_text(registry["description"] or "", ""),
                docs_dir=str(docs), site_dir=str(site_dir))
    if plan.site_url:
        data["site_url"] = plan.site_url
    if plan.naive:
        data["plugins"] = ["search"]
        del data["theme"]["custom_dir"]
        data["nav"] = data["nav"] + [{"Skills": [{name: f"skills/{name}.md"} for name in plan.names]}]
    else:
        data["theme"]["custom_dir"] = str(TEMPLATES / "overrides")
        data["hooks"] = [str(Path(__file__).resolve().parent / "hooks.py")]
    return data


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run_mkdocs(config_file: Path) -> tuple[str, ...]:
    """``mkdocs build`` through its Python API; returns the warnings it logged, raises BuildError on failure."""
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config as mkdocs_load_config
    from mkdocs.exceptions import MkDocsException

    logger = logging.getLogger("mkdocs")
    handler = _Collect()
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        mkdocs_build(mkdocs_load_config(config_file=str(config_file)))
    except MkDocsException as exc:
        details = "; ".join(handler.messages)
        raise BuildError(f"the website could not be built: {exc}" + (f" ({details})" if details else "")) from None
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    return tuple(handler.messages)


def _build_shard(plan: _Plan, shard: int, shards: int) -> tuple[str, ...]:
    """Pages of every ``shards``-th skill, built by mkdocs into ``work/shard-N/site``. Shard 0 also builds the
    home, category, tag and search pages; the others get stand-ins so that every page has the same navigation."""
    docs = plan.scratch / f"shard-{shard}" / "docs"
    env = page_environment()
    renderer = BodyRenderer()
    for name in plan.names[shard::shards]:
        _skill_page(plan, env, renderer, docs, name)
    if shard == 0:
        _group_pages(plan, env, docs)
    else:
        for title, rel in NAV_PAGES.items():
            _write_text(docs / rel, f"# {title}\n")
    mkdocs_yml = docs.parent / "mkdocs.yml"
    site_dir = plan.work / f"shard-{shard}" / "site"
    mkdocs_yml.write_text(yaml.safe_dump(mkdocs_config(plan, docs, site_dir), sort_keys=False), encoding="utf-8")
    return run_mkdocs(mkdocs_yml)


def _move_into(src: Path, dest: Path) -> None:
    """Move every entry of ``src`` into ``dest``; the website and the API must never claim the same path."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in sorted(src.iterdir()):
        target = dest / entry.name
        if target.exists() or target.is_symlink():
            raise BuildError(f"the website and the API both write {target}; nothing was published")
        os.rename(entry, target)


SITEMAP_MAX_URLS = 50_000  # the sitemaps protocol's limits on one file
SITEMAP_MAX_BYTES = 50 * 1024 * 1024
SITEMAP_INDEX_MAX = 50_000  # sitemaps one index may list
_SITEMAP_HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                 '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
_SITEMAP_TAIL = "</urlset>\n"


def sitemap_files(site_url: str, urls: Iterable[str], *, max_urls: int | None = None,
                  max_bytes: int | None = None) -> dict[str, bytes]:
    """``sitemap.xml`` listing every page, or, past the protocol's 50,000 URLs or 50 MB a file, a sitemap index
    of that name pointing at ``sitemap-1.xml``, ``sitemap-2.xml``, ... beside it. Without dates, so two builds
    of one commit stay byte-identical; search engines already know the address ``sitemap.xml``."""
    max_urls = max_urls or SITEMAP_MAX_URLS
    room = (max_bytes or SITEMAP_MAX_BYTES) - len(_SITEMAP_HEAD) - len(_SITEMAP_TAIL)
    parts: list[list[str]] = [[]]
    used = 0
    for u in urls:
        line = f"  <url><loc>{html.escape(site_url + quote(u, safe='/'))}</loc></url>\n"
        if parts[-1] and (len(parts[-1]) >= max_urls or used + len(line) > room):
            parts.append([])
            used = 0
        parts[-1].append(line)
        used += len(line)
    files = {f"sitemap-{n}.xml": (_SITEMAP_HEAD + "".join(lines) + _SITEMAP_TAIL).encode("utf-8")
             for n, lines in enumerate(parts, 1)}
    if len(files) == 1:
        return {"sitemap.xml": files["sitemap-1.xml"]}
    if len(files) > SITEMAP_INDEX_MAX:
        raise BuildError(f"the site has more pages than a sitemap index of {SITEMAP_INDEX_MAX:,} sitemaps can list")
    index = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    index += [f"  <sitemap><loc>{html.escape(site_url + name)}</loc></sitemap>" for name in files]
    index.append("</sitemapindex>\n")
    return {**files, "sitemap.xml": "\n".join(index).encode("utf-8")}


def robots_txt(site_url: str) -> bytes | None:
    """robots.txt naming the sitemap, for a site served at the root of its host: crawlers read robots.txt only
    there, so a project site below a path (``user.github.io/repo/``) gets none."""
    if urlsplit(site_url).path not in ("", "/"):
        return None
    return f"User-agent: *\nAllow: /\n\nSitemap: {site_url}sitemap.xml\n".encode("utf-8")


# --------------------------------------------------------------------------------------------------- entry point

def _scratch_parent(index: dict[str, Any]) -> str | None:
    """/dev/shm when it has room for the generated Markdown (a few KB a skill): ten thousand small files are
    written, read back and deleted there in memory rather than on disk. Otherwise beside the output."""
    try:
        free = shutil.disk_usage(SHM).free
    except OSError:
        return None
    return SHM if os.access(SHM, os.W_OK) and free > SHM_MARGIN + 64 * 1024 * len(index["skills"]) else None


def _plan(config: RegistryConfig, root: Path, index: dict[str, Any], work: Path, scratch: Path, *, naive: bool,
          api_roots: Sequence[Path] | None = None) -> _Plan:
    if not (root / SHARDS_INDEX_PATH).is_file():
        raise BuildError(f"{SHARDS_INDEX_PATH} is missing; the website searches it")
    site_url = index["registry"]["url"] or ""
    if site_url and not site_url.endswith("/"):
        site_url += "/"
    names = tuple(s["name"] for s in index["skills"] if _SLUG.match(s["name"]))
    return _Plan(tuple(api_roots or (root,)), work, scratch, index, names, site_url,
                 config.limits.max_frontmatter_bytes, naive)


def write_site(config: RegistryConfig, root: Path, report: Any = None, *, naive: bool = False,
               jobs: int | None = None, api_roots: Sequence[Path] | None = None) -> SiteResult:
    """Write the website into ``root`` beside the ``api/`` already published there (``report``, the build's
    validation report, is accepted for the build's call and not needed: the API already holds what is valid).

    ``naive`` builds the straightforward mkdocs-material set-up instead (every skill in the navigation,
    full-text search on, one process), which benchmarks compare against.
    """
    # Inside the build's temporary folder, so an interrupted build leaves nothing behind elsewhere.
    work = Path(tempfile.mkdtemp(prefix=".site-work-", dir=root)).resolve()
    scratch = work
    try:
        index = json.loads((root / INDEX_PATH).read_bytes())
        shm = _scratch_parent(index)
        if shm:
            scratch = Path(tempfile.mkdtemp(prefix="skillreg-site-", dir=shm))
        plan = _plan(config, root, index, work, scratch, naive=naive, api_roots=api_roots)
        if jobs is None:
            jobs = default_jobs(len(plan.names))
        shards = 1 if naive else max(1, min(jobs, len(plan.names)))
        if shards == 1:
            warnings = list(_build_shard(plan, 0, 1))
        else:
            with ProcessPoolExecutor(max_workers=shards) as pool:
                warnings = [w for ws in pool.map(_build_shard, [plan] * shards, range(shards), [shards] * shards)
                            for w in ws]
        _move_into(work / "shard-0" / "site", root)
        for shard in range(1, shards):
            _move_into(work / f"shard-{shard}" / "site" / "skills", root / "skills")
        urls = ["", "categories/", "tags/", "search/"]
        urls += sorted(p.parent.relative_to(root).as_posix() + "/" for p in root.glob("categories/*/index.html"))
        urls += sorted(p.parent.relative_to(root).as_posix() + "/" for p in root.glob("tags/*/index.html"))
        urls += [f"skills/{name}/" for name in plan.names]
        if plan.site_url and not naive:
            for name, data in sitemap_files(plan.site_url, urls).items():
                (root / name).write_bytes(data)
            robots = robots_txt(plan.site_url)
            if robots is not None:
                (root / "robots.txt").write_bytes(robots)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if scratch != work:
            shutil.rmtree(scratch, ignore_errors=True)
    return SiteResult(pages=len(urls), skills=len(plan.names), warnings=tuple(warnings))
