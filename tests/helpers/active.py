"""The hostile skill of the active-content tests: files a browser would run as pages on the registry's origin (the
committed fixture ``tests/validate/fixtures/active-content``), beside a plain skill, in a registry of their own.

Every payload sets ``window.__pwned`` and requests ``/beacon/<file>`` from the server that served it, so a test can
tell both from the page and from the server that nothing ran."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import REPO, write_tree

ACTIVE = REPO / "tests" / "validate" / "fixtures" / "active-content" / "active-content"
NAME = "active-content"
# The files kept to archives, each with what a visitor does to run it (None: loading it is enough).
PAYLOADS = {
    "assets/evil.html": None, "assets/noscript.html": None, "assets/shadow.html": None, "assets/page.shtml": None,
    "assets/evil.svg": None, "assets/LOUD.SVG": None, "assets/onload.svg": None, "assets/link.svg": "a",
    "assets/page.xhtml": None, "assets/feed.xml": None, "assets/script.xml": None, "assets/process.apxml": None,
    "assets/formula.mml": None, "assets/flow.xpdl": None, "src/markup.rs": None,
}
# Kept to archives without a payload: a style sheet feed.xml applies, a diagram and plain HTML.
INERT_PAGES = ("assets/style.xsl", "assets/diagram.svg", "references/notes.html")
KEPT = frozenset(PAYLOADS) | frozenset(INERT_PAGES)
RAW = frozenset({"SKILL.md", "src/main.rs", "references/template.html.txt"})  # published raw as before
PLAIN_SKILL = """\
---
name: plain
description: Formats plain notes. Use when a test needs a skill without pages.
---
# Plain

Read [the notes](notes.md).
"""


def active_registry(root: Path, registry_yaml: str = "title: Active content\n") -> Path:
    """A registry (not a git repository) holding the hostile skill and ``plain``, a skill with no page in it."""
    write_tree(root, {"registry.yaml": registry_yaml, "skills/plain/SKILL.md": PLAIN_SKILL,
                      "skills/plain/notes.md": "# Notes\n"})
    shutil.copytree(ACTIVE, root / "skills" / NAME)
    return root
