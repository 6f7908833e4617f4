"""A rebuild writes only the website pages its changes touch, and the output reads exactly as a scratch build."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import REPO
from helpers.build import make_registry

from builder.core.config import load_config
from builder.publish.build import build
from builder.publish.transaction import output_place
from builder.site import listings, pages

NAMES = ["branch-cleanup", "changelog-from-git", "commit-message-lint", "git-bisect-guide", "csv-profiler",
         "json-schema-check", "log-summarizer", "secret-scanner"]


def _tree(root: Path) -> tuple[dict[str, bytes], set[str]]:
    """Every file with its bytes, and every folder, of an output (the build's own state excluded)."""
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    folders = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir()}
    return files, folders


def _inodes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_ino for p in root.rglob("*.html")}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two skills a listing page, so the bundled skills' categories and tags run over several pages."""
    monkeypatch.setattr(listings, "PAGE_SIZE", 2)


def _change(registry: Path) -> None:
    skills = registry / "skills"
    _edit(skills / "csv-profiler/SKILL.md", "\n## ", "\nA line only the body has.\n\n## ")  # no listing changes
    _edit(skills / "commit-message-lint/SKILL.md", "description: ", "description: Newly worded. ")
    shutil.rmtree(skills / "log-summarizer")  # data shrinks to one page; its own tags go away
    shutil.copytree(REPO / "skills/dockerfile-lint", skills / "dockerfile-lint")  # a category and tags appear
    _edit(skills / "json-schema-check/SKILL.md", "category: data", "category: testing")


def test_a_rebuild_writes_only_touched_pages_and_equals_a_scratch_build(tmp_path: Path, small_pages: None) -> None:
    registry = make_registry(tmp_path / "repo", NAMES)
    config = load_config(registry / "registry.yaml")
    out = tmp_path / "out"
    build(config, out)
    assert (out / "categories/git/page/2/index.html").is_file()
    assert (out / "categories/data/page/2/index.html").is_file()
    assert (out / "tags/logs/index.html").is_file()
    before = _inodes(out)
    _change(registry)
    result = build(config, out)
    assert result.reused and set(result.written) == {"csv-profiler", "commit-message-lint", "dockerfile-lint",
                                                    "json-schema-check"}
    after = _inodes(out)
    kept = {rel for rel, inode in before.items() if after.get(rel) == inode}
    # Untouched skills, tags and assets are not written again; what the changes touch is.
    assert {"skills/branch-cleanup/index.html", "skills/secret-scanner/index.html", "tags/git/index.html",
            "categories/security/index.html", "404.html"} <= kept
    assert not {"skills/csv-profiler/index.html", "skills/commit-message-lint/index.html", "index.html",
                "categories/data/index.html", "categories/testing/index.html", "tags/index.html"} & kept
    assert not (out / "categories/data/page").exists() and not (out / "tags/logs").exists()
    assert "Newly worded." in (out / "categories/git/page/2/index.html").read_text(encoding="utf-8")
    fresh = tmp_path / "fresh"
    build(config, fresh)
    assert _tree(out) == _tree(fresh)


def test_a_rebuild_with_new_shells_rewrites_every_page_and_still_equals_a_scratch_build(
        tmp_path: Path, small_pages: None) -> None:
    registry = make_registry(tmp_path / "repo", NAMES)
    config = load_config(registry / "registry.yaml")
    out = tmp_path / "out"
    build(config, out)
    state = output_place(out).state / pages.SHELLS_STATE  # kept with the output's state, outside the output
    saved = json.loads(state.read_bytes())
    state.write_text(json.dumps({**saved, "key": "templates changed since"}), encoding="utf-8")
    before = _inodes(out)
    _change(registry)
    build(config, out)
    after = _inodes(out)
    assert not [rel for rel, inode in before.items() if after.get(rel) == inode]  # mkdocs ran: every page anew
    assert json.loads(state.read_bytes())["key"] == saved["key"]
    fresh = tmp_path / "fresh"
    build(config, fresh)
    assert _tree(out) == _tree(fresh)


def test_a_rebuild_with_nothing_changed_writes_no_page(tmp_path: Path) -> None:
    registry = make_registry(tmp_path / "repo", NAMES[:3])
    config = load_config(registry / "registry.yaml")
    out = tmp_path / "out"
    build(config, out)
    before = _inodes(out)
    build(config, out)
    assert _inodes(out) == before


def test_long_listings_are_paginated_with_stable_links_between_pages(tmp_path: Path, small_pages: None) -> None:
    from helpers.site import broken_links, read_page

    registry = make_registry(tmp_path / "repo", NAMES)
    out = tmp_path / "out"
    build(load_config(registry / "registry.yaml"), out)
    index = json.loads((out / "api/v1/index.json").read_text(encoding="utf-8"))
    git_skills = [s["name"] for s in index["skills"] if s["category"] == "git"]
    assert len(git_skills) == 4
    first, second = out / "categories/git/index.html", out / "categories/git/page/2/index.html"
    assert read_page(first).links_to("../../skills/") == [f"../../skills/{n}/" for n in git_skills[:2]]
    assert read_page(second).links_to("../../../../skills/") == [f"../../../../skills/{n}/" for n in git_skills[2:]]
    assert "../../categories/git/page/2/" in read_page(first).links_to("../../categories/git/")
    assert "../../../../categories/git/" in read_page(second).links_to("../../../../categories/git/")
    text = second.read_text(encoding="utf-8")
    assert '<link rel="canonical" href="https://skill-registry.github.io/skill-registry/categories/git/page/2/">' in text
    assert re.search(r"<title>Git[^<]*\(page 2 of 2\) - ", text)
    assert "<loc>https://skill-registry.github.io/skill-registry/categories/git/page/2/</loc>" in (
        out / "sitemap.xml").read_text(encoding="utf-8")
    assert broken_links(out, index["registry"]["url"]) == []


def test_a_body_only_change_rewrites_that_skills_page_and_no_listing_or_sitemap(tmp_path: Path,
                                                                                 small_pages: None) -> None:
    registry = make_registry(tmp_path / "repo", NAMES)
    config = load_config(registry / "registry.yaml")
    out = tmp_path / "out"
    build(config, out)
    before = _inodes(out)
    sitemap = (out / "sitemap.xml").stat().st_ino
    _edit(registry / "skills/commit-message-lint/SKILL.md", "\n## ", "\nOnly the body changes.\n\n## ")
    build(config, out)
    after = _inodes(out)
    rewritten = sorted(rel for rel, inode in before.items() if after.get(rel) != inode)
    assert rewritten == ["skills/commit-message-lint/index.html"]
    assert (out / "sitemap.xml").stat().st_ino == sitemap
    fresh = tmp_path / "fresh"
    build(config, fresh)
    assert _tree(out) == _tree(fresh)


def test_a_rebuild_after_the_listing_size_changes_repaginates_every_listing(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    registry = make_registry(tmp_path / "repo", NAMES)
    config = load_config(registry / "registry.yaml")
    out = tmp_path / "out"
    monkeypatch.setattr(listings, "PAGE_SIZE", 2)
    build(config, out)
    assert (out / "categories/git/page/2/index.html").is_file()
    monkeypatch.setattr(listings, "PAGE_SIZE", 4)
    _edit(registry / "skills/csv-profiler/SKILL.md", "\n## ", "\nA line only the body has.\n\n## ")
    assert build(config, out).reused
    assert not (out / "categories/git/page").exists()
    fresh = tmp_path / "fresh"
    build(config, fresh)
    assert _tree(out) == _tree(fresh)
