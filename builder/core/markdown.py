"""The one Markdown parser of the registry: CommonMark with GitHub's tables, strikethrough and footnotes
(markdown-it-py), shared by the body checks and the website so both read a SKILL.md the same way.

``links`` finds every link destination of a body: inline links and images, reference definitions, autolinks and
the ``href``/``src`` of raw HTML ``<a>`` and ``<img>`` tags, each with the line and column it starts at.
A pure-Python full parse costs about 2 ms for a typical SKILL.md, so ``links`` parses only the top-level
stretches of the body that can hold a link, cut where the parser provably has nothing open; ``links_full``
parses everything and is the reference the fast path is tested against.
"""

from __future__ import annotations

import contextlib
import functools
import html
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from markdown_it import MarkdownIt, helpers
from markdown_it.common import normalize_url
from markdown_it.common.utils import unescapeAll
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin


@dataclass(frozen=True, order=True)
class Link:
    """One destination as the parser reads it: ``href`` is normalised (percent-encoded, backslash escapes
    resolved), ``text`` is how it reads to a person. ``line`` and ``column`` count from 1 within the body."""

    line: int
    column: int
    href: str
    text: str
    kind: str  # link, image, reference, autolink, html


_MARKED = ("link_open", "image", "html_inline")


def _mark_start(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
    """Wrap an inline rule so the token it opens remembers where in the inline text it started."""

    def marked(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        found = rule(state, silent)
        if found and not silent:
            # The first token is the text before this one when some was pending.
            opened = next((t for t in state.tokens[count:] if t.type in _MARKED), None)
            if opened is not None and "start" not in opened.meta:
                opened.meta["start"] = start
                if opened.type != "html_inline" and opened.markup != "autolink":
                    opened.meta["raw"] = _written_destination(state, start, opened.type == "image")
        return found

    return marked


def _written_destination(state: StateInline, start: int, image: bool) -> str | None:
    """The destination of the inline link at ``start`` as written (escapes kept, ``<>`` dropped), or None for a
    reference use (``[text][label]``, ``[label]``), whose destination is the definition's."""
    end = state.md.helpers.parseLinkLabel(state, start + image, not image)
    src = state.src
    pos = end + 1
    if end < 0 or pos >= state.posMax or src[pos] != "(":
        return None
    pos += 1
    while pos < state.posMax and src[pos] in " \t\n":
        pos += 1
    found = state.md.helpers.parseLinkDestination(src, pos, state.posMax)
    if not found.ok:
        return None
    written = src[pos:found.pos]
    return written[1:-1] if written.startswith("<") and written.endswith(">") else written


# The runs of a bare link destination that need no decision: not a space, control character, backslash or paren.
_DESTINATION_RUN = re.compile(r"[^\x00-\x20\x7f\\()]+")


def parse_link_destination(string: str, pos: int, maximum: int) -> Any:
    """markdown-it's ``parseLinkDestination`` with the same result, jumping over ordinary characters with one
    regular expression instead of a Python step per character: on hostile bodies (a destination may hold 32
    levels of parentheses) the per-character loop made a 1 MiB body take tens of seconds."""
    if pos >= maximum or string[pos] == "<":
        return helpers.parseLinkDestination(string, pos, maximum)
    result = helpers.parseLinkDestination(string, pos, pos)  # an empty result of the library's own type
    start, level = pos, 0
    while pos < maximum:
        run = _DESTINATION_RUN.match(string, pos, maximum)
        if run is not None:
            pos = run.end()
            continue
        char = string[pos]
        if char <= " " or char == "\x7f":
            break
        if char == "\\" and pos + 1 < maximum:
            if string[pos + 1] == " ":
                break
            pos += 2
            continue
        if char == "(":
            level += 1
            if level > 32:
                return result
        elif char == ")":
            if level == 0:
                break
            level -= 1
        pos += 1
    if start == pos or level != 0:
        return result
    result.str = unescapeAll(string[start:pos])
    result.pos = pos
    result.ok = True
    return result


# A destination that mdurl's parse, format and percent-encoding give back unchanged: a relative path (no `:`, no
# leading `//`) or an http(s) URL with a lowercase ASCII host, of letters, digits and the characters its encoding
# keeps (`%` is decided per escape).
_PLAIN = r"[A-Za-z0-9;/?@&=+$,\-_.!~*'()#]"
_PLAIN_DESTINATION = re.compile(rf"(?!//){_PLAIN}*|https?://[a-z0-9.-]+(?:[/?#]{_PLAIN}*)?")


@functools.lru_cache(maxsize=1024)
def _normalize_destination(url: str) -> str:
    return normalize_url.normalizeLink(url)


def normalize_link(url: str) -> str:
    """markdown-it's ``normalizeLink``, the same result: a plain relative path or web URL (most links in a skill)
    is returned as it is without a parse (5-15 us a link), and the others are cached."""
    return url if _PLAIN_DESTINATION.fullmatch(url) else _normalize_destination(url)


def _new_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).use(footnote_plugin, inline=False)
    md.normalizeLink = normalize_link  # type: ignore[method-assign]
    md.helpers = SimpleNamespace(parseLinkLabel=helpers.parseLinkLabel, parseLinkTitle=helpers.parseLinkTitle,
                                 parseLinkDestination=parse_link_destination)  # type: ignore[assignment]
    for name in ("link", "image", "autolink", "html_inline"):
        for rule in md.inline.ruler.__rules__:
            if rule.name == name:
                rule.fn = _mark_start(rule.fn)
    md.inline.ruler.__cache__ = None  # the wrapped functions replace the cached ones
    for block_rule in md.block.ruler.__rules__:
        if block_rule.name == "reference":
            block_rule.fn = _record_definition(block_rule.fn)
    md.block.ruler.__cache__ = None
    md.options["maxNesting"] = BLOCK_NESTING
    for step in md.core.ruler.__rules__:
        if step.name == "inline":
            step.fn = _with_inline_nesting(step.fn)
    md.core.ruler.__cache__ = None
    return md


def _record_definition(rule: Callable[..., bool]) -> Callable[..., bool]:
    """Wrap the reference rule so every definition it reads leaves its lines in ``env["definitions"]``."""

    def recorded(state: Any, start: int, end: int, silent: bool) -> bool:
        found = rule(state, start, end, silent)
        if found and not silent:
            state.env.setdefault("definitions", []).append((start, state.line))
        return found

    return recorded


# markdown-it stops nesting blocks at ``maxNesting`` levels (20 by default), a list taking two: lists and block
# quotes 64 deep (the validator's SK407 limit) need 128 or more. Inline text keeps the default: there each level
# multiplies the work at every `[` of a hostile body.
BLOCK_NESTING = 140
INLINE_NESTING = 20


def _with_inline_nesting(step: Callable[[StateCore], None]) -> Callable[[StateCore], None]:
    def limited(state: StateCore) -> None:
        with _inline_nesting(state.md):
            step(state)

    return limited


@contextlib.contextmanager
def _inline_nesting(md: MarkdownIt) -> Iterator[None]:
    md.options["maxNesting"] = INLINE_NESTING
    try:
        yield
    finally:
        md.options["maxNesting"] = BLOCK_NESTING


PARSER = _new_parser()


def parse(body: str) -> list[Token]:
    """The whole body's tokens, as the website renders them."""
    return PARSER.parse(body, {})


# --- link destinations --------------------------------------------------------------------------------------------

# Text a link destination can come from: an inline link or image (`](`), a reference or footnote definition
# (`]:`), or an autolink or raw HTML tag (`<` and a letter, digit or what an e-mail address starts with). A stretch
# without these holds no link. `]` and `<` are searched apart: a pattern that starts with a literal is found by a
# fast scan for it, where an alternation of the two is tried at every position (four times slower).
_LINK_HINTS = (re.compile(r"\][(:]"), re.compile(r"<[\w.!#$%&'*+/=?^`{|}~-]"))
_NEWLINES = re.compile(r"\r\n?")
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
# A stretch that is one paragraph and nothing else: every line starts with an ASCII letter (no indentation,
# container, heading, fence, HTML, table delimiter, setext underline or definition can start so), blank lines
# only at its end. The block parser would make it one inline token of those lines, trailing blanks stripped.
_PLAIN_PARAGRAPH = re.compile(r"((?:[A-Za-z][^\n]*\n)*[A-Za-z][^\n]*)(?:\n[ \t]*)*")
# A stretch that is one tight `-` list of one-line items, each `- ` and an ASCII letter: each item is a paragraph
# of the text after its marker (a line starting so can neither continue the item before nor nest).
_PLAIN_LIST = re.compile(r"((?:- [A-Za-z][^\n]*\n)*- [A-Za-z][^\n]*)(?:\n[ \t]*)*")
_BLANK_THEN_TOP = re.compile(r"\n[ \t]*\n(?=[^ \t\n])")
_BLANK = re.compile(r"\n[ \t]*(?:\n|$)")


# Kinds of ``Link`` that are text the website never shows (comments, definitions of links to nothing), not links.
HIDDEN_KINDS = frozenset({"comment", "definition"})


def links(body: str) -> list[Link]:
    """Every link destination of ``body``, sorted by position; the same list as ``links_full(body)``."""
    return links_and_hidden(body)[0]


def links_and_hidden(body: str) -> tuple[list[Link], list[Link]]:
    """``links(body)``, and from the same parse the text agents read that the website hides: HTML comments
    (kind ``comment``) and reference definitions of links to nothing (``definition``), sorted by position."""
    found = _links_and_hidden(body)
    return [link for link in found if link.kind not in HIDDEN_KINDS], \
        [link for link in found if link.kind in HIDDEN_KINDS]


def _links_and_hidden(body: str) -> list[Link]:
    body = _normalise(body)
    if not any(hint.search(body) for hint in _LINK_HINTS):
        return []
    env: dict[str, Any] = {}
    blocks: list[tuple[int, list[Token]]] = []
    line = 0
    last = 0
    for start, end in _stretches(body):
        line += body.count("\n", last, start)
        last = start
        plain = _PLAIN_PARAGRAPH.fullmatch(body, start, end)
        if plain is not None:  # what the block parser makes of it, without running it
            content = plain.group(1)
            blocks.append((line, [Token("inline", "", 0, map=[0, content.count("\n") + 1], content=content.rstrip())]))
            continue
        plain = _PLAIN_LIST.fullmatch(body, start, end)
        if plain is not None:  # one paragraph for each item, of the text after its marker
            items = plain.group(1).split("\n")
            blocks.append((line, [Token("inline", "", 0, map=[i, i + 1], content=item[2:].rstrip())
                                  for i, item in enumerate(items)]))
            continue
        tokens: list[Token] = []
        known = len(env.get("references", ()))
        noted = len(env.get("definitions", ()))
        PARSER.block.parse(body[start:end], PARSER, env, tokens)
        if len(env.get("definitions", ())) > noted:
            env["definitions"][noted:] = [(line + a, line + b) for a, b in env["definitions"][noted:]]
        added = len(env.get("references", ())) - known
        for ref in itertools.islice(reversed(env["references"].values()), added) if added else ():
            ref["map"] = [line + ref["map"][0], line + ref["map"][1]]  # the new ones: dicts keep their order
        blocks.append((line, tokens))
    has_references = bool(env.get("references"))
    with _inline_nesting(PARSER):
        for _, tokens in blocks:
            for token in tokens:
                if token.type == "inline":
                    token.children = []
                    # Without `](` or `<` it holds no link, image, autolink or tag: only reference uses (their
                    # destination is the definition's, found by the block parser) and checkboxes such as `[ ]`.
                    if "](" in token.content or "<" in token.content:
                        scanned = _plain_inline_links(token.content, has_references)
                        if scanned is None:
                            PARSER.inline.parse(token.content, PARSER, env, token.children)
                        else:
                            token.meta["plain"] = scanned
    source = body.split("\n")
    found = [link for offset, tokens in blocks for link in _token_links(tokens, offset, source)]
    found += _reference_links(env, source)
    found += _definition_notes(env, source)
    return sorted(set(found))


def links_full(body: str) -> list[Link]:
    """Every link destination of ``body`` from a parse of the whole text: the reference for ``links``. Links in
    footnotes nothing refers to count too (the website leaves such notes out; their links are still checked)."""
    body = _normalise(body)
    env: dict[str, Any] = {}
    state = StateCore(body, PARSER, env)
    # Every core step but the footnotes' tail, which leaves out notes nothing refers to: their links are checked.
    for rule in PARSER.core.ruler.__rules__:
        if rule.enabled and rule.name != "footnote_tail":
            rule.fn(state)
    tokens = state.tokens
    source = body.split("\n")
    found = set(_token_links(tokens, 0, source)) | set(_reference_links(env, source))
    return sorted(link for link in found if link.kind not in HIDDEN_KINDS)


def _normalise(body: str) -> str:
    """What markdown-it's first step does to the text (line endings; NUL), done first so lines count alike."""
    return _NEWLINES.sub("\n", body).replace("\0", "\ufffd")


def _stretches(body: str) -> Iterator[tuple[int, int]]:
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
    hints = _FirstOf([_Forward(hint, body) for hint in _LINK_HINTS])
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
            if hint >= end:
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
        close = re.compile(rf"\n {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$", re.MULTILINE)
        found = close.search(body, line_end)
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


def _token_links(tokens: Sequence[Token], offset: int, source: list[str]) -> Iterator[Link]:
    for token in tokens:
        if token.type == "inline" and token.map is not None:
            yield from _inline_links(token, offset + token.map[0], source)
        elif token.type == "html_block" and token.map is not None:
            lines = token.content.split("\n")
            for line, column, value, kind in _html_tags(token.content):
                at = offset + token.map[0] + line
                href = "" if kind == "comment" else PARSER.normalizeLink(value)
                yield _link(at, _file_column(source, at, lines[line], column), href, kind, value)


def _link(line: int, column: int, href: str, kind: str, written: str | None = None) -> Link:
    return Link(line + 1, column + 1, href, PARSER.normalizeLinkText(href) if written is None else written, kind)


def _inline_links(block: Token, first: int, source: list[str]) -> Iterator[Link]:
    """Links of one block's inline text. Reference uses are left out: their destination is the definition's,
    reported where it is written. Image descriptions are plain text, so links inside them are not walked."""
    content = block.content
    for start, kind, written in block.meta.get("plain", ()):
        line, column, _ = _inline_position(content, start, first, source)
        yield _link(line, column, normalize_link(written), kind, written)
    for token in block.children or ():
        start = token.meta.get("start")
        if start is None:
            continue
        written = token.meta.get("raw")
        if written is None and token.type != "html_inline" and token.markup != "autolink":
            continue
        line, column, text = _inline_position(content, start, first, source)
        if token.type in ("link_open", "image"):
            href = str(token.attrs.get("href" if token.type == "link_open" else "src", ""))
            kind = "autolink" if token.markup == "autolink" else token.type.removesuffix("_open")
            yield _link(line, column, href, kind, written)
        elif token.type == "html_inline":
            for tag_line, tag_column, value, kind in _html_tags(token.content):
                at = line + tag_line
                if tag_line == 0:
                    tag_column += column
                else:
                    tag_column = _file_column(source, at, token.content.split("\n")[tag_line], tag_column)
                yield _link(at, tag_column, "" if kind == "comment" else PARSER.normalizeLink(value), kind, value)


def _inline_position(content: str, start: int, first: int, source: list[str]) -> tuple[int, int, str]:
    """(file line, file column, the line's inline text) of ``content[start]``, the inline text of a block whose
    first line is file line ``first`` (0-based)."""
    line_start = content.rfind("\n", 0, start) + 1
    line_end = content.find("\n", start)
    text = content[line_start:] if line_end < 0 else content[line_start:line_end]
    line = first + content.count("\n", 0, start)
    return line, _file_column(source, line, text, start - line_start), text


# --- inline text read without the inline parser -----------------------------------------------------------------

# What only the inline parser can read: raw HTML and autolinks, backslash escapes, entities, footnote references.
_NOT_PLAIN = re.compile(r"[<\\&]|\[\^")
_BRACKET_OR_BACKTICK = re.compile(r"[\[`]")
_LABEL_STOP = re.compile(r"[\[\]`]")
_BACKTICKS = re.compile(r"`+")
# The rest of an inline link after its text: `](`, a destination of characters no rule of the parser treats
# apart (no space, control character, parenthesis, bracket, backtick, `<`, `>`, backslash or `&`), and `)`.
_PLAIN_LINK_END = re.compile(r"\]\(([^\x00-\x20\x7f()<>\[\]`\\&]+)\)")


def _plain_inline_links(content: str, has_references: bool) -> list[tuple[int, str, str]] | None:
    """(start, kind, destination as written) of each link and image of one block's inline text, as markdown-it's
    inline parser finds them, for text it reads in only one way: plain characters, code spans and links
    ``[text](destination)`` whose text holds no bracket and whose destination is plain. None for anything else,
    which the parser reads instead.

    Like the parser, the scan goes left to right: a code span hides what it holds, a link's text is scanned with
    the code spans in it skipped, and a `[` that starts no inline link is text (unless the body defines
    references, which such a `[` could use: then the parser decides). Linear: no part of the text is searched
    more than twice.
    """
    if _NOT_PLAIN.search(content):
        return None
    spans = _CodeSpans(content)
    found: list[tuple[int, str, str]] = []
    pos = 0
    while True:
        match = _BRACKET_OR_BACKTICK.search(content, pos)
        if match is None:
            return found
        at = match.start()
        if content[at] == "`":
            pos = spans.end(at)
            continue
        label_end = _label_end(content, at, spans)
        if label_end is None:
            return None
        if label_end < 0:  # no `]` closes it: text
            pos = at + 1
            continue
        tail = _PLAIN_LINK_END.match(content, label_end)
        if tail is None or not PARSER.validateLink(normalize_link(tail.group(1))):
            if has_references or content.startswith("](", label_end):
                return None  # a reference use, or a destination only the parser can read
            pos = at + 1  # the `[` is text
            continue
        image = at > pos and content[at - 1] == "!"
        found.append((at - 1, "image", tail.group(1)) if image else (at, "link", tail.group(1)))
        pos = tail.end()


class _CodeSpans:
    """Where the code span opened by a run of backticks ends, as the parser reads it: after the next run of as
    many backticks, or after the opening run alone when there is none (those backticks are then text). Where
    each width of run last occurs is found once, so an opener without a closer costs no search."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._last: dict[int, int] | None = None

    def end(self, at: int) -> int:
        opener = _BACKTICKS.match(self._text, at)
        assert opener is not None
        width = opener.end() - at
        if self._last is None:
            self._last = {run.end() - run.start(): run.start() for run in _BACKTICKS.finditer(self._text)}
        if self._last.get(width, -1) < opener.end():
            return opener.end()
        for run in _BACKTICKS.finditer(self._text, opener.end()):
            if run.end() - run.start() == width:
                return run.end()
        return opener.end()  # not reached: the table holds a later run of this width


def _label_end(content: str, at: int, spans: _CodeSpans) -> int | None:
    """The position of the `]` that closes the link text opened at ``at`` (code spans in it are skipped whole),
    -1 when none does, None when the text holds a `[` (nested brackets: the parser decides)."""
    pos = at + 1
    while True:
        stop = _LABEL_STOP.search(content, pos)
        if stop is None:
            return -1
        char = content[stop.start()]
        if char == "]":
            return stop.start()
        if char == "[":
            return None
        pos = spans.end(stop.start())


def _file_column(source: list[str], line: int, text: str, column: int) -> int:
    """The 0-based file column of ``text[column]``, where ``text`` is the part of file line ``line`` the parser
    kept: the inline text of a block is its lines less their indentation and container markers."""
    whole = source[line] if 0 <= line < len(source) else ""
    found = whole.rfind(text) if text else -1
    return (found if found >= 0 else 0) + column


def _reference_links(env: dict[str, Any], source: list[str]) -> Iterator[Link]:
    for ref in env.get("references", {}).values():
        href = str(ref["href"])
        first = ref["map"][0] if ref.get("map") else 0
        line, column = _definition_position(source, first)
        text = source[line] if line < len(source) else ""
        written = PARSER.helpers.parseLinkDestination(text, column, len(text))
        shown = text[column:written.pos] if written.ok else None
        if shown and shown.startswith("<") and shown.endswith(">"):
            shown = shown[1:-1]
        yield _link(line, column, href, "reference", shown)


def _definition_notes(env: dict[str, Any], source: list[str]) -> Iterator[Link]:
    """Every reference definition of a link to nothing (`[//]: # (note)`, `[x]: <> (note)`), there only for its
    text; repeats of a label count too (the parser keeps only the first, and none of them shows)."""
    for first, end in env.get("definitions", ()):
        line, column = _definition_position(source, first)
        text = source[line] if line < len(source) else ""
        written = PARSER.helpers.parseLinkDestination(text, column, len(text))
        if written.ok and text[column:written.pos] in ("#", "<>"):
            yield _link(first, 0, "", "definition", "\n".join(source[first:end]).strip())


def _definition_position(source: list[str], first: int) -> tuple[int, int]:
    """(line, column), 0-based, of the destination of the reference definition whose label starts on line
    ``first``: after the label's `]:`, on that line or the next one."""
    for line in range(first, len(source)):
        colon = source[line].find("]:")
        if colon < 0:
            continue  # the label runs over several lines
        rest = source[line][colon + 2:]
        if rest.strip():
            return line, colon + 2 + len(rest) - len(rest.lstrip())
        following = source[line + 1] if line + 1 < len(source) else ""
        return line + 1, len(following) - len(following.lstrip())
    return first, 0


# Raw HTML read as a browser's tokenizer reads it, as far as finding start tags needs: a comment runs to `-->` or
# `--!>` (`<!-->` and `<!--->` are empty ones), any other `<!`, `<?` or `</` to the next `>` (an end tag's quoted
# attributes included), and one with no end runs to the end of the text, where nothing after it is a tag. Every
# search moves forwards and the scan stops at the first that fails, so it is linear (the standard library's
# html.parser searches again from every unterminated `<!--`: 40,000 of them took it minutes).
_HTML_SPACE = "\t\n\f\r "
_MARKUP = re.compile(r"<(?:!--|[!?/]|[A-Za-z])")
_COMMENT_END = re.compile(r"--!?>")
_EMPTY_COMMENT = re.compile(r"-?>")
_GT = re.compile(">")
_VALUE = rf"""[{_HTML_SPACE}]*=[{_HTML_SPACE}]*("[^"]*"|'[^']*'|[^{_HTML_SPACE}>]*)"""
_ATTRIBUTE = rf"(?:=[^{_HTML_SPACE}/>=]*|[^{_HTML_SPACE}/>=]+)(?:{_VALUE})?"
# A tag to its `>`: every character but `>` is a separator, an attribute name or a value, so only the end of
# the text stops it; the possessive loop never gives back what it read.
_TAG = re.compile(rf"</?([A-Za-z][^{_HTML_SPACE}/>]*)(?:[{_HTML_SPACE}/]+|{_ATTRIBUTE})*+>")
_ATTRIBUTES = re.compile(rf"(=?[^{_HTML_SPACE}/>=]*)(?:{_VALUE})?")
# Elements whose content is text up to their end tag (RAWTEXT and RCDATA whatever the page's scripting), and
# <plaintext>, whose content is text to the end.
_TEXT_ELEMENTS = {tag: re.compile(rf"</{tag}[{_HTML_SPACE}/>]", re.IGNORECASE)
                  for tag in ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes")}
_LINK_ATTRIBUTES = {"a": "href", "img": "src"}


def _html_tags(source: str) -> list[tuple[int, int, str, str]]:
    """(line, column) within ``source`` (0-based, of the tag's ``<``), URL and kind of each ``<a href>`` and
    ``<img src>``, and the text of each comment (kind ``comment``), in linear time."""
    found: list[tuple[int, int, str, str]] = []
    pos = 0
    line, counted = 0, 0  # the line of position ``counted``: lines are counted once, forwards
    while True:
        markup = _MARKUP.search(source, pos)
        if markup is None:
            return found
        at, opener = markup.start(), markup.group(0)
        if opener == "<!--":
            empty = _EMPTY_COMMENT.match(source, at + 4)
            end = empty or _COMMENT_END.search(source, at + 4)
        elif opener in ("<!", "<?") or opener == "</" and not source[at + 2:at + 3].isalpha():
            end = _GT.search(source, at + 2)
        else:
            end = _TAG.match(source, at)
        if end is None or end.re is not _TAG and opener != "</":  # a comment: text the page never shows
            line += source.count("\n", counted, at)
            counted = at
            text = source[at + len(opener):end.start() if end is not None else len(source)]
            found.append((line, at - source.rfind("\n", 0, at) - 1, text, "comment"))
        if end is None:  # runs to the end of the text
            return found
        pos = end.end()
        if opener == "</" or end.re is not _TAG:
            continue
        tag = end.group(1).lower()
        wanted = _LINK_ATTRIBUTES.get(tag)
        if wanted is not None:
            value = _attribute(source[at + 1 + len(tag):pos - 1], wanted)
            if value is not None:
                line += source.count("\n", counted, at)
                counted = at
                found.append((line, at - source.rfind("\n", 0, at) - 1, value.strip(),
                              "image" if tag == "img" else "link"))
        elif tag == "plaintext":
            return found
        elif tag in _TEXT_ELEMENTS:
            close = _TEXT_ELEMENTS[tag].search(source, pos)
            if close is None:
                return found
            pos = close.start()


def _attribute(attributes: str, wanted: str) -> str | None:
    """The value of the first attribute called ``wanted`` in a start tag's attribute text, references decoded."""
    for match in _ATTRIBUTES.finditer(attributes):
        name, value = match.group(1), match.group(2)
        if name.lower() == wanted:
            if value is None:  # `<a href>`: no destination
                return None
            return html.unescape(value[1:-1] if value[:1] in "'\"" and len(value) > 1 and value[-1] == value[0]
                                 else value)
    return None
