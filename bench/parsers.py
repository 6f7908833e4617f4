"""``python -m bench.parsers DIR [-n N]``: what reading a real SKILL.md body costs with each Markdown parser, to
choose one by measurement.

DIR is a folder of skill folders (``python -m bench.real_corpus`` assembles one from public repositories). For
the first N bodies by folder name (frontmatter cut off) it prints the CPU time a body (``time.process_time``,
one process: a busy machine's other work does not count) of what this registry does now (the validator's link
finder, which parses only the stretches that can hold a link, and the website's full markdown-it-py parse and
render) and of the candidates that are installed: pyromark (pulldown-cmark), markdown-it-pyrs (markdown-it.rs)
and cmarkgfm (GitHub's cmark-gfm). A candidate not installed is named and skipped; install it in a scratch
environment to measure it (none is a dependency of the registry).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)

Reader = Callable[[str], object]


def bodies(root: Path, limit: int) -> list[str]:
    """The bodies of the first ``limit`` skills of ``root`` by folder name, as text."""
    found = []
    for folder in sorted(p for p in root.iterdir() if (p / "SKILL.md").is_file())[:limit]:
        text = (folder / "SKILL.md").read_bytes().decode("utf-8", "replace")
        front = _FRONTMATTER.match(text)
        found.append(text[front.end():] if front else text)
    return found


def ours() -> dict[str, Reader]:
    from builder.core import markdown
    from builder.site.render import BodyRenderer

    renderer = BodyRenderer()
    return {"this registry: link finder (validator)": markdown.links_and_hidden,
            "this registry: markdown-it-py full parse (links_full)": markdown.links_full,
            "this registry: website render (cmark-gfm, shape, nh3)": lambda body: renderer.render(body, (), "raw/")}


def candidates() -> tuple[dict[str, Reader], list[str]]:
    """The installed candidates' readers, and the names of those not installed."""
    readers: dict[str, Reader] = {}
    missing = []
    if importlib.util.find_spec("pyromark"):
        import pyromark

        options = (pyromark.Options.ENABLE_TABLES | pyromark.Options.ENABLE_FOOTNOTES
                   | pyromark.Options.ENABLE_STRIKETHROUGH | pyromark.Options.ENABLE_TASKLISTS)
        readers["pyromark: events with source ranges"] = lambda body: list(
            pyromark.events_with_range(body, options=options))
        readers["pyromark: HTML"] = lambda body: pyromark.html(body, options=options)
    else:
        missing.append("pyromark")
    if importlib.util.find_spec("markdown_it_pyrs"):
        import markdown_it_pyrs

        md = markdown_it_pyrs.MarkdownIt("commonmark").enable_many(["table", "strikethrough", "footnote"])
        readers["markdown-it-pyrs: syntax tree"] = md.tree
        readers["markdown-it-pyrs: HTML"] = md.render
    else:
        missing.append("markdown-it-pyrs")
    if importlib.util.find_spec("cmarkgfm"):
        import cmarkgfm
        from cmarkgfm.cmark import Options

        readers["cmarkgfm: GFM HTML"] = lambda body: cmarkgfm.github_flavored_markdown_to_html(
            body, options=Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES)
    else:
        missing.append("cmarkgfm")
    return readers, missing


def cpu_ms_per_body(read: Reader, texts: Sequence[str]) -> float:
    for text in texts[:20]:  # caches and lazy imports warmed first
        read(text)
    started = time.process_time()
    for text in texts:
        read(text)
    return (time.process_time() - started) * 1000 / len(texts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.parsers", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a folder of skill folders")
    parser.add_argument("-n", type=int, default=2_000, help="bodies to read (default: 2000)")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        parser.error(f"{args.corpus}: not a folder")
    texts = bodies(args.corpus, args.n)
    if not texts:
        parser.error(f"{args.corpus}: no skill folders (a SKILL.md each)")
    readers, missing = candidates()
    mean_kb = sum(len(t.encode("utf-8")) for t in texts) / len(texts) / 1024
    print(f"{len(texts):,} real bodies (mean {mean_kb:.1f} KB); CPU ms a body, one process:")
    for name, read in {**ours(), **readers}.items():
        print(f"  {name}: {cpu_ms_per_body(read, texts):.3f}")
    if missing:
        print(f"  not installed, not measured: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
