"""The website: pages for every skill, category and tag, built from the published API; safe; links resolve."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from helpers import REPO
from helpers.site import broken_links, hostile_site, read_page

from builder.core.config import load_config
from builder.publish.build import BuildOptions
from builder.site.page_templates import heading_text, tag_slug
from builder.site.pages import write_site
from builder.site.render import BodyRenderer, resolve_link

NAV = ["../..", "../../categories/", "../../tags/", "../../search/"]


@pytest.fixture(scope="module")
def index(bundled: Path) -> dict:
    return json.loads((bundled / "api/v1/index.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_site(tmp_path_factory.getbasetemp())


def test_the_site_sits_beside_the_api_in_one_output(bundled: Path) -> None:
    for rel in ("index.html", "404.html", "search/index.html", "categories/index.html", "tags/index.html",
                "assets/search.js", "assets/site.css", "sitemap.xml", "api/v1/index.json",
                "api/v1/search-index.json", ".well-known/agent-skills/index.json", ".nojekyll"):
        assert (bundled / rel).is_file(), rel
    assert not [p.name for p in bundled.iterdir() if p.name.startswith(".site-work")]


def test_every_skill_has_a_page_with_install_commands_files_and_provenance(bundled: Path, index: dict) -> None:
    base = index["registry"]["url"]
    for skill in index["skills"]:
        name = skill["name"]
        page_file = bundled / "skills" / name / "index.html"
        text = page_file.read_text(encoding="utf-8")
        detail = json.loads((bundled / f"api/v1/skills/{name}.json").read_text(encoding="utf-8"))
        plain = re.sub(r"<[^>]+>", "", text)  # the commands' tokens sit in spans that keep them whole
        assert f"skillreg install {name} --registry {base}" in plain
        assert f"npx skills add {base}api/v1/skills/{name}" in plain
        page = read_page(page_file)
        zip_path = detail["bundles"]["zip"]["path"]
        assert f"../../{zip_path}" in page.links_to("../../api/v1/bundles/")
        raw = {f"../../{f['raw']}" for f in detail["files"] if "raw" in f}  # wherever the build put the copy
        assert raw and raw <= set(page.links_to("../../"))
        for heading in ("Install", "SKILL.md", "Files", "Frontmatter", "Provenance", "Permissions"):
            assert f">{heading}</h2>" in text
        assert f"<code>{detail['provenance']['source_path']}</code>" in text


def test_skill_pages_are_out_of_the_navigation_and_link_no_other_skill(bundled: Path, index: dict) -> None:
    names = [s["name"] for s in index["skills"]]
    for name in names:
        page = read_page(bundled / "skills" / name / "index.html")
        tabs = [attrs["href"] for tag, attrs in page.tags if tag == "a" and "md-tabs__link" in attrs.get("class", "")]
        assert tabs == NAV
        assert page.links_to("../../skills/") == []
    assert not (bundled / "search" / "search_index.json").exists()  # mkdocs-material's full-text index is off


def test_home_shows_counts_categories_recent_skills_and_a_search_box(bundled: Path, index: dict) -> None:
    text = (bundled / "index.html").read_text(encoding="utf-8")
    page = read_page(bundled / "index.html")
    assert f"<strong>{index['count']}</strong> skills" in text
    used = {s["category"] for s in index["skills"]}
    assert {f"categories/{slug}/" for slug in used} <= set(page.links_to("categories/"))
    assert len(page.links_to("skills/")) == min(10, index["count"])
    assert any(tag == "input" and "sr-search__input" in attrs.get("class", "") for tag, attrs in page.tags)


def test_category_and_tag_pages_list_exactly_their_skills(bundled: Path, index: dict) -> None:
    for category in index["categories"]:
        page = read_page(bundled / "categories" / category["slug"] / "index.html")
        expected = [f"../../skills/{s['name']}/" for s in index["skills"] if s["category"] == category["slug"]]
        assert page.links_to("../../skills/") == expected
    tags = sorted({t for s in index["skills"] for t in s["tags"]})
    assert tags
    for tag in tags:
        page = read_page(bundled / "tags" / tag_slug(tag) / "index.html")
        expected = [f"../../skills/{s['name']}/" for s in index["skills"] if tag in s["tags"]]
        assert page.links_to("../../skills/") == expected


def test_sitemap_lists_every_page_under_the_base_url(bundled: Path, index: dict) -> None:
    sitemap = (bundled / "sitemap.xml").read_text(encoding="utf-8")
    for skill in index["skills"]:
        assert f"<loc>{index['registry']['url']}skills/{skill['name']}/</loc>" in sitemap


def test_every_internal_link_and_asset_of_the_site_resolves(bundled: Path, index: dict) -> None:
    assert broken_links(bundled, index["registry"]["url"]) == []


def test_the_link_check_finds_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text('<a href="../b/">b</a><img src="/base/c.png"><a href="../a/">a</a>')
    assert broken_links(tmp_path, "https://x.org/base/") == ["a/index.html: ../b/", "a/index.html: /base/c.png"]


def test_the_404_page_carries_its_styles_so_it_is_styled_from_any_path(bundled: Path) -> None:
    """A host serves 404.html at any missing address, also under a path the build did not know: its style sheets
    (and the logo they draw) are inside it, never under base_url's path."""
    text = (bundled / "404.html").read_text(encoding="utf-8")
    page = read_page(bundled / "404.html")
    assert [a for tag, a in page.tags if tag == "link" and a.get("rel") == "stylesheet"] == []
    site_css = (bundled / "assets/site.css").read_text(encoding="utf-8")
    assert site_css[:200] in text and "url(logo.svg)" not in text
    assert text.count("<style>") == 3 and 'url("data:image/svg+xml;base64,' in text  # theme, palette, site.css
    assert "sourceMappingURL" not in text


def test_hostile_markdown_and_metadata_reach_no_page_as_markup(hostile: Path) -> None:
    pages = sorted(hostile.rglob("*.html"))
    assert hostile / "skills/evil-skill/index.html" in pages
    for path in pages:
        page = read_page(path)
        for tag, attrs in page.tags:
            if tag == "form" and path == hostile / "404.html":  # its own search box, which opens the search page
                assert attrs == {"class": "sr-notfound", "action": "/hostile/search/", "role": "search"}, attrs
                continue
            if tag == "style" and path == hostile / "404.html":  # the site's own style sheets, inlined
                continue
            assert tag not in ("iframe", "form", "object", "embed", "style"), (path, tag)
            assert not [a for a in attrs if a.startswith("on")], (path, tag, attrs)
            assert "pwned=" not in " ".join(attrs.values()), (path, tag, attrs)
            if tag == "input":  # only the theme's toggles, the install tabs and our search box
                assert attrs.get("type") in ("checkbox", "radio", "search"), (path, attrs)
        assert not [s for s in page.scripts if "pwned" in s], path
    text = (hostile / "skills/evil-skill/index.html").read_text(encoding="utf-8")
    assert "&lt;b onmouseover=&#34;window.__pwned=true&#34;&gt;hover me&lt;/b&gt;" in text
    assert "{{ config }} {% raw %}" in text  # template syntax in a skill is text, never evaluated


def test_skill_relative_links_point_at_raw_files(hostile: Path) -> None:
    page = read_page(hostile / "skills/evil-skill/index.html")
    raw = "../../.well-known/skills/evil-skill/"  # the one raw copy: discovery v0.1's, which the detail names
    assert not page.links_to("../../api/v1/skills/evil-skill/files/")
    assert {raw + "scripts/run.sh", raw + "references/guide.md"} <= set(page.links_to(raw))
    assert ("img", {"src": raw + "assets/logo.png", "alt": "logo"}) in page.tags
    assert "#skill-usage" in page.links_to("#")


@pytest.mark.parametrize(("url", "expected"), [
    ("https://example.org/x", "https://example.org/x"),
    ("mailto:a@example.org", "mailto:a@example.org"),
    ("javascript:alert(1)", None),
    (" JaVaScRiPt:alert(1)", None),
    ("data:text/html;base64,PHNjcmlwdD4=", None),
    ("vbscript:x", None),
    ("//evil.example/x", None),
    ("/etc/passwd", None),
    ("references/a.md", "RAW/references/a.md"),
    ("./references/a.md", "RAW/references/a.md"),
    ("{baseDir}/references/a.md", "RAW/references/a.md"),
    ("${CLAUDE_SKILL_DIR}/references/a.md", "RAW/references/a.md"),
    ("%24%7BCLAUDE_SKILL_DIR%7D/references/a.md", "RAW/references/a.md"),
    ("${CLAUDE_SKILL_DIR}/../other-skill/SKILL.md", None),
    ("references/../references/a.md", "RAW/references/a.md"),
    ("../other-skill/SKILL.md", None),
    ("references/missing.md", None),
    ("references/a b.md", "RAW/references/a%20b.md"),
    ("#usage", "#skill-usage"),
    ("#Bad Id", None),
])
def test_resolve_link(url: str, expected: str | None) -> None:
    assert resolve_link(url, {"references/a.md", "references/a b.md"}, "RAW/") == expected


def test_body_renderer_keeps_formatting_and_drops_active_content() -> None:
    html = BodyRenderer().render(
        "# Title\n\n**bold** `code`\n\n| a |\n|---|\n| 1 |\n\n```python\nx = '<script>'\n```\n\n"
        '<details><summary>More</summary>text</details>\n\n<div id="__config" class="x">clobber</div>\n',
        set(), "RAW/")
    assert '<h2 id="skill-title">Title</h2>' in html  # body headings start below the page title
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html and "<table>" in html
    assert '<code class="language-python">x = \'&lt;script&gt;\'\n</code>' in html
    assert "<details><summary>More</summary>text</details>" in html
    assert "<div>clobber</div>" in html  # no ids or classes from the skill: it cannot clobber the theme's


@pytest.mark.parametrize(("text", "expected"), [
    ("Code review", "Code review"),
    ("</title><script>x</script>", "/title script x /script"),
    ("*emph* [link](javascript:x)", "emph link javascript:x"),
    ("<>", "Untitled"),
])
def test_heading_text_cannot_carry_markup(text: str, expected: str) -> None:
    assert heading_text(text) == expected


@pytest.mark.parametrize(("tag", "expected"), [
    ("csv", "csv"), ("Data Quality", "data-quality"), ("c++", "c"), ("C++", "c"),
    # No letter or digit left, or too long: a stable name from the tag's SHA-256.
    ("日本", "tag-cf2abf0c5be3"), ("日本語", "tag-77710aedc74e"), ("x" * 65, "tag-9537c5fdf120"), ("x" * 64, "x" * 64),
])
def test_tag_slug(tag: str, expected: str) -> None:
    assert tag_slug(tag) == expected


def _api_only(built: Path, dest: Path) -> Path:
    shutil.copytree(built, dest, ignore=lambda d, names: [] if Path(d) != built else
                    [n for n in names if n not in ("api", ".well-known", ".nojekyll", ".claude-plugin")])
    return dest


def _site_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.relative_to(out).parts[0] not in ("api", ".well-known")}


def test_the_site_is_byte_identical_whether_built_in_one_process_or_in_shards(bundled: Path,
                                                                             tmp_path: Path) -> None:
    root = _api_only(bundled, tmp_path / "out")
    result = write_site(load_config(REPO / "registry.yaml"), root, jobs=2)
    assert result.warnings == ()
    assert _site_files(root) == _site_files(bundled)


def test_naive_site_puts_every_skill_in_the_navigation_and_indexes_full_text(hostile: Path, tmp_path: Path) -> None:
    """The benchmark's baseline (bench/, not the package) still builds the straightforward set-up."""
    if str(REPO) not in sys.path:  # bench/ is a folder of the repository, not part of the installed package
        sys.path.insert(0, str(REPO))
    from bench.naive_site import write_naive_site

    root = _api_only(hostile, tmp_path / "out")
    result = write_naive_site(load_config(hostile.parent / "registry.yaml"), root)
    assert result.warnings == ()
    assert (root / "search" / "search_index.json").is_file()
    home = read_page(root / "index.html")
    assert "skills/evil-skill/" in home.links_to("skills/")


def _locs(xml: str) -> list[str]:
    import re

    return re.findall(r"<loc>([^<]*)</loc>", xml)


def test_past_the_protocol_limit_sitemap_xml_becomes_an_index_of_sitemaps(bundled: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from builder.core.config import load_config
    from builder.publish.build import build
    from builder.site import sitemaps

    single = (bundled / "sitemap.xml").read_text(encoding="utf-8")
    assert "<urlset" in single and not list(bundled.glob("sitemap-*.xml"))
    monkeypatch.setattr(sitemaps, "SITEMAP_MAX_URLS", 5)  # the protocol's 50,000, scaled to the bundled registry
    build(load_config(REPO / "registry.yaml"), tmp_path / "out", BuildOptions(keep_going=True))
    out = tmp_path / "out"
    index = (out / "sitemap.xml").read_text(encoding="utf-8")
    assert "<sitemapindex" in index
    parts = sorted(out.glob("sitemap-*.xml"), key=lambda p: int(p.stem.split("-")[1]))
    base = "https://skill-registry.github.io/skill-registry/"
    assert _locs(index) == [base + p.name for p in parts]
    listed = [loc for p in parts for loc in _locs(p.read_text(encoding="utf-8"))]
    assert all(len(_locs(p.read_text(encoding="utf-8"))) <= 5 for p in parts)
    assert listed == _locs(single)
    assert not (out / "robots.txt").exists()  # a project site below a path: crawlers never read its robots.txt


def test_a_rebuild_that_needs_fewer_sitemaps_removes_the_old_parts(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from builder.core.config import load_config
    from builder.publish.build import build
    from builder.site import sitemaps

    config = load_config(REPO / "registry.yaml")
    out = tmp_path / "out"
    limit = sitemaps.SITEMAP_MAX_URLS
    monkeypatch.setattr(sitemaps, "SITEMAP_MAX_URLS", 5)
    build(config, out, BuildOptions(keep_going=True))
    assert list(out.glob("sitemap-*.xml"))
    monkeypatch.setattr(sitemaps, "SITEMAP_MAX_URLS", limit)  # the registry shrank back below one sitemap's worth
    result = build(config, out, BuildOptions(keep_going=True))
    assert result.reused  # an incremental rebuild, not a fresh output
    assert "<urlset" in (out / "sitemap.xml").read_text(encoding="utf-8")
    assert not list(out.glob("sitemap-*.xml"))


def test_sitemaps_stay_under_the_byte_limit_and_robots_txt_names_the_index() -> None:
    from builder.site.sitemaps import robots_txt, sitemap_files

    urls = [f"skills/skill-{i:05d}-{'x' * (i % 40)}/" for i in range(400)]
    files = sitemap_files("https://skills.example.org/", urls, max_bytes=4096)
    assert len(files) > 2 and all(len(data) <= 4096 for data in files.values())
    assert "<sitemapindex" in files["sitemap.xml"].decode()
    listed = [loc for n in range(1, len(files)) for loc in _locs(files[f"sitemap-{n}.xml"].decode())]
    assert listed == ["https://skills.example.org/" + u for u in urls]
    assert files == sitemap_files("https://skills.example.org/", urls, max_bytes=4096)
    assert robots_txt("https://skills.example.org/") == (b"User-agent: *\nAllow: /\n\n"
                                                          b"Sitemap: https://skills.example.org/sitemap.xml\n")
    assert robots_txt("https://someone.github.io/registry/") is None


def test_only_files_published_raw_are_linked_and_the_json_bundle_only_when_published(hostile: Path,
                                                                                    tmp_path: Path) -> None:
    """The API may publish raw copies of only some files and drop the JSON bundle; the page links what exists."""
    root = _api_only(hostile, tmp_path / "out")
    detail_file = root / "api/v1/skills/evil-skill.json"
    detail = json.loads(detail_file.read_text(encoding="utf-8"))
    for f in detail["files"]:
        if f["path"] in ("SKILL.md", "references/guide.md"):  # SKILL.md then comes out of the zip
            (root / f.pop("raw")).unlink()
    (root / detail["bundles"].pop("json")["path"]).unlink()
    detail_file.write_text(json.dumps(detail), encoding="utf-8")
    write_site(load_config(hostile.parent / "registry.yaml"), root)
    page = read_page(root / "skills/evil-skill/index.html")
    text = (root / "skills/evil-skill/index.html").read_text(encoding="utf-8")
    raw = "../../.well-known/skills/evil-skill/"
    links = set(page.links_to(raw))
    assert raw + "scripts/run.sh" in links  # still published raw: linked from the body and the file tree
    assert not {raw + "references/guide.md", raw + "SKILL.md"} & links
    assert '<li class="sr-tree__file">guide.md <span class="sr-size">' in text  # listed in the tree, as text
    assert "the guide" in text and "jump" in text  # the body was read from the zip and rendered
    assert not [h for h in page.links_to("../../api/v1/bundles/") if h.endswith(".json")]
    assert [h for h in page.links_to("../../api/v1/bundles/") if h.endswith(".zip")]
    assert broken_links(root, "https://example.org/hostile/") == []


def test_a_category_page_leaves_out_the_badge_every_skill_on_it_shares(bundled: Path, index: dict) -> None:
    category = index["skills"][0]["category"]
    text = (bundled / "categories" / category / "index.html").read_text(encoding="utf-8")
    assert "sr-list__name" in text and "sr-badge--category" not in text
    tag = index["skills"][0]["tags"][0]
    assert f'sr-badge--category">{category}<' in (bundled / "tags" / tag_slug(tag) / "index.html").read_text(
        encoding="utf-8")


def test_permissions_say_in_one_line_that_a_skill_ships_no_scripts(bundled: Path, index: dict) -> None:
    kinds = set()
    for skill in index["skills"]:
        name = skill["name"]
        text = (bundled / "skills" / name / "index.html").read_text(encoding="utf-8")
        perms = json.loads((bundled / f"api/v1/skills/{name}.json").read_text(encoding="utf-8"))["permissions"]
        section = text[text.index('<h2 id="permissions">'):]
        if any(perms.values()):
            kinds.add("some")
            assert "<dt>Scripts it ships</dt>" in section and "It ships no scripts" not in section, name
            for script in perms["scripts"]:
                assert f"<code>{script}</code>" in section, (name, script)
        else:
            kinds.add("none")
            assert "It ships no scripts and declares no allowed tools." in section and "<dl>" not in section, name
    assert "some" in kinds


def test_a_skill_with_no_scripts_or_tools_gets_the_one_line(tmp_path: Path) -> None:
    from helpers import write_tree

    from builder.core.config import load_config
    from builder.publish.build import build

    write_tree(tmp_path, {
        "registry.yaml": "title: T\nbase_url: https://example.org/r/\n",
        "skills/plain-words/SKILL.md": "---\nname: plain-words\ndescription: Only instructions, used in tests.\n"
                                       "---\n# Plain\n\nJust words.\n",
    })
    build(load_config(tmp_path / "registry.yaml"), tmp_path / "out")
    text = (tmp_path / "out/skills/plain-words/index.html").read_text(encoding="utf-8")
    section = text[text.index('<h2 id="permissions">'):]
    assert "It ships no scripts and declares no allowed tools." in section and "<dl>" not in section
