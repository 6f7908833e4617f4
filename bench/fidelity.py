"""``python -m bench.fidelity DIR [-n N]``: how often the website's rendering of a real skill body equals GitHub's.

GitHub renders Markdown with cmark-gfm; ``cmarkgfm`` binds it (not a dependency of the registry: install it in
the environment that runs this). For the first N bodies of DIR's skill folders by name, each body is rendered by
the registry (``BodyRenderer``) and by cmark-gfm with GitHub's extensions, the latter sanitised by the same nh3
cleaner. Both are compared as structure and text: the sequence of element names (headings as one name, since
the site moves them one level down) and whitespace-collapsed text, attributes stripped. The figure is printed
exactly, and again with the two known gaps set aside (bare URLs, which GFM's autolink extension links, and task
list items, whose ``[ ]`` GitHub turns into a checkbox); each remaining difference is listed by the first place
the two readings part.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path

from .parsers import bodies

_SPACE = re.compile(r"\s+")
_HEADING = re.compile(r"^h[1-6]$")
_BARE_URL = re.compile(r"^(?:https?://|www\.)\S+$|^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_TASK = re.compile(r"^\[[ xX]\]\s*")


class _Shape(HTMLParser):
    """Element names and text of an HTML fragment: ``<p``, ``>p``, and text pieces with spaces collapsed."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.items.append("<" + _name(tag))

    def handle_endtag(self, tag: str) -> None:
        self.items.append(">" + _name(tag))

    def handle_data(self, data: str) -> None:
        if self.items and self.items[-1].startswith("'"):
            self.items[-1] += data
        else:
            self.items.append("'" + data)


def _name(tag: str) -> str:
    """Headings as one name (the site moves them a level down); ``s`` as ``del`` (markdown-it's and cmark-gfm's
    element for ``~~struck~~``, shown alike)."""
    return "h" if _HEADING.match(tag) else "del" if tag == "s" else tag


def shape(fragment: str) -> list[str]:
    reader = _Shape()
    reader.feed(fragment)
    reader.close()
    return reader.items


def _text_collapsed(items: list[str]) -> list[str]:
    """Text pieces with runs of white space as one space and none at either end; empty ones dropped."""
    out = []
    for item in items:
        if item.startswith("'"):
            item = "'" + _SPACE.sub(" ", item[1:]).strip()
            if item == "'":
                continue
        out.append(item)
    return out


def without_known_gaps(items: list[str]) -> list[str]:
    """``items`` with links whose text is a bare URL unwrapped and a task item's ``[ ]`` or ``[x]`` dropped."""
    out: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item == "<a" and i + 2 < len(items) and items[i + 2] == ">a" and _BARE_URL.match(items[i + 1][1:].strip()):
            item, i = items[i + 1], i + 2
        if item.startswith("'") and out and out[-1] in ("<li", "<p") and _TASK.match(item[1:].lstrip()):
            item = "'" + _TASK.sub("", item[1:].lstrip())
        if item.startswith("'") and out and out[-1].startswith("'"):
            out[-1] += item[1:]  # the raw text around an unwrapped link, as written
        else:
            out.append(item)
        i += 1
    return _text_collapsed(out)


def first_difference(ours: list[str], theirs: list[str]) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    mine, github = (items[at] if at < len(items) else "(end)" for items in (ours, theirs))
    return f"ours {mine!r:.40} / GitHub {github!r:.40}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fidelity", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a folder of skill folders")
    parser.add_argument("-n", type=int, default=1_000, help="bodies to compare (default: 1000)")
    parser.add_argument("--show", type=int, default=30, help="differences to list (default: 30)")
    args = parser.parse_args(argv)
    try:
        import cmarkgfm
        from cmarkgfm.cmark import Options
    except ImportError:
        parser.error("cmarkgfm is not installed: pip install cmarkgfm in the environment that runs this")
    from builder.site.render import BodyRenderer

    renderer = BodyRenderer()
    texts = bodies(args.corpus, args.n)
    exact = close = 0
    parted: Counter[str] = Counter()
    for text in texts:
        ours = shape(renderer.render(text, (), "raw/"))
        github = shape(renderer.sanitise(cmarkgfm.github_flavored_markdown_to_html(
            text, options=Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES)))
        if _text_collapsed(ours) == _text_collapsed(github):
            exact += 1
            close += 1
            continue
        ours, github = without_known_gaps(ours), without_known_gaps(github)
        if ours == github:
            close += 1
        else:
            parted[first_difference(ours, github)] += 1
    n = len(texts)
    print(f"{n:,} real bodies: {exact / n:.1%} render as cmark-gfm renders them (structure and text, attributes "
          f"stripped); {close / n:.1%} with bare-URL autolinks and task-list items set aside.")
    for where, count in parted.most_common(args.show):
        print(f"  {count:4} {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
