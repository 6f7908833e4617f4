"""GitHub's autolink extension for the website's renderer: bare ``http://``, ``https://`` and ``ftp://`` URLs,
``www.`` addresses and e-mail addresses (with or without ``mailto:``/``xmpp:``) become links, as cmark-gfm reads
them (GFM spec, "Autolinks (extension)").

mdit-py-plugins has a GFM autolink plugin, but it reads some cases otherwise than GitHub (no URL after a quote,
no e-mail after a comma) and copies the rest of the paragraph at every `:`, which a body of colons turns into
minutes. These rules read the text in place: each scan stops where the next one could start, so a body is read
in time linear in its length. What they keep from cmark-gfm: URLs and ``www.`` addresses are not linked while a
`[` of the paragraph is still open (the link it may start is GitHub's business), e-mails are. One limit of ours:
a ``www.`` domain longer than ``MAX_DOMAIN`` characters is not linked (DNS allows 253), so a hostile run of
``www.a_www.a_...`` costs a bounded scan at each of its starts.
"""

from __future__ import annotations

import unicodedata

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

MAX_DOMAIN = 255
_SCHEMES = ("http", "https", "ftp")
_SPACE = frozenset(" \t\n\x0b\x0c\r")
_BEFORE_WWW = frozenset(" \t\n\x0b\x0c\r*_~(")
_TRAILING = frozenset("?!.,:*_~'\"")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-_")
_OPEN_BRACKETS = "gfm_open_brackets"


def autolinks_plugin(md: MarkdownIt) -> None:
    """Add the URL rules (at `:` and `w`), the bracket count they depend on and the e-mail step."""
    md.inline.add_terminator_char("w")
    md.inline.ruler.push("gfm_url", _url_rule)
    md.inline.ruler.push("gfm_www", _www_rule)
    md.inline.ruler.push("gfm_brackets", _bracket_rule)  # last: reached at a `[` only when no link starts there
    md.core.ruler.after("text_join", "gfm_email", _email_step)


def _is_alpha(char: str) -> bool:
    return char.isascii() and char.isalpha()


def _is_alnum(char: str) -> bool:
    """An ASCII letter or digit. cmark-gfm's domain check goes on past these, `-`, `_` and `.` only (it reads
    bytes, so its domain ends at the first non-ASCII character; the link goes on to the next white space)."""
    return char.isascii() and char.isalnum()


def _starts_host(char: str) -> bool:
    """What may follow ``://``: an ASCII letter or digit, or a non-ASCII letter, mark or number."""
    return char.isalnum() if char.isascii() else unicodedata.category(char)[0] in "LMN"


def _bracket_rule(state: StateInline, silent: bool) -> bool:
    """Count the `[` that start no link and the `]` that close one (cmark-gfm's bracket stack); never matches."""
    char = state.src[state.pos]
    if not silent and state.linkLevel == 0 and char in "[]":
        open_now = getattr(state, _OPEN_BRACKETS, 0)
        setattr(state, _OPEN_BRACKETS, open_now + 1 if char == "[" else max(open_now - 1, 0))
    return False


def _in_bracket(state: StateInline) -> bool:
    return state.linkLevel > 0 or getattr(state, _OPEN_BRACKETS, 0) > 0


def _domain_end(src: str, start: int, end: int, allow_short: bool, limit: int | None = None) -> int:
    """Where a valid domain starting at ``src[start]`` ends, or -1: host characters, `-`, `_` and `.`, no `_` in
    its last two segments, a `.` unless ``allow_short``. The first character is taken as checked already."""
    if not src[start].isascii():  # cmark-gfm's byte-wise check stops inside the character
        return start + 1 if allow_short else -1
    dots = last_underscores = underscores = 0
    i = start + 1
    stop = end - 1 if limit is None else min(end - 1, start + limit)
    while i < stop:
        if src[i] == "\\" and i < end - 2:
            i += 1
        char = src[i]
        if char == "_":
            underscores += 1
        elif char == ".":
            last_underscores, underscores = underscores, 0
            dots += 1
        elif char != "-" and not _is_alnum(char):
            break
        i += 1
    else:
        if limit is not None and i >= start + limit:
            return -1
    if last_underscores or underscores or not (allow_short or dots):
        return -1
    return i


def _link_end(src: str, start: int, end: int) -> int:
    """The end of the link text after its domain: up to white space or `<`, less trailing punctuation, an
    entity-like `&name;` at the end and closing parentheses without an opening one."""
    opening, closing = src.count("(", start, end), src.count(")", start, end)
    while end > start:
        char = src[end - 1]
        if char in _TRAILING:
            end -= 1
        elif char == ";":
            before = end - 2
            while before > start and _is_alpha(src[before]):
                before -= 1
            end = before if before < end - 2 and src[before] == "&" else end - 1
        elif char == ")" and closing > opening:
            end -= 1
            closing -= 1
        else:
            break
    return end


def _run_end(src: str, pos: int, end: int) -> int:
    """The first white space or `<` from ``pos`` on."""
    while pos < end and src[pos] not in _SPACE and src[pos] != "<":
        pos += 1
    return pos


def _push_link(state: StateInline, url: str, text: str, written_before: int, end: int) -> bool:
    """The link tokens; the ``written_before`` characters before ``state.pos`` (a scheme, an e-mail's local
    part) leave the pending text, and reading goes on at ``end``."""
    href = state.md.normalizeLink(url)
    if not state.md.validateLink(href):
        return False
    if written_before:
        state.pending = state.pending[:-written_before]
    token = state.push("link_open", "a", 1)
    token.attrs = {"href": href}
    token.markup, token.info = "autolink", "auto"
    token = state.push("text", "", 0)
    token.content = text  # as written, as GitHub shows it
    token = state.push("link_close", "a", -1)
    token.markup, token.info = "autolink", "auto"
    state.pos = end
    return True


def _url_rule(state: StateInline, silent: bool) -> bool:
    """``http://``, ``https://``, ``ftp://`` (any case) after a run of letters that is exactly the scheme."""
    src, pos, end = state.src, state.pos, state.posMax
    if silent or src[pos] != ":" or not src.startswith("//", pos + 1) or _in_bracket(state):
        return False
    start = pos
    while start > 0 and pos - start < 6 and _is_alpha(src[start - 1]):
        start -= 1
    scheme = src[start:pos]
    if scheme.lower() not in _SCHEMES or (start > 0 and _is_alpha(src[start - 1])):
        return False
    if not state.pending.endswith(scheme) or pos + 3 >= end or not _starts_host(src[pos + 3]):
        return False
    domain = _domain_end(src, pos + 3, end, allow_short=True)
    if domain < 0:
        return False
    link_end = _link_end(src, pos, _run_end(src, domain, end))
    return _push_link(state, src[start:link_end], src[start:link_end], pos - start, link_end)


def _www_rule(state: StateInline, silent: bool) -> bool:
    """``www.`` at the start of the text or after white space, `*`, `_`, `~` or `(`; linked as ``http://``."""
    src, pos, end = state.src, state.pos, state.posMax
    if silent or not src.startswith("www.", pos) or (pos > 0 and src[pos - 1] not in _BEFORE_WWW):
        return False
    if _in_bracket(state):
        return False
    domain = _domain_end(src, pos, end, allow_short=False, limit=MAX_DOMAIN)
    if domain < 0:
        return False
    link_end = _link_end(src, pos, _run_end(src, domain, end))
    if link_end <= pos:
        return False
    return _push_link(state, "http://" + src[pos:link_end], src[pos:link_end], 0, link_end)


def _email_step(state: StateCore) -> None:
    """E-mail addresses in the text of every inline token outside links, read as cmark-gfm does: after the
    inline parse, so an address holding `_` or `-` is one piece of text."""
    for block in state.tokens:
        if block.type != "inline" or not block.children or "@" not in block.content:
            continue
        children: list[Token] = []
        depth = 0
        for token in block.children:
            depth += 1 if token.type == "link_open" else -1 if token.type == "link_close" else 0
            if token.type == "text" and depth == 0 and "@" in token.content:
                children += _split_emails(state, token)
            else:
                children.append(token)
        block.children = children


def _split_emails(state: StateCore, text: Token) -> list[Token]:
    """``text`` as text and links, one link for each e-mail address in it."""
    data, found, done, offset = text.content, [], 0, 0
    while (at := data.find("@", offset)) >= 0:
        local = at
        while local > offset and data[local - 1] in _EMAIL_LOCAL:
            local -= 1
        if local == at:
            offset = at + 1
            continue
        protocol = next((p for p in ("mailto:", "xmpp:") if local - len(p) >= offset and data.endswith(p, 0, local)
                         and (local - len(p) == offset or not _is_alnum(data[local - len(p) - 1]))), "")
        link_end = _email_domain_end(data, at, len(data), xmpp=protocol == "xmpp:")
        if link_end < 0:
            offset = at + 1
            continue
        local -= len(protocol)
        written = data[local:link_end]
        href = state.md.normalizeLink(written if protocol else "mailto:" + written)
        if state.md.validateLink(href):
            found += _text(data[done:local], text.level) if local > done else []
            found += _link(href, written, text.level)
            done = link_end
        offset = link_end
    return found + _text(data[done:], text.level) if found else [text]


def _text(content: str, level: int) -> list[Token]:
    return [Token("text", "", 0, content=content, level=level)]


def _link(href: str, written: str, level: int) -> list[Token]:
    opened = Token("link_open", "a", 1, attrs={"href": href}, markup="autolink", info="auto", level=level)
    closed = Token("link_close", "a", -1, markup="autolink", info="auto", level=level)
    return [opened, *_text(written, level + 1), closed]


def _email_domain_end(src: str, at: int, end: int, xmpp: bool) -> int:
    """The end of an e-mail's domain after the `@` at ``at``, or -1."""
    i, dots, slashes = at + 1, 0, 0
    while i < end:
        char = src[i]
        if char == "@":
            return -1  # the next `@` is read on its own, with this domain as its local part
        if char == "." and i + 1 < end and _is_alnum(src[i + 1]):
            dots += 1
        elif char == "/" and xmpp and not slashes:
            slashes += 1
        elif not _is_alnum(char) and char not in "-_":
            break
        i += 1
    if i - at < 2 or not dots or not (_is_alpha(src[i - 1]) or src[i - 1] == "."):
        return -1
    link_end = _link_end(src, at, i)
    return link_end if link_end > at else -1
