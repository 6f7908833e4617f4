"""The naive mkdocs-material website the site benchmark compares ours against: every page, skill pages
included, as Markdown through mkdocs in one process, every skill in the navigation and mkdocs-material's
full-text search on. It reuses the package's page filling and changes only what the straightforward set-up
does differently; the package itself never builds it."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from builder.core.config import RegistryConfig
from builder.core.urls import INDEX_PATH
from builder.site import listings, pages, shells, skill_pages
from builder.site.mkdocs_run import move_into, run_mkdocs
from builder.site.page_templates import TEMPLATES, heading_text, page_environment
from builder.site.render import BodyRenderer


def naive_mkdocs_config(plan: Any, docs: Path, site_dir: Path) -> dict[str, Any]:
    """Our mkdocs.yml without our theme overrides, full-text search on, every skill page in the navigation."""
    data = shells.mkdocs_config(plan, docs, site_dir)
    data["plugins"] = ["search"]
    del data["theme"]["custom_dir"]
    del data["theme"]["static_templates"]  # the logo file is for our header, an override
    data["nav"] = data["nav"] + [{"Skills": [{name: f"skills/{name}.md"} for name in plan.names]}]
    return data


def _sources(plan: Any) -> dict[str, str]:
    """Every page as Markdown, by its path in the docs folder."""
    env = page_environment()
    renderer = BodyRenderer()
    groups = listings.groups_of(plan.index, plan.categories)
    found = [skill_pages._skill_page(plan, env, renderer, name) for name in plan.names]
    nav = listings.nav_pages(plan, env, groups)
    for section, table in (("categories", groups.categories), ("tags", groups.tags)):
        for slug in table:
            found += listings.group_pages(env, groups, section, slug)
    sources = {}
    for page in nav:
        src = shells.NAV_SHELLS[page.kind][0]
        title = heading_text(page.title) if page.kind == "home" else shells._NAV_TITLES[page.kind]
        sources[src] = shells._nav_markdown(page.kind, title, page.article)
    for page in found:
        sources[page.path.removesuffix("/index.html") + ".md"] = (f"# {heading_text(page.heading)}\n\n"
                                                                  f"{page.article}\n")
    return sources


def write_naive_site(config: RegistryConfig, root: Path) -> pages.SiteResult:
    """Write the naive website into ``root`` beside the ``api/`` already published there."""
    index = json.loads((root / INDEX_PATH).read_bytes())
    plan = replace(pages._plan(config, root, index), fetched_body=False)  # the body is always in the page
    sources = _sources(plan)
    work = Path(tempfile.mkdtemp(prefix=".site-work-", dir=plan.root)).resolve()
    try:
        docs = work / "docs"
        for rel, text in sources.items():
            (docs / rel).parent.mkdir(parents=True, exist_ok=True)
            (docs / rel).write_text(text, encoding="utf-8")
        shutil.copytree(TEMPLATES / "assets", docs / "assets")
        site_dir = work / "site"
        mkdocs_yml = work / "mkdocs.yml"
        mkdocs_yml.write_text(yaml.safe_dump(naive_mkdocs_config(plan, docs, site_dir), sort_keys=False),
                              encoding="utf-8")
        warnings = run_mkdocs(mkdocs_yml)
        move_into(site_dir, plan.root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return pages.SiteResult(pages=len(sources), skills=len(plan.names), warnings=warnings, written=len(sources))
