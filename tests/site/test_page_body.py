"""registry.yaml's ``publish.page_body: fetched``: a skill page loads its rendered SKILL.md from a compressed file
beside it instead of holding it, and what the browser ends up showing is byte for byte what an inline page holds.
(The browser half is in tests/site/test_site_browser.py.)"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest
from helpers import REPO, write_tree
from helpers.build import make_registry
from helpers.site import Page, broken_links, internal_target, set_page_body, write_hostile_registry

from builder.core.config import load_config
from builder.core.errors import ConfigError
from builder.publish.build import BuildOptions, build
from builder.site.budget import page_parts
from builder.site.plan import BODY_FILE
from builder.site.skill_pages import SECTIONS_MARK

NAMES = ["branch-cleanup", "csv-profiler", "json-schema-check", "secret-scanner", "log-summarizer"]
_INLINE_BODY = re.compile(r'<div class="sr-body">\n(.*?)\n</div>\n<h2 id="files">', re.S)
_FETCHED_BODY = re.compile(r'<div class="sr-body" data-src="skill-md.html.gz">\n.*?\n</div>\n'
                           r'<script src="../../assets/skill-body.js" defer></script>\n(?=</div>\n</div>\n)', re.S)


def fetched_parts(packed: bytes) -> tuple[str, str]:
    """The body and the sections below it, as a fetched page body holds them."""
    body, mark, sections = gzip.decompress(packed).decode().rpartition(SECTIONS_MARK)
    assert mark and sections.startswith('<h2 id="files">') and sections.endswith("</div>\n")
    return body, sections


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _site(files: dict[str, bytes]) -> dict[str, bytes]:
    return {rel: data for rel, data in files.items() if not rel.startswith(("api/", ".well-known/"))}


@pytest.mark.parametrize("value", ["sideways", True, 3])
def test_a_page_body_other_than_inline_or_fetched_is_refused_with_its_line(tmp_path: Path, value: object) -> None:
    write_tree(tmp_path, {"registry.yaml": f"title: T\npublish:\n  raw_files: linked\n  page_body: {value}\n"})
    with pytest.raises(ConfigError, match=r"registry\.yaml:4: `publish\.page_body` must be inline or fetched"):
        load_config(tmp_path / "registry.yaml")


def test_pages_are_inline_unless_fetched_is_asked_for(tmp_path: Path) -> None:
    assert load_config(make_registry(tmp_path / "r", [], commit=False) / "registry.yaml").publish.page_body == "inline"


def test_a_fetched_body_is_the_inline_body_and_the_rest_of_the_site_is_unchanged(tmp_path: Path) -> None:
    inline_repo = make_registry(tmp_path / "inline", NAMES)
    fetched_repo = make_registry(tmp_path / "fetched", NAMES)
    set_page_body(fetched_repo, "fetched")
    build(load_config(inline_repo / "registry.yaml"), tmp_path / "out-inline")
    build(load_config(fetched_repo / "registry.yaml"), tmp_path / "out-fetched")
    inline, fetched = _files(tmp_path / "out-inline"), _files(tmp_path / "out-fetched")
    assert fetched["api/v1/index.json"] == inline["api/v1/index.json"]
    for name in NAMES:
        page = f"skills/{name}/index.html"
        inline_page, fetched_page = inline[page].decode(), fetched[page].decode()
        body = _INLINE_BODY.search(inline_page)
        assert body is not None and len(body.group(1)) > 200, name
        assert body.group(1) not in fetched_page
        # Byte for byte what the inline page holds: the body, then the sections below it, which the page leaves out.
        fetched_body, sections = fetched_parts(fetched[f"skills/{name}/{BODY_FILE}"])
        assert fetched_body == body.group(1)
        assert sections not in fetched_page and '<h2 id="files">' not in fetched_page
        match = _FETCHED_BODY.search(fetched_page)
        assert match is not None
        put_back = f'<div class="sr-body">\n{fetched_body}\n</div>\n{sections}'
        assert fetched_page[:match.start()] + put_back + fetched_page[match.end():] == inline_page
        assert page_parts(fetched[page]).body < 600 < page_parts(inline[page]).body
    others = {rel for rel in _site(inline) if not rel.startswith("skills/")}
    assert {rel: fetched[rel] for rel in others} == {rel: inline[rel] for rel in others}
    assert set(_site(fetched)) - set(_site(inline)) == {f"skills/{n}/{BODY_FILE}" for n in NAMES}
    assert (tmp_path / "out-fetched/assets/skill-body.js").is_file()
    # A second build of the same commit writes the same bytes (no time or name in the gzip header).
    shutil.rmtree(tmp_path / "out-fetched")
    build(load_config(fetched_repo / "registry.yaml"), tmp_path / "out-fetched")
    assert _files(tmp_path / "out-fetched") == fetched


def test_every_link_of_a_fetched_body_resolves_from_its_page(tmp_path: Path) -> None:
    registry = make_registry(tmp_path / "repo", NAMES)
    set_page_body(registry, "fetched")
    out = tmp_path / "out"
    build(load_config(registry / "registry.yaml"), out)
    site_url = "https://skill-registry.github.io/skill-registry/"
    assert broken_links(out, site_url) == []
    checked = 0
    for fragment in sorted(out.glob(f"skills/*/{BODY_FILE}")):
        page = fragment.parent / "index.html"  # the body is put into this page, so its URLs resolve from there
        for url in Page(gzip.decompress(fragment.read_bytes()).decode()).urls():
            if url.startswith(("#", "mailto:", "data:")):
                continue
            target = internal_target(out, page, url, site_url)
            if target is not None:
                assert target.is_file(), f"{fragment.relative_to(out)}: {url}"
                checked += 1
    assert checked > 0


def test_switching_page_body_back_and_forth_rebuilds_as_from_scratch(tmp_path: Path) -> None:
    registry = make_registry(tmp_path / "repo", NAMES)
    out = tmp_path / "out"
    for value in ("inline", "fetched", "inline", "fetched"):
        set_page_body(registry, value)
        build(load_config(registry / "registry.yaml"), out)
        scratch = tmp_path / f"scratch-{value}"
        shutil.rmtree(scratch, ignore_errors=True)
        build(load_config(registry / "registry.yaml"), scratch)
        assert _site(_files(out)) == _site(_files(scratch)), value
        assert bool(list(out.glob(f"skills/*/{BODY_FILE}"))) == (value == "fetched")


def test_a_body_edit_rewrites_that_skills_page_and_body_only(tmp_path: Path) -> None:
    registry = make_registry(tmp_path / "repo", NAMES)
    set_page_body(registry, "fetched")
    config = load_config(registry / "registry.yaml")
    out = tmp_path / "out"
    build(config, out)
    before = {p.relative_to(out).as_posix(): p.stat().st_ino for p in out.glob("skills/*/*")}
    skill_md = registry / "skills/csv-profiler/SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + "\nA line only the body has.\n", encoding="utf-8")
    result = build(config, out)
    assert result.written == ("csv-profiler",)
    after = {p.relative_to(out).as_posix(): p.stat().st_ino for p in out.glob("skills/*/*")}
    moved = {rel for rel in before if after.get(rel) != before[rel]}
    assert moved == {"skills/csv-profiler/index.html", f"skills/csv-profiler/{BODY_FILE}"}
    assert b"A line only the body has." in gzip.decompress((out / f"skills/csv-profiler/{BODY_FILE}").read_bytes())
    scratch = tmp_path / "scratch"
    build(config, scratch)
    assert _site(_files(out)) == _site(_files(scratch))


def test_a_hostile_body_is_fetched_sanitised_as_inline(tmp_path: Path) -> None:
    inline_root, fetched_root = tmp_path / "inline", tmp_path / "fetched"
    for root in (inline_root, fetched_root):
        write_hostile_registry(root)
    set_page_body(fetched_root, "fetched")
    build(load_config(inline_root / "registry.yaml"), inline_root / "site")
    build(load_config(fetched_root / "registry.yaml"), fetched_root / "site")
    inline_page = (inline_root / "site/skills/evil-skill/index.html").read_text(encoding="utf-8")
    body = _INLINE_BODY.search(inline_page)
    assert body is not None
    fetched_body, sections = fetched_parts((fetched_root / f"site/skills/evil-skill/{BODY_FILE}").read_bytes())
    assert fetched_body == body.group(1)
    assert sections in inline_page  # the sections escape the skill's text as the inline page does
    parsed = Page(fetched_body)
    assert not parsed.scripts and not any(tag in ("script", "iframe", "form", "style") for tag, _ in parsed.tags)
    assert not any(name.startswith("on") for _, attrs in parsed.tags for name in attrs)
    assert not any(url.lower().startswith("javascript:") for url in parsed.urls())


def test_the_bundled_registry_builds_fetched_with_every_page_loading_its_body(tmp_path: Path) -> None:
    registry = tmp_path / "repo"
    registry.mkdir()
    shutil.copy(REPO / "registry.yaml", registry / "registry.yaml")
    shutil.copytree(REPO / "skills", registry / "skills")
    set_page_body(registry, "fetched")
    result = build(load_config(registry / "registry.yaml"), tmp_path / "out", BuildOptions(keep_going=True))
    pages = sorted((tmp_path / "out/skills").glob("*/index.html"))
    assert len(pages) == len(result.published) >= 20
    for page in pages:
        assert _FETCHED_BODY.search(page.read_text(encoding="utf-8")), page
        assert fetched_parts((page.parent / BODY_FILE).read_bytes())[0].strip(), page
