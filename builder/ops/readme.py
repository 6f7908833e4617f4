"""A registry's title and description, read from the repository's README: its first heading and its first
paragraph of prose (badges, images, HTML and link lists skipped), as plain text."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

README_NAMES = ("README.md", "README.markdown", "README", "readme.md", "Readme.md", "README.txt")
MAX_README_BYTES = 1 << 20  # only the top of the file is read: the title and first paragraph come early
MAX_TITLE = 100
MAX_DESCRIPTION = 300
_SPACES = re.compile(r"\s+")
_HTML_H1 = re.compile(r"<h1\b[^>]*>(.*?)</h1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_NOTE = re.compile(r"\W*(?:note|warning|important|caution|tip|new|update|news|announcement)\b\W*:", re.IGNORECASE)
_PARSER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


@dataclass(frozen=True)
class ReadmeText:
    path: str  # the README read, relative to the repository ("" when there is none)
    title: str
    description: str


def read_readme(root: Path) -> ReadmeText:
    """The first README of ``README_NAMES`` in ``root`` that is a regular file; empty texts when there is none
    or it cannot be read (init then uses the repository's name)."""
    for name in README_NAMES:
        path = root / name
        if path.is_file() and not path.is_symlink():
            try:
                with path.open("rb") as fh:
                    text = fh.read(MAX_README_BYTES).decode("utf-8", "replace")
            except OSError:
                continue
            title, description = title_and_description(text)
            return ReadmeText(name, title, description)
    return ReadmeText("", "", "")


def title_and_description(markdown: str) -> tuple[str, str]:
    """The first heading's text (a Markdown heading, else an HTML ``<h1>``) and the first paragraph of prose after
    it, as plain text on one line, shortened at a word to ``MAX_TITLE`` and ``MAX_DESCRIPTION`` characters. Prose
    is a paragraph of a few words outside links, not in a list or table, not a note (``Note:``, ``Warning:``...)
    and not a line that leads into what follows (ending in a colon)."""
    tokens = _PARSER.parse(markdown)
    title = description = ""
    in_list = 0
    for i, token in enumerate(tokens):
        if token.nesting and token.type.split("_")[0] in ("bullet", "ordered", "table"):
            in_list += token.nesting
        elif token.type == "html_block" and not title:
            match = _HTML_H1.search(token.content[:10_000])
            if match:
                title, description = _SPACES.sub(" ", html.unescape(_TAG.sub("", match[1]))).strip(), ""
        elif token.type != "inline" or not i:
            continue
        elif tokens[i - 1].type == "heading_open" and not title:
            title, description = _plain(token), ""
        elif tokens[i - 1].type == "paragraph_open" and not in_list and not description:
            text = _plain(token)
            if _is_prose(token) and not text.endswith(":") and not _NOTE.match(text):
                description = text
        if title and description:
            break
    return _shorten(title, MAX_TITLE), _shorten(description, MAX_DESCRIPTION)


def _plain(inline: Token) -> str:
    """The text a reader sees of an inline token, images and HTML left out."""
    pieces = []
    for child in inline.children or ():
        if child.type in ("text", "code_inline"):
            pieces.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            pieces.append(" ")
    return _SPACES.sub(" ", "".join(pieces)).strip()


def _is_prose(inline: Token) -> bool:
    """A paragraph with words outside links: not a row of badges, an image or a list of links."""
    depth = 0
    words = ""
    for child in inline.children or ():
        if child.type == "link_open":
            depth += 1
        elif child.type == "link_close":
            depth -= 1
        elif child.type == "text" and depth == 0:
            words += child.content
    return len(re.findall(r"\w{2,}", words)) >= 5


def _shorten(text: str, limit: int) -> str:
    """``text`` cut at the last word (or sentence end) that fits ``limit`` characters, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    sentence = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if sentence >= limit // 2:
        return cut[:sentence + 1]
    return cut.rsplit(" ", 1)[0].rstrip(",;:") + "…"
