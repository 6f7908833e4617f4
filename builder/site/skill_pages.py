"""The skill pages: each skill's page from its detail document and rendered body, written by worker processes
(the settings they share are set once per worker, in module globals, by the pool's initializer)."""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from ..core.errors import BuildError
from ..core.urls import declared_author, detail_path, versions_path
from ..core.workers import default_jobs, run_parallel
from . import bodies
from .page_templates import http_url, page_environment, tag_slug
from .plan import BODY_FILE, Page, Plan, read_api
from .render import BodyRenderer
from .shells import write_page

PAGE_VERSIONS = 5  # the newest versions listed on a skill page; versions.json has them all
# Between the body and the sections in a fetched page body (publish.page_body: fetched): a comment the sanitised
# body cannot hold and the escaped sections cannot either; skill-body.js splits at its last occurrence.
SECTIONS_MARK = "\n<!--sr-sections-->\n"


def _file_tree(files: Sequence[dict[str, Any]], raw_urls: Mapping[str, str]) -> list[dict[str, Any]]:
    """Nested folders and files, in the API's file order; a file links to its raw copy when one is published
    (``raw_urls``: never one kept to archives, which has none)."""
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
        href = raw_urls.get(f["path"])
        folders[parent].append({"name": parts[-1], "children": None, "href": href, "size": f["size"],
                                "executable": f["executable"], "archive_only": f.get("archive_only", False)})
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


def _skill_page(plan: Plan, env: jinja2.Environment, renderer: BodyRenderer, name: str) -> Page:
    detail = json.loads(read_api(plan, detail_path(name)))
    root = bodies.PAGE_ROOT
    raw = bodies.raw_copies_of(detail)
    raw_urls = bodies.raw_urls(raw)
    prov = detail["provenance"]
    site_url = plan.site_url or "<registry-url>/"
    body, packed, rendering = bodies.page_body(plan.bodies, renderer, detail, raw, functools.partial(read_api, plan),
                                              plan.max_frontmatter_bytes, plan.fetched_body)
    fetched = plan.fetched_body
    values = dict(
        s=detail, root=root,
        category=plan.categories.get(detail["category"] or ""), collections=plan.collections_of.get(name, ()),
        tags=[{"name": t, "slug": tag_slug(t)} for t in detail["tags"]],
        perms=detail["permissions"], bundles=detail["bundles"], prov=prov,
        site_url=site_url, zip_url=site_url + quote(detail["bundles"]["zip"]["path"]),
        files=_file_tree(detail["files"], raw_urls), file_count=len(detail["files"]), raw_urls=raw_urls,
        frontmatter=_frontmatter_rows(detail["frontmatter"]),
        source_url=http_url(prov.get("source_url")), history_url=http_url(prov.get("history_url")),
        detail_path=detail_path(name), author=declared_author(detail["frontmatter"]),
        **_versions(plan, name))
    sections = env.get_template("skill_sections.html").render(values)
    article = env.get_template("skill.html").render(values, body=Markup(body), body_src=BODY_FILE if fetched else None,
                                                    sections=Markup("" if fetched else sections))
    if fetched:  # the sections travel after the body in the fetched file (skill-body.js splits them at the mark)
        packed = bodies.pack(body + SECTIONS_MARK + sections)
    return Page(f"skills/{name}/index.html", f"skills/{name}", "skill", name, detail["description"], article,
                heading=name, slug=name, body=packed if fetched else None, rendering=rendering)


def _versions(plan: Plan, name: str) -> dict[str, Any]:
    """The newest few versions for the page (the page stays small however long the history is)."""
    try:
        doc = json.loads(read_api(plan, versions_path(name)))
    except BuildError:  # an output written before versions were published
        return {"versions": [], "versions_total": 0, "versions_path": versions_path(name)}
    repo = (plan.index["source"].get("repository") or "").rstrip("/")
    shown = [{**v, "commit_url": http_url(f"{repo}/commit/{v['commit']}") if repo and v["commit"] else None}
             for v in doc["versions"][:PAGE_VERSIONS]]
    return {"versions": shown, "versions_total": len(doc["versions"]), "versions_path": versions_path(name)}


_WORKER: dict[str, Any] = {}


def _init_pages_worker(plan: Plan, cache: Path | None) -> None:
    _WORKER.update(plan=plan, env=page_environment(cache), renderer=BodyRenderer())


def _write_skill_pages(names: Sequence[str]) -> list[str]:
    """Write the pages of ``names``; returns the renderings of the state they took their bodies from."""
    plan: Plan = _WORKER["plan"]
    used = []
    for name in names:
        page = _skill_page(plan, _WORKER["env"], _WORKER["renderer"], name)
        write_page(plan, page)
        if page.rendering:
            used.append(page.rendering)
    return used


def write_skills(plan: Plan, names: Sequence[str], jobs: int | None, cache: Path | None,
                 changed: Collection[str] | None = None) -> None:
    """Write the skill pages of ``names``, then remove the state's renderings no page needs any more (those of
    ``changed`` skills only, and of skills gone, when only some pages are written)."""
    jobs = default_jobs(len(names)) if jobs is None else jobs
    chunks = [list(names[i:i + 50]) for i in range(0, len(names), 50)]
    used = run_parallel(_write_skill_pages, chunks, initializer=_init_pages_worker, initargs=(plan, cache),
                        jobs=max(1, min(jobs, len(chunks))))
    if plan.bodies is not None:
        bodies.prune(plan.bodies, {rendering for chunk in used for rendering in chunk}, set(plan.names), changed)
