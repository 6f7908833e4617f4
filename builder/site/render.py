"""Untrusted skill Markdown to safe HTML: render with GitHub's own renderer, cmark-gfm (``core.cmark``: tables,
strikethrough, footnotes, task lists, bare-URL autolinks), shape headings and task lists (``shape``), then sanitise
with nh3.

A skill's body comes from a pull request, so raw HTML in it is allowed through Markdown and then cut down to
ordinary formatting by the sanitiser: no scripts, styles, frames, forms, event handlers or ``javascript:``
URLs; the one form control is a task list item's checkbox, always disabled. Relative links and images point
at the skill's published raw files; anything else relative is dropped.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping
from html import escape
from urllib.parse import quote, unquote, urlsplit

import nh3

from ..core import cmark
from .shape import shape

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "img", "input", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp",
    "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
})
ATTRIBUTES = {
    "a": {"href", "title", "id"},  # ids: footnote references and their way back
    "img": {"src", "alt", "title", "width", "height"},
    "code": {"class"},
    "th": {"align", "colspan", "rowspan"},
    "td": {"align", "colspan", "rowspan"},
    "ol": {"start", "class"},
    "ul": {"class"},
    "li": {"id", "class"},  # ids: footnotes; the class: a task list item
    "input": {"checked"},  # a task list item's checkbox: always a disabled checkbox (``_checkbox``)
    "h1": {"id"}, "h2": {"id"}, "h3": {"id"}, "h4": {"id"}, "h5": {"id"}, "h6": {"id"},
}
# Every <input> the sanitiser leaves (with no attribute but `checked`) becomes a task list item's disabled checkbox,
# whatever a body wrote, so no raw HTML can add a text field, a button or anything that submits.
_INPUT = re.compile(r"<input( checked=\"\")?>")
# The classes the theme styles task lists by (mkdocs-material's `.task-list-item`), and nothing else.
CLASSES = {("li", "task-list-item"), ("ul", "contains-task-list"), ("ol", "contains-task-list")}
URL_SCHEMES = frozenset({"http", "https", "mailto", "ftp", "xmpp"})  # the schemes GitHub autolinks
# Body ids get a prefix so a heading can never take an id the page or the theme relies on.
ID_PREFIX = "skill-"
# Footnote ids are their labels as written (cmark-gfm percent-encodes what is not ASCII).
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_%-]*$")
_CODE_CLASS = re.compile(r"^language-[A-Za-z0-9_+-]+$")
# Paths from the skill's folder as agents write them: `{baseDir}/` and Claude Code's `${CLAUDE_SKILL_DIR}/`.
_BASE_DIR = re.compile(r"^(?:\{baseDir\}|\$\{CLAUDE_SKILL_DIR\})/")


# What one body may render to, in characters of HTML before sanitising: five times the largest of 15,751 real
# bodies (0.2 MB), where a hostile 6.4 KB table (a wide header, rows of one cell) renders to 12 MB. Past it the body
# is shown as text (``as_text``), so a page and the sanitiser's work stay bounded.
MAX_RENDERED_BODY = 1_000_000


def as_text(body: str, rendered: int) -> str:
    """The page's body when its rendering is past the cap: why, then the Markdown as written."""
    return (f"<p><strong>This body is shown as text: rendered, it would be {rendered / 1e6:.1f} MB of HTML, past the "
            f"website's limit of {MAX_RENDERED_BODY / 1e6:.0f} MB.</strong></p>\n"
            f"<pre><code>{escape(body, quote=False)}</code></pre>\n")


class BodyRenderer:
    """Renders many skill bodies with one sanitiser (building one per page is the slow part)."""

    def __init__(self) -> None:
        self._files: Collection[str] = ()
        self._raw_prefix = ""
        self._cleaner = nh3.Cleaner(tags=set(TAGS), attributes={k: set(v) for k, v in ATTRIBUTES.items()},
                                    attribute_filter=self._filter, url_schemes=set(URL_SCHEMES),
                                    clean_content_tags={"script", "style"}, link_rel="noopener noreferrer nofollow")

    def render(self, body: str, files: Collection[str], raw_prefix: str) -> str:
        """``raw_prefix`` is the URL (relative to the page) of the skill's raw files folder, ending in ``/``; or
        ``files`` maps each linkable path to its URL (only files published raw can be linked)."""
        rendered = cmark.render_html(body)
        if len(rendered) > MAX_RENDERED_BODY:
            return self.sanitise(as_text(body, len(rendered)))
        return self.sanitise(shape(rendered), files, raw_prefix)

    def sanitise(self, html: str, files: Collection[str] = (), raw_prefix: str = "") -> str:
        """The cleaning every rendered body goes through (the benchmark passes GitHub's rendering through it too,
        so the two are compared as the site would show them)."""
        self._files, self._raw_prefix = files, raw_prefix
        return _INPUT.sub(_checkbox, self._cleaner.clean(html))

    def _filter(self, tag: str, attr: str, value: str) -> str | None:
        if attr == "id":
            return ID_PREFIX + value if _SAFE_ID.match(value) else None
        if attr == "class":
            if tag == "code":
                return value if _CODE_CLASS.match(value) else None
            return value if (tag, value) in CLASSES else None
        if attr == "checked":
            return ""
        if attr in ("href", "src"):
            return resolve_link(value, self._files, self._raw_prefix)
        return value


def _checkbox(found: re.Match[str]) -> str:
    """One spelling of a checkbox, as GitHub writes it (nh3 keeps attributes in no fixed order of its own)."""
    return f'<input type="checkbox"{found.group(1) or ""} disabled="">'


def resolve_link(value: str, files: Collection[str], raw_prefix: str) -> str | None:
    """Keep absolute http(s)/mailto URLs, point skill-relative paths at raw files, drop everything else.
    ``files`` is the set of linkable paths (each at ``raw_prefix`` + path) or a mapping of each to its URL."""
    url = value.strip()
    if url.startswith("#"):
        return "#" + ID_PREFIX + url[1:] if _SAFE_ID.match(url[1:]) else None
    parts = urlsplit(url)
    if parts.scheme:
        return url if parts.scheme.lower() in URL_SCHEMES else None
    if parts.netloc or url.startswith(("/", "\\")):
        return None
    path = _BASE_DIR.sub("", unquote(parts.path))
    path = posixpath.normpath(path) if path else ""
    if path not in files:
        return None
    if isinstance(files, Mapping):
        return str(files[path])
    return raw_prefix + quote(path)
