"""Where in a Markdown body a link can be: the top-level stretches that hold every possible link destination and
parse alone exactly as they do inside the whole text, found by a linear scan of line starts and link hints, so
the link finder runs the block parser only over them."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

# Text a link destination can come from: an inline link or image (`](`), a reference or footnote definition
# (`]:`), or an autolink or raw HTML tag (`<` and a letter, digit or what an e-mail address starts with). A stretch
# without these holds no link. `]` and `<` are searched apart: a pattern that starts with a literal is found by a
# fast scan for it, where an alternation of the two is tried at every position (four times slower).
LINK_HINTS = (re.compile(r"\][(:]"), re.compile(r"<[\w.!#$%&'*+/=?^`{|}~-]"))
# Lines that change what the following lines are, whatever a blank line says: fenced code and the HTML blocks
# that only an end marker closes (CommonMark types 1-5), or any other HTML block start (types 6 and 7, closed by
# a blank line); and list items and footnotes, the containers that indentation continues.
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$", re.MULTILINE)
_BLOCK_START = re.compile(r"^ {0,3}(?:`{3,}|~{3,}|<)", re.MULTILINE)
_CONTAINER = re.compile(r"^[ \t>]*(?:[-+*]|\d{1,9}[.)]|\[\^)(?:[ \t]|$)", re.MULTILINE)
# The two line patterns above as a line break and a look-ahead (found by a fast scan for "\n"; ``^`` is tried at
# every position): ``_LineStarts`` adds the first line.
_BLOCK_START_AFTER_BREAK = re.compile(r"\n(?= {0,3}(?:`{3,}|~{3,}|<))")
_CONTAINER_AFTER_BREAK = re.compile(r"\n(?=[ \t>]*(?:[-+*]|\d{1,9}[.)]|\[\^)(?:[ \t]|$))", re.MULTILINE)
_HTML_END = (
    (re.compile(r"<(?:script|pre|style|textarea)(?:[\s>]|$)", re.IGNORECASE),
     re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE)),
    (re.compile(r"<!--"), re.compile(r"-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
)
_BLANK_THEN_TOP = re.compile(r"\n[ \t]*\n(?=[^ \t\n])")
_BLANK = re.compile(r"\n[ \t]*(?:\n|$)")


def stretches(body: str) -> Iterator[tuple[int, int]]:
    """(start, end) of stretches of ``body`` that hold every possible link and parse alone exactly as they do
    inside the whole text.

    A cut goes before a line that starts in the first column after a blank line: there every paragraph, list,
    block quote, table, footnote and indented code block has ended. Only fenced code and HTML blocks of types
    1-5 outlive a blank line, so no cut goes inside one. Where the scan cannot tell at top level whether such a
    block starts (a fence or HTML line indented under a list item, or inside an HTML block), it stops cutting:
    the rest of the body is one stretch. The scan visits only block starts and link hints, and every search
    moves forwards, so it is linear.
    """
    n = len(body)
    hints = _FirstOf([_Forward(hint, body) for hint in LINK_HINTS])
    blocks = _LineStarts(_BLOCK_START, _BLOCK_START_AFTER_BREAK, body)
    cuts = _Forward(_BLANK_THEN_TOP, body)
    containers = _LineStarts(_CONTAINER, _CONTAINER_AFTER_BREAK, body)
    start = pos = 0  # ``start``: where the stretch holding ``pos`` begins

    def advance(to: int) -> None:
        """Move ``pos`` to ``to`` over text holding no block start; ``start`` follows the cuts passed."""
        nonlocal start, pos
        for cut in _BLANK_THEN_TOP.finditer(body, pos, min(n, to + 1)):
            if cut.end() <= to:
                start = cut.end()
        pos = max(pos, to)

    def skip(block: int) -> int | None:
        container = containers.find(start)
        return _skip_block(body, block, container is not None and container < block)

    while True:
        hint = hints.find(pos)
        if hint is None:
            return
        block = blocks.find(pos)
        if block is not None and block <= hint:
            advance(block)
            end = skip(block)
            if end is None:
                yield start, n
                return
            pos = end
            if hint >= end or _is_fenced_code(body, block):  # code holds no link, whatever it spells
                continue
        else:
            advance(hint)
        while True:  # to the first cut after the hint, over the blocks that start before it
            cut, block = cuts.find(pos), blocks.find(pos)
            if block is not None and (cut is None or block < cut.end()):
                end = skip(block)
                if end is None:
                    yield start, n
                    return
                pos = end
                continue
            end = n if cut is None else cut.end()
            yield start, end
            start = pos = end
            break


class _FirstOf:
    """Where the first of several patterns matches at or after a position (``_Forward`` for each), as ``start``."""

    def __init__(self, patterns: list[_Forward]) -> None:
        self._patterns = patterns
        self._found: int | None = None
        self._asked = -1  # the position last asked for: no pattern matches between there and ``_found``

    def find(self, pos: int) -> int | None:
        if 0 <= self._asked <= pos and (self._found is None or self._found >= pos):
            return self._found
        found = [match.start() for pattern in self._patterns if (match := pattern.find(pos)) is not None]
        self._found, self._asked = (min(found) if found else None), pos
        return self._found


class _LineStarts:
    """Where the first line at or after a position that ``line`` (a ``^`` pattern) matches starts: ``after_break``
    is the same pattern as a line break and a look-ahead, searched by ``_Forward``; the first line is matched once."""

    def __init__(self, line: re.Pattern[str], after_break: re.Pattern[str], text: str) -> None:
        self._first = 0 if line.match(text) else None
        self._breaks = _Forward(after_break, text)

    def find(self, pos: int) -> int | None:
        if pos <= 0 and self._first is not None:
            return 0
        found = self._breaks.find(max(pos - 1, 0))  # a line starting at ``pos`` follows the break before it
        return None if found is None else found.start() + 1


class _Forward:
    """The first match of a pattern at or after a position, for positions that never move backwards: each part
    of the text is searched once however often it is asked."""

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self._pattern, self._text = pattern, text
        self._match: re.Match[str] | None = None
        self._searched = -1  # where the last search started: no match starts between there and its match

    def find(self, pos: int) -> re.Match[str] | None:
        found = self._match
        if not 0 <= self._searched <= pos or (found is not None and found.start() < pos):
            found = self._match = self._pattern.search(self._text, pos)
            self._searched = pos
        return found


def _is_fenced_code(body: str, begin: int) -> bool:
    """Whether the line at ``begin``, which ``_skip_block`` has just skipped with what it holds, opens fenced code:
    its lines are literal text, so a link hint in them (an HTML example, ``List<String>``) is no link."""
    line_end = body.find("\n", begin)
    fence = _FENCE.match(body, begin, len(body) if line_end < 0 else line_end)
    return fence is not None and not (fence.group(2)[0] == "`" and "`" in fence.group(3))


@functools.lru_cache(maxsize=64)
def _closing_fence(char: str, width: int) -> re.Pattern[str]:
    """The line that closes fenced code opened by ``width`` of ``char``: made once, not looked up at each fence."""
    return re.compile(rf"\n {{0,3}}{re.escape(char)}{{{width},}}[ \t]*$", re.MULTILINE)


def _skip_block(body: str, begin: int, in_container: bool) -> int | None:
    """Where the fenced code or HTML block whose first line starts at ``begin`` ends (or the line after it when
    the line opens nothing that outlives a blank line); None when the scan cannot tell. ``in_container``: a list
    item or footnote started earlier in this stretch, and may hold the line."""
    line_end = body.find("\n", begin)
    line_end = len(body) if line_end < 0 else line_end
    line = body[begin:line_end]
    if in_container and line.startswith(" "):
        return None  # a list item or footnote that holds this line ends on its own terms
    fence = _FENCE.match(line)
    if fence is not None:
        marker, info = fence.group(2), fence.group(3)
        if marker[0] == "`" and "`" in info:
            return line_end  # not a fence: an inline code span
        found = _closing_fence(marker[0], len(marker)).search(body, line_end)
        return len(body) if found is None else found.end()
    text = line.lstrip(" ")
    for opens, closes in _HTML_END:
        if opens.match(text):
            found = closes.search(body, begin)
            if found is None:
                return len(body)
            after = body.find("\n", found.end())
            return len(body) if after < 0 else after
    # An HTML block of type 6 or 7 ends at a blank line, or this `<` line is only text. Either way nothing
    # outlives the next blank line, but a fence or HTML start before it could belong to either reading.
    blank = _BLANK.search(body, line_end)
    end = len(body) if blank is None else blank.start()
    if _BLOCK_START_AFTER_BREAK.search(body, line_end, end):
        return None
    return end
