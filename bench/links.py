"""``python -m bench.links DIR [-n N]``: whether the links the validator finds in a real body are the links its
rendered page holds.

The rules page says the validator reads links as the website renders them. For the first N bodies of DIR's skill
folders by name, this compares the destinations the validator reads (``core.markdown.links``) with the ``href`` of
every ``<a>`` and the ``src`` of every ``<img>`` in cmark-gfm's HTML of the body (raw HTML included), rendered
without the bare-URL autolinks the validator leaves out on purpose and without footnote anchors. Both are compared
as sets of percent-decoded destinations. Every body that differs is listed by class: a destination only the
validator reads (an unused reference definition or footnote is checked, not shown), or only the page shows.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from .fidelity import folders
from .parsers import bodies

# The renderer's extensions but the bare-URL autolinks, which the validator does not read as links to files.
WITHOUT_AUTOLINKS = (b"table", b"strikethrough", b"tasklist")


class _Destinations(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"a": "href", "img": "src"}.get(tag)
        for name, value in attrs:
            if name == wanted and value is not None:
                self.found.add(value)


def rendered_links(body: str) -> set[str]:
    """The destinations of the links and images of ``body``'s page, percent-decoded, footnote anchors left out."""
    from builder.core import cmark

    reader = _Destinations()
    reader.feed(cmark.render_html(body, WITHOUT_AUTOLINKS))
    reader.close()
    return {unquote(href) for href in reader.found if not href.startswith(("#fn-", "#fnref-"))}


def validator_links(body: str) -> set[str]:
    from builder.core.markdown import links

    return {unquote(link.href) for link in links(body)}


def differences(body: str) -> tuple[set[str], set[str]]:
    """(destinations only the validator reads, destinations only the page shows)."""
    found, shown = validator_links(body), rendered_links(body)
    return found - shown, shown - found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.links", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a folder of skill folders")
    parser.add_argument("-n", type=int, default=5_000, help="bodies to compare (default: 5000)")
    parser.add_argument("--show", type=int, default=5, help="examples to list of each class (default: 5)")
    args = parser.parse_args(argv)
    texts, names = bodies(args.corpus, args.n), folders(args.corpus, args.n)
    if not texts:
        parser.error(f"{args.corpus}: no skill folders")
    parted: dict[str, list[str]] = {"only the validator reads": [], "only the page shows": []}
    count = 0
    started = time.process_time()
    for name, text in zip(names, texts):
        only_found, only_shown = differences(text)
        count += len(validator_links(text))
        for label, extra in (("only the validator reads", only_found), ("only the page shows", only_shown)):
            if extra:
                parted[label].append(f"{name}: {', '.join(sorted(extra))[:160]}")
    n = len(texts)
    same = n - len({entry.split(":", 1)[0] for found in parted.values() for entry in found})
    print(f"{n:,} real bodies, {count:,} destinations the validator reads: in {same:,} ({same / n:.2%}) they are "
          f"the destinations of the rendered page ({time.process_time() - started:.1f} s CPU).")
    for label, found in parted.items():
        print(f"  {len(found):4} bodies with destinations {label}")
        for example in found[:args.show]:
            print(f"         {example}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
