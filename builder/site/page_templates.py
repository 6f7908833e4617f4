"""The page templates (site_templates/pages/): where they are, and the Jinja environment with the filters they
use. (Not ``templates``: a wheel carries site_templates/ as the package ``builder.site.templates``.)"""

from __future__ import annotations

import functools
import hashlib
import posixpath
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2


def _templates() -> Path:
    """The site templates: inside the package in a wheel (pyproject maps site_templates/ to
    builder.site.templates), at the repository's top in a source checkout or editable install."""
    here = Path(__file__).resolve().parent
    packaged = here / "templates"
    return packaged if packaged.is_dir() else here.parents[1] / "site_templates"


TEMPLATES = _templates()
PAGES = TEMPLATES / "pages"
LISTED_DESCRIPTION_CHARS = 200
_HEADING_UNSAFE = re.compile(r"[^\w .,:;'/+-]+")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# How to get the client, on every page's footer and the home page: the project's own install line and manual,
# whichever registry the site is for (a registry's pages all start their install commands with skillreg).
SKILLREG_INSTALL = "pipx install git+https://github.com/skill-registry/skill-registry"
SKILLREG_UV_INSTALL = "uv tool install git+https://github.com/skill-registry/skill-registry"
SKILLREG_DOCS = "https://skill-registry.github.io/skill-registry/docs/"


def _filesize(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    for unit in ("KB", "MB", "GB"):
        size /= 1024  # type: ignore[assignment]
        if size < 1024 or unit == "GB":
            return f"{size:.1f} {unit}"
    raise AssertionError("unreachable")


def _moment(value: Any) -> datetime | None:
    """A time the API wrote (ISO 8601, from git, never the clock), or None for a missing or unreadable one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def human_date(value: Any) -> str:
    """The day a person reads, "30 Nov 2026" (the same in every locale and on every machine)."""
    moment = _moment(value)
    return f"{moment.day} {_MONTHS[moment.month - 1]} {moment.year}" if moment else ""


def exact_time(value: Any) -> str:
    """The exact time, "2026-11-30 08:52:40 UTC", for a date's ``title``."""
    moment = _moment(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else ""


def truncate_text(text: str, limit: int = LISTED_DESCRIPTION_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rsplit(" ", 1)[0] + "…"


def heading_text(text: str, empty: str = "Untitled") -> str:
    """Text safe for a Markdown heading: mkdocs turns headings into page titles, which themes print unescaped."""
    return " ".join(_HEADING_UNSAFE.sub(" ", text).split()) or empty


@functools.lru_cache(maxsize=65536)  # a registry's tags repeat: 60,000 skills carry a few thousand distinct ones
def tag_slug(tag: str) -> str:
    """The folder name of a tag's page: lower-case letters, digits and hyphens, stable for any input."""
    slug = "-".join(t for t in re.split(r"[^a-z0-9]+", tag.lower()) if t)
    return slug if slug and len(slug) <= 64 else "tag-" + hashlib.sha256(tag.encode("utf-8")).hexdigest()[:12]


def page_environment(cache: Path | None = None) -> jinja2.Environment:
    """The page templates; with ``cache``, their compiled code is kept there (checked against each template's
    source), so a rebuild does not compile them again."""
    bytecode = None
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        bytecode = jinja2.FileSystemBytecodeCache(str(cache))
    # auto_reload off: the templates are part of the package, so no page needs a stat of its template file.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(PAGES), autoescape=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=False, bytecode_cache=bytecode,
                             auto_reload=False)
    env.filters.update(filesize=_filesize, truncate_text=truncate_text, heading=heading_text,
                       urlpath=lambda p: quote(p, safe="/"), basename=posixpath.basename,
                       human_date=human_date, exact_time=exact_time)
    env.globals.update(skillreg_install=SKILLREG_INSTALL, skillreg_uv_install=SKILLREG_UV_INSTALL,
                       skillreg_docs=SKILLREG_DOCS)
    return env


def http_url(url: Any) -> str | None:
    """A link a page may show: an http or https URL, else None."""
    return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None
