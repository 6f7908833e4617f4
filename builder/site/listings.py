"""The listing pages: home, the category and tag indexes and search, and each category's and tag's pages of
skills, cut into pages of ``PAGE_SIZE``."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import jinja2

from ..core.model import SLUG
from .page_templates import http_url, tag_slug
from .plan import Page, Plan, page_collections

RECENT = 10
PAGE_SIZE = 100  # skills listed on one category or tag page; longer listings go on to page/2/, page/3/, ...


@dataclass(frozen=True)
class Groups:
    """Which skills each category and tag page lists, from one index."""

    categories: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]  # slug -> (category, members)
    tags: dict[str, tuple[str, list[dict[str, Any]]]]  # slug -> (tag as first written, members)
    skills: list[dict[str, Any]]
    # name -> (collection, members): the collections with a page of their own (see ``page_collections``)
    collections: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = field(default_factory=dict)

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


def groups_of(index: dict[str, Any], categories: dict[str, dict[str, Any]]) -> Groups:
    skills = [s for s in index["skills"] if SLUG.match(s["name"])]
    by_name = {s["name"]: s for s in skills}
    collections = {c["name"]: (c, [by_name[n] for n in sorted(c["skills"]) if n in by_name])
                   for c in page_collections(index)}
    by_category: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
        slug: (c, []) for slug, c in categories.items()}
    by_tag: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for s in skills:
        if s["category"] in by_category:
            by_category[s["category"]][1].append(s)
        for tag in s["tags"]:
            by_tag.setdefault(tag_slug(tag), (tag, []))[1].append(s)
    return Groups(by_category, dict(sorted(by_tag.items())), skills, collections)


def listing_url(section: str, slug: str, number: int) -> str:
    return f"{section}/{slug}/" + (f"page/{number}/" if number > 1 else "")


def group_pages(env: jinja2.Environment, groups: Groups, section: str, slug: str) -> list[Page]:
    """Every page of one category's or tag's listing, PAGE_SIZE skills to a page."""
    count = groups.pages(section, slug)
    pages: list[Page] = []
    for number in range(1, count + 1):
        root = "../../" if number == 1 else "../../../../"
        pager = None if count == 1 else {
            "number": number, "count": count, "first": root + listing_url(section, slug, 1),
            "previous": root + listing_url(section, slug, number - 1),
            "next": root + listing_url(section, slug, number + 1), "last": root + listing_url(section, slug, count)}
        suffix = f" (page {number} of {count})" if number > 1 else ""
        kind = ("category" if section == "categories" else "tag") + ("-page" if number > 1 else "")
        path = listing_url(section, slug, number) + "index.html"
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
        pages.append(Page(path, unit, kind, heading + suffix, description, article, heading=heading, slug=slug,
                          number=number))
    return pages


def collection_pages(env: jinja2.Environment, groups: Groups, only: Collection[str] | None = None) -> list[Page]:
    """One page per collection (``only`` those named), listing every skill in it (a plugin lists tens, not the
    thousands a category or tag may gather, so the page is not cut into several)."""
    pages = []
    for name, (collection, members) in groups.collections.items():
        if only is not None and name not in only:
            continue
        article = env.get_template("collection.html").render(
            root="../../", collection=collection, skills=members, homepage=http_url(collection["homepage"]))
        pages.append(Page(f"collections/{name}/index.html", f"collections/{name}", "collection",
                          collection["title"], collection["description"] or f"Skills in the {collection['title']} "
                          "collection", article, heading=collection["title"], slug=name))
    return pages


def nav_pages(plan: Plan, env: jinja2.Environment, groups: Groups) -> list[Page]:
    """Home, the categories and tags indexes, and search."""
    cats = [dict(c, count=len(members)) for c, members in groups.categories.values()]
    collections = [dict(c, count=len(members)) for c, members in groups.collections.values()]
    tags = [{"slug": slug, "name": name, "count": len(members)} for slug, (name, members) in groups.tags.items()]
    skills = groups.skills
    recent = sorted(skills, key=lambda s: (s["updated"] or "", s["name"]), reverse=True)[:RECENT]
    registry = plan.index["registry"]
    home = env.get_template("home.html").render(
        root="", registry=registry, categories=cats, recent=recent, collections=collections,
        source_url=http_url(plan.index["source"].get("repository")),
        counts={"skills": len(skills), "categories": sum(1 for c in cats if c["count"]),
                "tags": len(tags), "files": sum(s["files"] for s in skills)})
    return [
        Page("index.html", "index.html", "home", registry["title"] or "Skill Registry", "", home),
        Page("categories/index.html", "categories/index.html", "categories", "Categories", "",
             env.get_template("categories.html").render(categories=cats, root="../")),
        Page("tags/index.html", "tags/index.html", "tags", "Tags", "",
             env.get_template("tags.html").render(tags=tags, root="../")),
        Page("search/index.html", "search/index.html", "search", "Search", "",
             env.get_template("search.html").render(root="../", categories=cats,
                                                                 collections=collections)),
    ]
