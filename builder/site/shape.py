"""What the website adds to cmark-gfm's HTML of a body before sanitising: headings one level down (the page's title
is the h1) with ids to link to, and the classes GitHub's website gives task lists.

It works on the elements cmark-gfm writes itself, told apart from a body's raw HTML by their ``data-sourcepos``
(the sanitiser removes the attribute afterwards). A raw tag that copies that attribute is shaped too, which gives
it nothing the sanitiser would not allow anyway. One pass over the tags, so hostile HTML costs linear time.
"""

from __future__ import annotations

import functools
import re
from html import unescape

from markdown.extensions.toc import slugify

_SOURCEPOS = r' data-sourcepos="\d+:\d+-\d+:\d+"'
# One literal `<` first, so the search jumps from tag to tag (an alternation of several would be tried at every
# character: three times slower).
_TAGS = re.compile(
    rf"<(?:h(?P<open>[1-6]){_SOURCEPOS}>"
    r"|/h(?P<close>[1-6])>"
    rf"|(?P<list>ul|ol)(?: start=\"\d+\")?{_SOURCEPOS}>"
    r"|/(?:ul|ol)>"
    rf"|(?P<task>li{_SOURCEPOS}>)(?:\n?<p{_SOURCEPOS}>)?<input type=\"checkbox\")")
# What a heading's id is made of: its words and code, without tags, image descriptions or footnote marks.
_FOOTNOTE_MARK = re.compile(r'<sup class="footnote-ref"><a [^>]*>[^<]*</a></sup>')
_MARKUP = re.compile(r"<!--.*?-->|<(?:[^>\"']|\"[^\"]*\"|'[^']*')*>", re.DOTALL)


def shape(html: str) -> str:
    """``html`` (cmark-gfm's, with source positions) with its headings and task lists shaped."""
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in order
    lists: list[int] = []  # the edits index of each list open at this point
    heading: re.Match[str] | None = None
    seen: dict[str, int] = {}
    for tag in _TAGS.finditer(html):
        if tag["open"]:
            heading = tag
        elif tag["close"]:
            if heading is not None and heading["open"] == tag["close"]:
                level = min(int(tag["close"]) + 1, 6)
                slug = _unique(_slug(html[heading.end():tag.start()]), seen)
                edits.append((heading.start(), heading.end(), f'<h{level} id="{slug}">'))
                edits.append((tag.start(), tag.end(), f"</h{level}>"))
            heading = None
        elif tag["list"]:
            lists.append(len(edits))
            edits.append((tag.start(), tag.end(), tag.group()))
        elif tag["task"]:
            if lists:
                start, end, opened = edits[lists[-1]]
                if "class=" not in opened:
                    edits[lists[-1]] = (start, end, opened[:3] + ' class="contains-task-list"' + opened[3:])
            edits.append((tag.start(), tag.end("task"), '<li class="task-list-item">'))
        elif lists:
            lists.pop()
    if not edits:
        return html
    parts: list[str] = []
    done = 0
    for start, end, replacement in sorted(edits):  # a raw list tag inside a heading is seen before it is shaped
        parts += (html[done:start], replacement)
        done = end
    parts.append(html[done:])
    return "".join(parts)


def _slug(inner: str) -> str:
    """The id of a heading whose HTML is ``inner``, before it is made unique."""
    return _common_slug(inner) if len(inner) <= _COMMON_HEADING else _slug_of(inner)


_COMMON_HEADING = 200  # characters of HTML: longer headings are rare, and not kept (the cache stays a few MB)


@functools.lru_cache(maxsize=8192)
def _common_slug(inner: str) -> str:
    """``_slug_of``, remembered: headings repeat from skill to skill ("Overview", "Usage": two in three of the real
    corpus's), and Markdown's slugify costs a few microseconds each."""
    return _slug_of(inner)


def _slug_of(inner: str) -> str:
    return slugify(_plain_text(inner), "-") or "section"


def _plain_text(inner: str) -> str:
    return unescape(_MARKUP.sub("", _FOOTNOTE_MARK.sub("", inner)))


def _unique(base: str, seen: dict[str, int]) -> str:
    """``base``, or ``base_1``, ``base_2``... when an earlier heading of the body took it. ``seen`` holds every slug
    taken, each with the number its next repeat starts trying from (so many alike headings cost linear time)."""
    slug, n = base, seen.get(base, 1)
    if base in seen:
        slug = f"{base}_{n}"
    while slug in seen:
        n += 1
        slug = f"{base}_{n}"
    seen[base] = n + 1 if slug != base else 1
    seen.setdefault(slug, 1)
    return slug
