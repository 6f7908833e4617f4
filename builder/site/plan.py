"""What one site build's pages are made from: the ``Plan`` every page worker is sent once, the ``Page`` each
generated page is before it goes into its shell, and the published API the pages are read from."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import BuildError
from ..core.model import SLUG

BODY_FILE = "skill-md.html.gz"  # with publish.page_body: fetched, beside the skill page: its body, gzip-compressed


@dataclass(frozen=True)
class Page:
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
class Plan:
    """Everything the pages need, sent once to each worker process."""

    api_roots: tuple[Path, ...]  # folders holding api/, searched in order (a rebuild stages only changed skills)
    root: Path  # the output being written
    index: dict[str, Any]  # api/v1/index.json
    names: tuple[str, ...]  # skills that get a page
    site_url: str
    max_frontmatter_bytes: int
    shells: dict[str, tuple[str, ...]] = field(default_factory=dict)  # kind -> its shells.Shell
    fetched_body: bool = False  # publish.page_body: fetched (the page loads its body from BODY_FILE)
    bodies: Path | None = None  # the state's folder of rendered bodies (``bodies``), when there is a state folder

    @functools.cached_property
    def collections_of(self) -> dict[str, list[dict[str, str]]]:
        """Skill name -> the collections with a page that list it (name and title), in the index's order."""
        return membership(page_collections(self.index))

    @property
    def categories(self) -> dict[str, dict[str, Any]]:
        """Categories whose slug can name a folder (registry.yaml does not check the form of a slug)."""
        return {c["slug"]: c for c in self.index["categories"] if SLUG.match(c["slug"])}


def page_collections(index: dict[str, Any]) -> list[dict[str, Any]]:
    """The index's collections that get a page under ``collections/``: plugins and category folders. A category of
    registry.yaml is a collection too, but it keeps its category page (one page per group of skills, at the
    address it always had), so it gets none here."""
    return [c for c in index.get("collections", ())
            if SLUG.match(c["name"]) and not (c["kind"] == "category" and c["folder"] is None)]


def membership(collections: list[dict[str, Any]]) -> dict[str, list[dict[str, str]]]:
    """Skill name -> the ``collections`` that list it (name and title), in their order."""
    found: dict[str, list[dict[str, str]]] = {}
    for collection in collections:
        for name in collection["skills"]:
            found.setdefault(name, []).append({"name": collection["name"], "title": collection["title"]})
    return found


def read_api(plan: Plan, rel: str) -> bytes:
    for root in plan.api_roots:
        if (root / rel).is_file():
            return (root / rel).read_bytes()
    raise BuildError(f"{rel} is missing from the published API")
