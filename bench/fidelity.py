"""``python -m bench.fidelity DIR [-n N]``: how often the website's rendering of a real skill body equals GitHub's.

GitHub renders Markdown with cmark-gfm; ``cmarkgfm`` binds it, and the website renders with it too, so this now
checks what the site adds (heading shapes, task list classes, the cap). For the first N bodies of DIR's skill
folders by name, each body is rendered by the registry (``BodyRenderer``) and by cmark-gfm with GitHub's
extensions, the latter sanitised by the same nh3
cleaner. Both are compared as structure and text: the sequence of element names (headings as one name, since
the site moves them one level down) and whitespace-collapsed text, attributes stripped. The figure is printed
exactly, and the bodies that differ are classed by the first place the two readings part (a link, a task list,
strikethrough, a table, a list, raw HTML, other), with a few examples of each.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path

from .parsers import bodies

_SPACE = re.compile(r"\s+")
_HEADING = re.compile(r"^h[1-6]$")


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


_CLASSES = (  # (class, the element names that mark it), the first one found at the parting place wins
    ("task list", ("<input",)),
    ("strikethrough", ("<del", ">del")),
    ("link", ("<a", ">a")),
    ("table", ("<table", "<thead", "<tbody", ">tbody", "<tr", ">tr", "<td", "<th")),
    ("list", ("<ul", "<ol", "<li", ">ul", ">ol", ">li")),
)


def first_difference_at(ours: list[str], theirs: list[str]) -> int:
    return next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))


def difference_class(ours: list[str], theirs: list[str]) -> str:
    """What kind of Markdown the two readings part at: the element names at the first place they differ and next,
    or, where both are text there, what the text holds (`~`: strikethrough, `<`: raw HTML)."""
    at = first_difference_at(ours, theirs)
    near = set(ours[at:at + 2] + theirs[at:at + 2])
    for name, marks in _CLASSES:
        if near.intersection(marks):
            return name
    texts = " ".join(item for item in near if item.startswith("'"))
    if "~" in texts:
        return "strikethrough"
    if "<" in texts:
        return "raw HTML"
    return "other"


def first_difference(ours: list[str], theirs: list[str]) -> str:
    at = first_difference_at(ours, theirs)
    mine, github = (items[at] if at < len(items) else "(end)" for items in (ours, theirs))
    return f"ours {mine!r:.60} / GitHub {github!r:.60}"


def folders(root: Path, limit: int) -> list[str]:
    """The names of the skill folders ``bodies`` reads, in its order."""
    return sorted(p.name for p in root.iterdir() if (p / "SKILL.md").is_file())[:limit]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fidelity", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a folder of skill folders")
    parser.add_argument("-n", type=int, default=1_000, help="bodies to compare (default: 1000)")
    parser.add_argument("--show", type=int, default=3, help="examples to list of each class (default: 3)")
    args = parser.parse_args(argv)
    try:
        import cmarkgfm
        from cmarkgfm.cmark import Options
    except ImportError:
        parser.error("cmarkgfm is not installed: pip install cmarkgfm in the environment that runs this")
    from builder.site.render import BodyRenderer

    renderer = BodyRenderer()
    texts, names = bodies(args.corpus, args.n), folders(args.corpus, args.n)
    parted: dict[str, list[str]] = {}
    for name, text in zip(names, texts):
        ours = _text_collapsed(shape(renderer.render(text, (), "raw/")))
        github = _text_collapsed(shape(renderer.sanitise(cmarkgfm.github_flavored_markdown_to_html(
            text, options=Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES))))
        if ours != github:
            parted.setdefault(difference_class(ours, github), []).append(f"{name}: {first_difference(ours, github)}")
    n = len(texts)
    if not n:
        parser.error(f"{args.corpus}: no skill folders")
    exact = n - sum(len(found) for found in parted.values())
    print(f"{n:,} real bodies: {exact:,} ({exact / n:.1%}) render as cmark-gfm renders them (structure and text, "
          f"attributes stripped, both through the site's sanitiser).")
    for name, found in sorted(parted.items(), key=lambda item: (-len(item[1]), item[0])):
        print(f"  {len(found):4} differ at {name}")
        for example in found[:args.show]:
            print(f"         {example}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
