"""mkdocs, run through its Python API once per build over a handful of pages, and its output moved into place."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..core.errors import BuildError


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run_mkdocs(config_file: Path) -> tuple[str, ...]:
    """``mkdocs build`` through its Python API; returns the warnings it logged, raises BuildError on failure."""
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config as mkdocs_load_config
    from mkdocs.exceptions import MkDocsException

    logger = logging.getLogger("mkdocs")
    handler = _Collect()
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        mkdocs_build(mkdocs_load_config(config_file=str(config_file)))
    except MkDocsException as exc:
        details = "; ".join(handler.messages)
        raise BuildError(f"the website could not be built: {exc}" + (f" ({details})" if details else "")) from None
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    return tuple(handler.messages)


def move_into(src: Path, dest: Path) -> None:
    """Move every entry of ``src`` into ``dest``; the website and the API must never claim the same path."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in sorted(src.iterdir()):
        target = dest / entry.name
        if target.exists() or target.is_symlink():
            raise BuildError(f"the website and the API both write {target}; nothing was published")
        os.rename(entry, target)
