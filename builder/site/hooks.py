"""mkdocs hooks (``hooks:`` in the generated mkdocs.yml) that keep a build fast however many skills there are.

- ``on_page_content`` puts each page's pre-rendered HTML back in place. builder/site/pages.py keeps the raw-HTML
  blocks of a generated page out of its Markdown, as a JSON list beside the docs folder, and leaves a
  ``<!--sr:N-->`` comment where each block goes; Markdown then only sees a title and comments, so mkdocs spends
  no time re-parsing HTML it would pass through unchanged anyway.
- ``on_env`` gives the theme ``skill_chrome(key, render)``: skill pages all sit at the same depth and none is
  in the navigation, so their tabs, sidebars, footer and theme configuration are the same HTML; the overrides
  render those once per build and reuse them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

PLACEHOLDER = re.compile(r"<!--sr:(\d+)-->")
FRAGMENTS_DIR = "fragments"


def fragments_path(docs_dir: Path, src_uri: str) -> Path:
    return docs_dir.parent / FRAGMENTS_DIR / f"{src_uri}.json"


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    path = fragments_path(Path(config["docs_dir"]), page.file.src_uri)
    try:
        parts = json.loads(path.read_bytes())
    except FileNotFoundError:
        return html
    return PLACEHOLDER.sub(lambda m: parts[int(m.group(1))], html)


def on_env(env: Any, config: Any, files: Any) -> Any:
    rendered: dict[str, str] = {}

    def skill_chrome(key: str, render: Callable[[], str]) -> str:
        if key not in rendered:
            rendered[key] = render()
        return rendered[key]

    env.globals["skill_chrome"] = skill_chrome
    return env
