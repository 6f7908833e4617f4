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

``write_site`` here plans a build and writes it, whole or as a rebuild; the pages come from ``shells``,
``skill_pages`` and ``listings``, over the ``plan`` and the ``page_templates``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.config import RegistryConfig
from ..core.errors import BuildError
from ..core.fs import write_atomic
from ..core.model import SLUG
from ..core.search import SHARDS_INDEX_PATH
from ..core.urls import INDEX_PATH, detail_path, optional_site_file
from . import bodies, listings, sitemaps
from .listings import Groups, collection_pages, group_pages, groups_of, listing_url, nav_pages
from .page_templates import TEMPLATES, page_environment
from .plan import Plan, membership, page_collections
from .shells import Shell, mkdocs_config, page_bytes, render_shells, shell_sources, write_page
from .sitemaps import robots_txt, sitemap_files
from .skill_pages import write_skills

TEMPLATES_CACHE = "site-templates"  # in the state folder: the page templates compiled
SHELLS_STATE = "site-shells.json"  # in the output's state folder: the shells and the hash of what made them
# Top-level entries the website writes; a full rebuild replaces each (sitemap parts: core.urls.optional_site_file).
SITE_ENTRIES = ("404.html", "assets", "categories", "collections", "index.html", "robots.txt", "search",
                "sitemap.xml", "skills", "tags")


@dataclass(frozen=True)
class SiteResult:
    pages: int  # pages of the whole site (home, search, indexes, categories, tags, skills)
    skills: int
    warnings: tuple[str, ...]  # what mkdocs logged at WARNING or above
    # Paths relative to the output that this build wrote or that must go: on a rebuild only what changed.
    units: tuple[str, ...] = ()
    written: int = 0  # pages this build wrote


def _shells_key(plan: Plan) -> str:
    """Everything the shells and mkdocs' own output (assets, 404.html) depend on, and the sizes every listing
    and sitemap is cut to: when any differs, a rebuild writes every page."""
    import material
    import mkdocs

    digest = hashlib.sha256()
    config = mkdocs_config(plan, Path("docs"), Path("site"))
    digest.update(json.dumps([__version__, mkdocs.__version__, getattr(material, "__version__", ""), config,
                              shell_sources(plan.index["registry"]["title"] or ""),
                              [listings.PAGE_SIZE, sitemaps.SITEMAP_MAX_URLS, sitemaps.SITEMAP_MAX_BYTES]],
                             sort_keys=True).encode())
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


def _site_urls(groups: Groups, names: Sequence[str]) -> list[str]:
    urls = ["", "categories/", "tags/", "search/"]
    for section, table in (("categories", groups.categories), ("tags", groups.tags)):
        for slug in sorted(table):
            urls += [listing_url(section, slug, n) for n in range(1, groups.pages(section, slug) + 1)]
    urls += [f"collections/{name}/" for name in sorted(groups.collections)]
    return urls + [f"skills/{name}/" for name in names]


def _top_files(plan: Plan, groups: Groups) -> dict[str, bytes | None]:
    """The sitemap files and robots.txt of this build (None: the file must not exist)."""
    if not plan.site_url:
        return {}
    files: dict[str, bytes | None] = dict(sitemap_files(plan.site_url, _site_urls(groups, plan.names)))
    files["robots.txt"] = robots_txt(plan.site_url)
    return files


def _plan(config: RegistryConfig, root: Path, index: dict[str, Any],
          api_roots: Sequence[Path] | None = None, state: Path | None = None) -> Plan:
    if not (root / SHARDS_INDEX_PATH).is_file():
        raise BuildError(f"{SHARDS_INDEX_PATH} is missing; the website searches it")
    site_url = index["registry"]["url"] or ""
    if site_url and not site_url.endswith("/"):
        site_url += "/"
    names = tuple(s["name"] for s in index["skills"] if SLUG.match(s["name"]))
    return Plan(tuple(api_roots or (root,)), root, index, names, site_url, config.limits.max_frontmatter_bytes,
                fetched_body=config.publish.page_body == "fetched",
                bodies=state / bodies.BODIES_STATE if state is not None else None)


def write_site(config: RegistryConfig, root: Path, report: Any = None, *,
               jobs: int | None = None, api_roots: Sequence[Path] | None = None, previous: Path | None = None,
               changed: Collection[str] | None = None, state: Path | None = None) -> SiteResult:
    """Write the website into ``root`` beside the ``api/`` already published there (``report``, the build's
    validation report, is accepted for the build's call and not needed: the API already holds what is valid).

    ``state`` is where the shells are kept and where the build's workers left the skills' rendered bodies; without
    it each page worker renders its skills' bodies from SKILL.md as published. With ``previous`` (the output as it
    stands) and ``changed`` (skills written or removed since), only the pages those skills touch are written and
    the result's ``units`` name them; the output then reads exactly as a build from scratch would. Otherwise every
    page is written.
    """
    index = json.loads((root / INDEX_PATH).read_bytes())
    plan = _plan(config, root, index, api_roots=api_roots, state=state)
    groups = groups_of(index, plan.categories)
    key = _shells_key(plan)
    if previous is not None and changed is not None and (previous / INDEX_PATH).is_file():
        shells = _load_shells(state, key)
        if shells is not None:
            return _write_changed(_with_shells(plan, shells), groups, previous, changed, jobs,
                                  state / TEMPLATES_CACHE if state is not None else None)
    work = Path(tempfile.mkdtemp(prefix=".site-work-", dir=root)).resolve()
    try:
        shells, warnings = render_shells(plan, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if state is not None:
        write_atomic(state / SHELLS_STATE, json.dumps({"key": key, "shells": shells}, sort_keys=True).encode())
    plan = _with_shells(plan, shells)
    cache = state / TEMPLATES_CACHE if state is not None else None
    write_skills(plan, plan.names, jobs, cache)
    env = page_environment(cache)
    pages = nav_pages(plan, env, groups) + collection_pages(env, groups)
    for section, table in (("categories", groups.categories), ("tags", groups.tags)):
        for slug in table:
            pages += group_pages(env, groups, section, slug)
    for page in pages:
        write_page(plan, page)
    for name, data in _top_files(plan, groups).items():
        if data is not None:
            (root / name).write_bytes(data)
    entries = set(SITE_ENTRIES)
    units = {p.name for p in root.iterdir() if p.name in entries or optional_site_file(p.name)}
    if previous is not None and previous.is_dir():
        units |= {p.name for p in previous.iterdir() if p.name in entries or optional_site_file(p.name)}
    return SiteResult(pages=len(pages) + len(plan.names), skills=len(plan.names), warnings=warnings,
                      units=tuple(sorted(units)), written=len(pages) + len(plan.names))


def _with_shells(plan: Plan, shells: dict[str, Shell]) -> Plan:
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


def _write_changed(plan: Plan, groups: Groups, previous: Path, changed: Collection[str],
                   jobs: int | None, templates_cache: Path | None) -> SiteResult:
    """A rebuild: the changed skills' pages, the category and tag pages that list them before or after, the
    navigation pages and sitemaps, each written only where its bytes differ from ``previous``."""
    root = plan.root
    changed = set(changed)
    named = set(plan.names)
    units: set[str] = {f"skills/{name}" for name in changed if SLUG.match(name)}
    moved, gone, earlier = _collection_changes(plan, groups, previous)
    units |= {f"skills/{name}" for name in moved} | {f"collections/{name}" for name in gone}
    write_skills(plan, sorted(n for n in changed | moved if n in named), jobs, templates_cache, changed)
    before_rows = _previous_rows(previous, changed)
    after_rows = {s["name"]: s for s in groups.skills if s["name"] in changed}
    touched: set[tuple[str, str]] = set()
    # A collection's page shows its own fields and its skills' listed rows: written when either changed.
    listing = {name for name, (collection, _) in groups.collections.items() if earlier.pages.get(name) != collection}
    for name in changed:
        old, new = before_rows.get(name), after_rows.get(name)
        if old is not None and new is not None and _listed(old) == _listed(new):
            continue  # listed as before (a change to its body or files): every listing reads the same
        for row in (old, new):
            if row is not None:
                touched |= groups.of(row)
        listing |= {c["name"] for c in [*earlier.of.get(name, ()), *plan.collections_of.get(name, ())]}
    same_urls = before_rows.keys() == after_rows.keys() and not gone  # no page added or removed, so far
    same_urls = same_urls and all((previous / "collections" / name).is_dir() for name in groups.collections)
    env = page_environment(templates_cache)
    pages = nav_pages(plan, env, groups) + collection_pages(env, groups, listing)
    for section, slug in sorted(touched):
        pages += group_pages(env, groups, section, slug)
        before, after = _published_pages(previous, section, slug), groups.pages(section, slug)
        same_urls = same_urls and before == after
        if after == 0 and before:
            units.add(f"{section}/{slug}")  # the group has no page any more
        elif after <= 1 < before:
            units.add(f"{section}/{slug}/page")
        else:
            units |= {f"{section}/{slug}/page/{n}" for n in range(after + 1, before + 1)}
    written = len([n for n in changed | moved if n in named])
    for page in pages:
        data = page_bytes(plan, page)
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


@dataclass(frozen=True)
class _Before:
    """The collections ``previous``'s index has."""

    pages: dict[str, dict[str, Any]]  # name -> each collection with a page, as the index gives it
    of: dict[str, list[dict[str, str]]]  # skill name -> the collections with a page that list it (``collections_of``)


def _collection_changes(plan: Plan, groups: Groups, previous: Path) -> tuple[set[str], set[str], _Before]:
    """The skills whose collections (as their pages show them) differ from ``previous``'s, the collection pages
    ``previous`` has that this build has not (a plugin's list can change while its skills stay the same), and
    ``previous``'s collections."""
    before = _index_collections(previous / INDEX_PATH)
    after = page_collections(plan.index)
    folder = previous / "collections"
    had = {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()
    gone = had - set(groups.collections)
    if before == after:
        return set(), gone, _Before({c["name"]: c for c in after}, plan.collections_of)
    earlier = _Before({c["name"]: c for c in before}, membership(before))
    now = plan.collections_of
    moved = {name for name in set(earlier.of) | set(now) if earlier.of.get(name) != now.get(name)}
    return {name for name in moved if name in set(plan.names)}, gone, earlier


_COLLECTIONS_KEY = b'"collections":'


def _index_collections(path: Path) -> list[dict[str, Any]]:
    """``page_collections`` of the index.json at ``path``, its ``collections`` decoded alone: the document is
    written with its keys sorted, so the key comes before ``skills`` (tens of megabytes at 60,000 skills), and
    only a key can hold the characters ``"collections":`` (a string's quotes are escaped); none when it cannot be
    read."""
    try:
        data = path.read_bytes()
        start = data.index(_COLLECTIONS_KEY) + len(_COLLECTIONS_KEY)
        return page_collections({"collections": _first_value(data, start)})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def _first_value(data: bytes, start: int) -> Any:
    """The JSON value at ``start`` in ``data``, decoding no more of what follows than it takes: a cut ends
    inside the value until the whole value is read (a character cut in two is dropped, and so is the cut)."""
    size = 1 << 16
    while True:
        end = min(len(data), start + size)
        try:
            return json.JSONDecoder().raw_decode(data[start:end].decode("utf-8", "ignore" if end < len(data)
                                                                         else "strict"))[0]
        except ValueError:
            if end == len(data):
                raise
            size *= 4


def _differs(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() != data
    except OSError:
        return True
