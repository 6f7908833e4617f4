"""What the registry serves a file as, and which of those types a browser runs as a page on the registry's origin.

One table for the whole project (``data/content_types.yaml``): the build keeps a skill's files of an executable type
out of the raw copies on the site (they travel in the archives only), ``serve`` and ``upload`` send the table's type,
the MCP server names resources with it, and SK517 says which files are kept to archives. The table is fixed, never
the machine's ``/etc/mime.types`` or Python's own table, so a type does not depend on where a registry is built or
served, and an extension it does not know is served as text or bytes, never as a type a browser runs.

A static host that picks types itself (GitHub Pages takes mime-db's table) gives some extensions an executable type
the table does not: ``.rs`` is Rust source to us and ``application/rls-services+xml`` to mime-db. The table lists
those extensions too (``elsewhere``), and a file such a host would run is kept to archives as well.
"""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

TEXT = "text/plain"
BINARY = "application/octet-stream"
CHARSET = "; charset=utf-8"

# Subtypes (after the slash, lower case) a browser renders as a document that can hold script: HTML, and XML, where
# XHTML, SVG and MathML elements get their behaviour (any */xml, */*+xml, XSL stylesheets, XUL, RDF, and the
# xml-* types of DTDs and entities, which no browser should meet as a page and none needs to).
_XML_SUBTYPES = frozenset({"xml", "xsl", "xslt", "mathml", "xul", "rdf"})
# Where an XML document can begin, before its first `<`: byte order marks and white space, read in any encoding a
# browser decodes XML in (UTF-16 puts a NUL beside each ASCII byte). An escape byte (0x1B) could start an
# ISO-2022-JP shift sequence that leads to one, so it counts as a `<`.
_MARKUP_START = re.compile(rb"[\x00\t\n\r \xef\xbb\xbf\xfe\xff]*[<\x1b]")


@dataclass(frozen=True)
class Table:
    served: dict[str, str]  # extension -> the media type we send
    elsewhere: dict[str, str]  # extension -> an executable type another common host sends


@functools.cache
def table() -> Table:
    text = (Path(__file__).parents[1] / "data" / "content_types.yaml").read_text(encoding="utf-8")
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

    def by_extension(section: dict[str, str]) -> dict[str, str]:
        return {ext: media for media, exts in section.items() for ext in exts.split()}

    return Table(by_extension(data["served"]), by_extension(data["elsewhere"]))


def extension(path: str) -> str:
    """The extension a host types a file by: the lower-case text after the last dot of its name (``.svg`` has one,
    as nginx and Go's servers read it; ``README`` has none)."""
    name = posixpath.basename(path)
    return name.rpartition(".")[2].lower() if "." in name else ""


def media_type(path: str) -> str | None:
    """The table's media type for ``path`` (no parameters), or None when the table does not know its extension."""
    return table().served.get(extension(path))


def is_executable(media: str) -> bool:
    """Whether a browser opening a resource of type ``media`` builds a document that can run script or load pages:
    HTML or XML of any kind (XHTML, SVG, MathML, XSLT, every ``+xml`` type)."""
    essence = media.split(";", 1)[0].strip().lower()
    subtype = essence.partition("/")[2]
    return (subtype.endswith("html") or subtype in _XML_SUBTYPES or subtype.endswith("+xml")
            or subtype.startswith("xml-"))


def _is_textual(media: str) -> bool:
    subtype = media.partition("/")[2]
    return media.startswith("text/") or subtype in ("json", "javascript", "yaml", "toml", "x-sh", "xml") or \
        subtype.endswith(("+json", "+xml"))


def _is_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def content_type(path: str, data: bytes, *, skill_file: bool = False) -> str:
    """The ``Content-Type`` the registry sends for ``path`` holding ``data``: the table's type, with
    ``charset=utf-8`` on text that is UTF-8; an unknown extension is plain text when the bytes are UTF-8, else bytes.
    A skill's own file (``skill_file``) is never sent as an executable type, whatever its extension."""
    media = media_type(path)
    if media is None or (skill_file and is_executable(media)):
        return TEXT + CHARSET if _is_text(data) else BINARY
    if _is_textual(media):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return media
        return media + CHARSET
    return media


@dataclass(frozen=True)
class ArchiveOnly:
    """Why a skill's file is kept out of the site's raw copies: the executable ``media_type`` it would be served as,
    by the table (``host`` False) or by a static host's own table (``host`` True, the extension's type there)."""

    media_type: str
    host: bool


def may_hold_markup(data: bytes) -> bool:
    """Whether an XML parser could build an element from ``data``: only when its first character, after a byte
    order mark and white space, is ``<``. Anything else is a well-formedness error at the first character, so a
    browser shows an error and runs nothing."""
    return _MARKUP_START.match(data) is not None


def kept_to_archives(path: str, data: bytes) -> ArchiveOnly | None:
    """Why a skill's file at ``path`` must not be published raw on the registry's origin, or None when it may be:
    the table gives it an executable type, or a static host gives its extension one (HTML always; XML when the
    bytes could begin a document, so Rust's ``main.rs`` stays text where mime-db calls ``.rs`` XML)."""
    ours = media_type(path)
    if ours is not None and is_executable(ours):
        return ArchiveOnly(ours, host=False)
    theirs = table().elsewhere.get(extension(path))
    if theirs is not None and (theirs.partition("/")[2].endswith("html") or may_hold_markup(data)):
        return ArchiveOnly(theirs, host=True)
    return None
