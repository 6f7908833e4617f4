"""The validator's reading of links: a body that defines no reference or footnote (no ``]:``, nine bodies in ten)
is read by cmark-gfm, the website's own renderer (``cmark_links``), in the stretches that can hold a link;
any other body by CommonMark with GitHub's tables, strikethrough and footnotes (markdown-it-py), which reports
each reference definition where it is written. ``bench.links`` compares both with the rendered pages.

``links`` finds every link destination of a body: inline links and images, reference definitions, autolinks and
the ``href``/``src`` of raw HTML ``<a>`` and ``<img>`` tags, each with the line and column it starts at.
A pure-Python full parse costs about 2 ms for a typical SKILL.md, so ``links`` parses only the top-level
stretches of the body that can hold a link, cut where the parser provably has nothing open; ``links_full``
parses everything and is the reference the fast path is tested against. Where those stretches are is
``stretches``' concern, and reading raw HTML tags and comments is ``html_tags``'.
"""

from __future__ import annotations

import contextlib
import functools
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

from . import cmark_links
from .html_tags import html_tags
from .stretches import LINK_HINTS, stretches


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


# --- link destinations --------------------------------------------------------------------------------------------

_NEWLINES = re.compile(r"\r\n?")
# A stretch that is one paragraph and nothing else: every line starts with an ASCII letter (no indentation,
# container, heading, fence, HTML, table delimiter, setext underline or definition can start so), blank lines
# only at its end. The block parser would make it one inline token of those lines, trailing blanks stripped.
_PLAIN_PARAGRAPH = re.compile(r"((?:[A-Za-z][^\n]*\n)*[A-Za-z][^\n]*)(?:\n[ \t]*)*")
# A stretch that is one tight `-` list of one-line items, each `- ` and an ASCII letter: each item is a paragraph
# of the text after its marker (a line starting so can neither continue the item before nor nest).
_PLAIN_LIST = re.compile(r"((?:- [A-Za-z][^\n]*\n)*- [A-Za-z][^\n]*)(?:\n[ \t]*)*")


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
    if not any(hint.search(body) for hint in LINK_HINTS):
        return []
    if "]:" not in body:  # no definition: cmark-gfm, the website's renderer, reads every link where it is
        found = _cmark_links(_only_stretches(body))
        if found is not None:
            return found
    env: dict[str, Any] = {}
    blocks: list[tuple[int, list[Token]]] = []
    line = 0
    last = 0
    for start, end in stretches(body):
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
    if "]:" not in body and (read := _cmark_links(body)) is not None:
        return [link for link in read if link.kind not in HIDDEN_KINDS]
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


def _only_stretches(body: str) -> str:
    """``body`` with every line outside the stretches that can hold a link left empty: the same lines, and each
    stretch parses alone as it does in the whole text, so a parse of this finds the same links, in less text."""
    parts: list[str] = []
    done = 0
    for start, end in stretches(body):
        parts += ("\n" * body.count("\n", done, start), body[start:end])
        done = end
    parts.append("\n" * body.count("\n", done))
    return "".join(parts)


def _cmark_links(body: str) -> list[Link] | None:
    found = cmark_links.links(body, PARSER.normalizeLink, PARSER.validateLink, parse_link_destination, _file_column)
    if found is None:
        return None
    return sorted({Link(line, column, href, PARSER.normalizeLinkText(href) if text is None else text, kind)
                   for line, column, href, text, kind in found})


def _normalise(body: str) -> str:
    """What markdown-it's first step does to the text (line endings; NUL), done first so lines count alike."""
    if "\r" in body:
        body = _NEWLINES.sub("\n", body)
    return body.replace("\0", "\ufffd") if "\0" in body else body




def _token_links(tokens: Sequence[Token], offset: int, source: list[str]) -> Iterator[Link]:
    for token in tokens:
        if token.type == "inline" and token.map is not None:
            yield from _inline_links(token, offset + token.map[0], source)
        elif token.type == "html_block" and token.map is not None:
            lines = token.content.split("\n")
            for line, column, value, kind in html_tags(token.content):
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
            for tag_line, tag_column, value, kind in html_tags(token.content):
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
