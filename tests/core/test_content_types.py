"""The one content-type table: what the registry serves a file as, which types a browser runs as a page, and which
skill files are therefore kept to archives. The build, ``serve``, ``upload``, MCP and SK517 all read it; the browser
tests in tests/site/test_site_browser.py load what they publish."""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path

import pytest
from helpers import REPO

from builder.core.content_types import (
    ArchiveOnly,
    content_type,
    extension,
    is_executable,
    kept_to_archives,
    may_hold_markup,
    table,
)

MIME_DB = REPO / "tests/foreign/node_modules/mime-db/db.json"  # what GitHub Pages types files by (npm ci installs it)
RUST = b"fn main() {\n    let v: Vec<u8> = Vec::new();\n    if v.len() < 1 { println!(\"empty\"); }\n}\n"


@pytest.mark.parametrize(("path", "expected"), [
    ("a.svg", "svg"), ("assets/A.SVG", "svg"), (".svg", "svg"), ("x.tar.gz", "gz"), ("page.html.txt", "txt"),
    ("README", ""), ("folder.d/Makefile", ""), ("ends.", ""),
])
def test_the_extension_is_what_follows_the_last_dot_of_the_name_in_lower_case(path: str, expected: str) -> None:
    assert extension(path) == expected


@pytest.mark.parametrize("media", [
    "text/html", "Text/HTML; charset=utf-8", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
    "text/xsl", "application/xslt+xml", "application/mathml+xml", "text/mathml", "application/rls-services+xml",
    "application/vnd.mozilla.xul+xml", "application/rdf+xml", "application/xml-dtd",
])
def test_html_and_every_xml_type_are_executable(media: str) -> None:
    assert is_executable(media)


@pytest.mark.parametrize("media", [
    "text/plain", "text/markdown", "application/json", "text/javascript", "text/css", "image/png", "application/pdf",
    "application/zip", "application/octet-stream", "application/vnd.wap.wbxml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
])
def test_text_data_and_media_types_are_not(media: str) -> None:
    assert not is_executable(media)


@pytest.mark.parametrize(("path", "data", "expected"), [
    ("src/main.rs", RUST, "text/plain; charset=utf-8"),  # Rust, not application/rls-services+xml
    ("assets/process.apxml", b"<p/>", "text/plain; charset=utf-8"),  # an extension the table does not know
    ("assets/flow.xpdl", b"<p/>", "text/plain; charset=utf-8"),
    ("LICENSE", b"MIT", "text/plain; charset=utf-8"),
    ("notes.txt", b"caf\xe9", "text/plain"),  # not UTF-8: no charset claimed
    ("data.bin", b"\0\1", "application/octet-stream"),
    ("blob", b"\xff\xfe\0", "application/octet-stream"),
    ("skills/x/index.html", b"<p>", "text/html; charset=utf-8"),  # the website's own page
    ("sitemap.xml", b"<urlset/>", "application/xml; charset=utf-8"),
    ("api/v1/index.json", b"{}", "application/json; charset=utf-8"),
    ("SKILL.md", b"# x", "text/markdown; charset=utf-8"),
    ("logo.svgz", b"\x1f\x8b\x08", "image/svg+xml"),
    ("bundle.zip", b"PK", "application/zip"),
])
def test_the_type_comes_from_the_table_and_an_unknown_extension_is_text_or_bytes(path: str, data: bytes,
                                                                                 expected: str) -> None:
    assert content_type(path, data) == expected


@pytest.mark.parametrize(("path", "data", "expected"), [
    ("viewer.html", b"<script>x</script>", "text/plain; charset=utf-8"),
    ("diagram.svg", b"<svg/>", "text/plain; charset=utf-8"),
    ("diagram.svgz", b"\x1f\x8b\x08\0", "application/octet-stream"),
    ("formula.mml", b"<math/>", "text/plain; charset=utf-8"),
    ("notes.md", b"# x", "text/markdown; charset=utf-8"),
])
def test_a_skill_file_is_never_sent_as_an_executable_type(path: str, data: bytes, expected: str) -> None:
    assert content_type(path, data, skill_file=True) == expected


ETC_MIME_TYPES = Path("/etc/mime.types")


def _host_table(source: str) -> dict[str, set[str]]:
    """Every extension a host's table knows, with its types: Python's own, Debian's /etc/mime.types or mime-db."""
    if source == "mime-db":
        if not MIME_DB.is_file():
            pytest.skip("tests/foreign/node_modules is not installed (npm ci --prefix tests/foreign)")
        db = json.loads(MIME_DB.read_text(encoding="utf-8"))
        known: dict[str, set[str]] = {}
        for media, entry in db.items():
            for ext in entry.get("extensions", []):
                known.setdefault(ext, set()).add(media)
        return known
    if source == "etc-mime-types" and not ETC_MIME_TYPES.is_file():
        pytest.skip("no /etc/mime.types on this machine")
    guesser = mimetypes.MimeTypes(filenames=[str(ETC_MIME_TYPES)] if source == "etc-mime-types" else [])
    known = {}
    for strict in (True, False):
        for ext, media in guesser.types_map[strict].items():
            known.setdefault(ext[1:].lower(), set()).add(media)
    return known


@pytest.mark.parametrize("source", ["python", "etc-mime-types", "mime-db"])
def test_no_extension_a_host_calls_active_is_sent_active_unless_the_table_says_so(source: str) -> None:
    """Python's http.server (what `serve` was) types files by the machine's tables; the registry never does."""
    active = {ext for ext, types in _host_table(source).items() if any(map(is_executable, types))}
    assert {"svg", "html", "xml"} <= active
    for ext in active:
        sent = content_type(f"file.{ext}", b"<x/>")
        assert not is_executable(sent) or ext in table().served, (ext, sent)


@pytest.mark.parametrize("source", ["python", "etc-mime-types", "mime-db"])
def test_every_extension_a_common_host_serves_as_a_page_is_kept_to_archives(source: str) -> None:
    """What a host typing files by its own table would run is never published raw: the table lists every such
    extension of mime-db (GitHub Pages), Debian's /etc/mime.types and Python's own table."""
    missed = sorted(ext for ext, types in _host_table(source).items()
                    if any(map(is_executable, types)) and kept_to_archives(f"file.{ext}", b"<x/>") is None)
    assert missed == [], f"add these to `elsewhere` in builder/data/content_types.yaml: {missed}"


def test_the_table_is_consistent() -> None:
    assert all(is_executable(media) for media in table().elsewhere.values())
    assert not {ext for ext, media in table().served.items() if is_executable(media)} & table().elsewhere.keys()
    assert all(ext == ext.lower() and "." not in ext for ext in (*table().served, *table().elsewhere))


@pytest.mark.parametrize(("path", "data", "expected"), [
    ("assets/viewer.html", b"<p>a viewer</p>", ArchiveOnly("text/html", host=False)),
    ("assets/viewer.html", b"", ArchiveOnly("text/html", host=False)),
    ("assets/diagram.svg", b"<svg/>", ArchiveOnly("image/svg+xml", host=False)),
    ("assets/LOUD.SVG", b"x", ArchiveOnly("image/svg+xml", host=False)),
    ("assets/.svg", b"<svg/>", ArchiveOnly("image/svg+xml", host=False)),
    ("data/feed.xml", b"not xml at all", ArchiveOnly("application/xml", host=False)),  # our own type: always
    ("page.xhtml", b"<html/>", ArchiveOnly("application/xhtml+xml", host=False)),
    ("formula.mml", b"<math/>", ArchiveOnly("application/mathml+xml", host=False)),
    ("page.shtml", b"plain words", ArchiveOnly("text/html", host=True)),  # HTML on a host: whatever it holds
    ("src/markup.rs", b"<html xmlns='http://www.w3.org/1999/xhtml'/>",
     ArchiveOnly("application/rls-services+xml", host=True)),
    ("src/bom.rs", b"\xef\xbb\xbf \n<x/>", ArchiveOnly("application/rls-services+xml", host=True)),
    ("src/utf16.rs", "\ufeff<x/>".encode("utf-16-le"), ArchiveOnly("application/rls-services+xml", host=True)),
    ("src/utf16be.rs", "<x/>".encode("utf-16-be"), ArchiveOnly("application/rls-services+xml", host=True)),
    ("src/shift.rs", b"\x1b(B<x/>", ArchiveOnly("application/rls-services+xml", host=True)),
    ("assets/process.apxml", b"<p/>", ArchiveOnly("application/auth-policy+xml", host=True)),
    ("assets/flow.xpdl", b"\n<p/>", ArchiveOnly("application/xml", host=True)),
    ("src/main.rs", RUST, None),  # Rust cannot begin an XML document: a host's XML type runs nothing
    ("configure.ac", b"AC_INIT([x], [1.0])\n", None),
    ("salt/init.sls", b"base:\n  '*':\n    - web\n", None),
    ("go.mod", b"module example.org/x\n", None),
    ("template.html.txt", b"<script>x</script>", None),
    ("notes.md", b"<script>x</script>", None),
    ("run.js", b"document.write('<script>')", None),
    ("README", b"<html>", None),
])
def test_a_file_is_kept_to_archives_when_a_browser_would_run_it(path: str, data: bytes,
                                                                expected: ArchiveOnly | None) -> None:
    assert kept_to_archives(path, data) == expected


@pytest.mark.parametrize(("data", "expected"), [
    (b"<x/>", True), (b"  \t\r\n<x/>", True), (b"\xfe\xff\0<", True), (b"\0\0\0<", True), (b"\x1b$B", True),
    (b"", False), (b"x<y/>", False), (b"\xc2\xa0<x/>", False), (b"\x0b<x/>", False), (b"// <x/>", False),
])
def test_only_markup_at_the_start_can_begin_an_xml_document(data: bytes, expected: bool) -> None:
    assert may_hold_markup(data) is expected
