"""The links of a body that defines no reference or footnote, read by cmark-gfm, the website's own renderer: the
same parse as the page's, in C, with the source position of every link, image and piece of raw HTML.

A body without ``]:`` holds no definition, so every link of it is written where it is (inline, an autolink or a
raw HTML tag) and cmark's syntax tree, written out as XML with source positions, gives them all. Columns are
cmark's byte columns turned into characters. What this returns is what ``markdown.links_and_hidden`` promises:
``Link`` values, sorted, HTML comments apart.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from html import unescape

from . import cmark
from .html_tags import html_tags

# What the validator reads: GitHub's extensions that change where a link can be, not its bare-URL autolinks.
EXTENSIONS = (b"table", b"strikethrough")
_POSITION = r'sourcepos="(?P<line>\d+):(?P<column>\d+)-(?P<end_line>\d+):(?P<end_column>\d+)"'
_NODES = re.compile(
    rf"<(?:(?P<kind>link|image)|html_(?P<html_kind>inline|block)) {_POSITION}"
    r'(?: destination="(?P<destination>[^"]*)" title="[^"]*"(?P<empty> /)?>'
    r'| xml:space="preserve">(?P<html>[^<]*)</html_)'
    r"|</image>")
# The first child of a link or image, whose start is right after the `[` (or `![`): cmark-gfm gives a link that
# runs over lines the start of its last line, but each child its own start.
_FIRST_CHILD = re.compile(r'\s*<\w+ sourcepos="(\d+):(\d+)-')
_SPACE = " \t\n"

# (line, column, href, text, kind), 1-based, as ``markdown.Link`` takes them; an autolink's text is None (the
# parser's ``normalizeLinkText`` of its href, as for the other finder).
Found = tuple[int, int, str, str | None, str]


class _Source:
    """The body's lines, as text and as UTF-8, to turn cmark's (line, byte column) into characters."""

    def __init__(self, body: str) -> None:
        self.lines = body.split("\n")
        self._encoded: dict[int, bytes] = {}
        self._starts: list[int] | None = None
        self._bytes = b""
        self._body = body

    def line(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def column(self, line: int, byte_column: int) -> int:
        """The 0-based character column of 1-based byte column ``byte_column`` of 1-based line ``line``."""
        text = self.line(line)
        if text.isascii():
            return byte_column - 1
        encoded = self._encoded.get(line)
        if encoded is None:
            encoded = self._encoded[line] = text.encode("utf-8", "replace")
        return len(encoded[:byte_column - 1].decode("utf-8", "replace"))

    def text(self, line: int, column: int, end_line: int, end_column: int) -> str:
        """The source from (line, byte column) to (end line, end byte column), both included."""
        if self._starts is None:
            self._bytes = self._body.encode("utf-8", "replace")  # a line break is never part of a replaced character
            # the bytes before each line but its line breaks, summed without a Python step per line
            self._starts = list(itertools.accumulate(map(len, self._bytes.split(b"\n")), initial=0))
        if not (0 < line <= len(self.lines) and 0 < end_line <= len(self.lines)):
            return ""
        start = self._starts[line - 1] + line - 1 + column - 1
        end = self._starts[end_line - 1] + end_line - 1 + end_column
        return self._bytes[start:end].decode("utf-8", "replace")


def links(body: str, normalize: Callable[[str], str], valid: Callable[[str], bool],
          destination: Callable[[str, int, int], object], file_column: Callable[[list[str], int, str, int], int]
          ) -> list[Found] | None:
    """Every link, image, autolink and raw HTML tag or comment of ``body`` (which holds no ``]:``) as ``Found``.
    ``normalize`` and ``valid`` are the parser's ``normalizeLink`` and ``validateLink``, ``destination`` its
    ``parseLinkDestination``, ``file_column`` where a piece of text a container holds sits in its file line.

    None when a position cmark gives does not hold what it says is there: cmark-gfm loses count of lines after a
    link destination or title that runs over a line break, and the caller then reads the body itself."""
    source = _Source(body)
    found: list[Found] = []
    in_image = 0
    xml = cmark.render_xml(body, EXTENSIONS)
    for node in _NODES.finditer(xml):
        kind = node["kind"]
        if kind is None and node["html"] is None:
            in_image -= 1
            continue
        if in_image:
            in_image += kind == "image" and not node["empty"]
            continue
        if kind is None:
            pieces = _html(node, source, normalize, file_column)
            if pieces is None:
                return None
            found += pieces
            continue
        if kind == "image" and not node["empty"]:
            in_image = 1
        line, column = int(node["line"]), int(node["column"])
        child = None if node["empty"] else _FIRST_CHILD.match(xml, node.end())
        if child is not None:
            line, column = int(child[1]), int(child[2]) - (2 if kind == "image" else 1)
        written = _link(node, source, line, column, destination, normalize)
        if written is None:
            return None
        href, text, kind = written
        if kind and valid(href):
            found.append((line, source.column(line, column) + 1, href, text, kind))
    return found


def _link(node: re.Match[str], source: _Source, line: int, column: int, destination: Callable[[str, int, int], object],
          normalize: Callable[[str], str]) -> tuple[str, str | None, str] | None:
    """(href, text, kind) of a link or image node: an inline link's text is its destination as written (escapes
    kept, ``<>`` dropped), an autolink's None; kind "" for a link with no destination (nothing to check, as the
    other finder reads it); None when the source at the node's position is no such link."""
    target = unescape(node["destination"])
    href = normalize(target)
    written = source.text(line, column, int(node["end_line"]), int(node["end_column"]))
    if node["kind"] == "link" and written.startswith("<") and written.endswith(">"):
        return href, None, "autolink"
    if not written.startswith("![" if node["kind"] == "image" else "[") or not written.endswith(")"):
        return None
    if not target:
        return href, None, ""
    as_written = _written_destination(written, target, destination, normalize)
    return None if as_written is None else (href, as_written, str(node["kind"]))


def _written_destination(written: str, target: str, destination: Callable[[str, int, int], object],
                         normalize: Callable[[str], str]) -> str | None:
    """The destination of the inline link or image ``written`` as written: after the `](` whose destination
    reads as cmark read it; None when there is none, or when the destination or title runs over a line break."""
    expected = normalize(target)
    at = written.find("](")
    if "\n" in written[at:]:
        return None  # cmark-gfm's count of lines is lost from here on: let the caller read the body
    while at >= 0:
        pos = at + 2
        while pos < len(written) and written[pos] in _SPACE:
            pos += 1
        result: object = destination(written, pos, len(written))
        if getattr(result, "ok", False) and normalize(str(getattr(result, "str", ""))) == expected:
            raw = written[pos:int(getattr(result, "pos", pos))]
            return raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
        at = written.find("](", at + 2)
    return None


def _html(node: re.Match[str], source: _Source, normalize: Callable[[str], str],
          file_column: Callable[[list[str], int, str, int], int]) -> list[Found] | None:
    """The ``href`` and ``src`` of the tags of a piece of raw HTML, and its comments (kind ``comment``); None when
    the source at its position does not hold it."""
    content = unescape(node["html"])
    lines = content.split("\n")
    first = int(node["line"]) - 1  # 0-based
    start = source.column(first + 1, int(node["column"]))
    block = node["html_kind"] == "block"
    if lines[0] and lines[0].strip() not in source.line(first + 1)[0 if block else start:]:
        return None
    return list(_tags(content, lines, first, start, block, source, normalize, file_column))


def _tags(content: str, lines: list[str], first: int, start: int, block: bool, source: _Source,
          normalize: Callable[[str], str], file_column: Callable[[list[str], int, str, int], int]) -> Iterator[Found]:
    for tag_line, tag_column, value, kind in html_tags(content):
        at = first + tag_line
        if tag_line == 0 and not block:
            column = start + tag_column
        else:
            column = file_column(source.lines, at, lines[tag_line], tag_column)
        yield at + 1, column + 1, "" if kind == "comment" else normalize(value), value, kind
