"""Raw HTML in a Markdown body read as far as finding links and hidden text needs: the ``href``/``src`` of
``<a>`` and ``<img>`` tags and the text of comments, with where each starts, in linear time."""

from __future__ import annotations

import html
import re

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


def html_tags(source: str) -> list[tuple[int, int, str, str]]:
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
