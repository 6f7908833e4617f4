"""Each skill page's rendered body, made once per build by the worker that publishes the skill and read back by the
page workers, so that a build parses a SKILL.md body once and the page workers parse no SKILL.md at all.

The shape: one file per rendering in the output's state folder (``bodies/``), named ``<skill>.<key>.html.gz``.
The key is a SHA-256 over everything the rendering depends on and nothing else: the renderer (this package's
version, the source of the renderer and its shaping, the versions of cmark-gfm, nh3 and Markdown's slugify), the
SHA-256 of SKILL.md's bytes and the frontmatter size limit it is read under (together they fix the body), the
skill's name and each path published raw with where its copy lives (together they fix where its links point). A
page worker computes the same key from the skill's detail document alone, so nothing passes through the parent:
60,000 renderings never sit in one process's memory, each is written by one worker and read by one page worker.

A file holds the sanitised HTML gzip-compressed at level 9 with no time or name in its header, exactly the bytes
``publish.page_body: fetched`` publishes beside a page; it is written atomically and checked when read (gzip's
CRC), so a file cut short is rendered again rather than published. The same inputs give the same bytes, so the
output stays deterministic whether a rendering is fresh or kept. A rebuild keeps the renderings of the skills it
does not build again (their pages are written again when the templates change); a worker finds the file already
there when a skill is built again with the same SKILL.md, and does not render it. A build that writes every page
removes every rendering it did not read; a rebuild removes those of the skills it rebuilt or removed.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import io
import json
import os
import zipfile
import zlib
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..core.frontmatter import parse_skill_md
from ..core.fs import write_atomic
from ..core.model import SLUG
from .render import BodyRenderer

BODIES_STATE = "bodies"  # in the output's state folder
SUFFIX = ".html.gz"
PAGE_ROOT = "../../"  # a skill page's way back to the site's root (it lives at skills/<name>/)


@functools.cache
def renderer_fingerprint() -> str:
    """What the renderer is: a change to its code or to a library it renders with makes every key new."""
    import markdown as python_markdown  # the headings' ids (toc's slugify)
    import nh3

    from ..core import cmark
    from . import render, shape

    digest = hashlib.sha256(json.dumps([__version__, cmark.version(), getattr(nh3, "__version__", ""),
                                        python_markdown.__version__]).encode())
    for module in (render, shape, cmark):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


def body_key(name: str, skill_md_sha256: str, raw: Mapping[str, str], max_frontmatter_bytes: int) -> str:
    """The key of a skill's rendering: equal keys, identical renderings."""
    material = [renderer_fingerprint(), name, skill_md_sha256, max_frontmatter_bytes, sorted(raw.items())]
    return hashlib.sha256(json.dumps(material, ensure_ascii=False).encode("utf-8", "surrogateescape")).hexdigest()


def raw_copies_of(detail: Mapping[str, Any]) -> dict[str, str]:
    """Each path of a skill published raw and where its one raw copy lives (the ``raw`` field of the detail
    document's ``files``): under .well-known/skills/<name>/ or api/v1/skills/<name>/files/, as the build chose."""
    return {f["path"]: f["raw"] for f in detail["files"] if f.get("raw")}


def raw_urls(raw: Mapping[str, str]) -> dict[str, str]:
    """Each path published raw and its URL from the skill's page: what the body's links may point at. ``raw``:
    each path and where its raw copy lives (``raw_copies_of``, or the build's ``raw_copies``)."""
    return {path: PAGE_ROOT + quote(place, safe="/") for path, place in raw.items()}


def pack(html: str) -> bytes:
    """The rendering as stored and as a fetched page body is published: reproducible gzip."""
    return gzip.compress(html.encode("utf-8"), 9, mtime=0)


def _file(folder: Path, name: str, key: str) -> Path:
    return folder / file_name(name, key)


_GZIP = 16 + zlib.MAX_WBITS  # zlib's window bits for the gzip format


@functools.cache
def renderer() -> BodyRenderer:
    """This process's renderer (building its sanitiser is the slow part)."""
    return BodyRenderer()


def render_once(folder: Path, name: str, key: str, body: str, raw: Mapping[str, str]) -> None:
    """Render ``body`` into ``folder`` under ``key`` unless a rendering of that key is already there. Only skills
    whose name can be a page's folder get a page, so only they are rendered."""
    if not SLUG.match(name) or load(folder, name, key) is not None:
        return
    html = renderer().render(body, raw_urls(raw), "")
    with contextlib.suppress(OSError):  # a state folder that takes no file: the page worker renders the body
        write_atomic(_file(folder, name, key), pack(html), durable=False)  # checked when read


def load(folder: Path, name: str, key: str) -> tuple[str, bytes] | None:
    """(HTML, the stored gzip bytes) of the rendering under ``key``, or None when there is none or it is damaged."""
    try:
        packed = _file(folder, name, key).read_bytes()
        # One gzip member, whole (zlib checks its CRC and length), and nothing after it: what ``pack`` writes.
        reader = zlib.decompressobj(_GZIP)
        html = reader.decompress(packed)
        if not reader.eof or reader.unused_data:
            return None
        return html.decode("utf-8"), packed
    except (OSError, zlib.error, UnicodeDecodeError):
        return None


def prune(folder: Path, used: Collection[str], names: Collection[str], changed: Collection[str] | None) -> None:
    """Remove the renderings no page needs: every file not in ``used`` (file names) when ``changed`` is None (every
    page was written), else those of the ``changed`` skills not in ``used`` and those of skills not in ``names``."""
    try:
        listed = os.listdir(folder)  # names only: a rebuild lists one file per skill of the registry
    except OSError:
        return
    for entry in listed:
        if not entry.endswith(SUFFIX) or entry in used:
            continue
        skill = entry.split(".", 1)[0]
        if changed is None or skill in changed or skill not in names:
            (folder / entry).unlink(missing_ok=True)


def file_name(name: str, key: str) -> str:
    return f"{name}.{key}{SUFFIX}"


def page_body(folder: Path | None, renderer: BodyRenderer, detail: dict[str, Any], raw: Mapping[str, str],
              read: Callable[[str], bytes], max_frontmatter_bytes: int, fetched: bool) -> tuple[str, bytes | None, str]:
    """(HTML, its gzip when the page fetches its body, the file of ``folder`` it was read from) of a skill's body:
    the rendering its build worker stored, or, where there is none (no state folder, a rendering lost), SKILL.md
    as published (``read`` gives a published file's bytes), parsed and rendered here."""
    name = detail["name"]
    entry = next((f for f in detail["files"] if f["path"] == detail["skill_md"]), None)
    if folder is not None and entry is not None:
        key = body_key(name, entry["sha256"], raw, max_frontmatter_bytes)
        stored = load(folder, name, key)
        if stored is not None:
            return stored[0], stored[1], file_name(name, key)
    parsed = parse_skill_md(_skill_md(detail, entry, read), detail["skill_md"],
                            max_frontmatter_bytes=max_frontmatter_bytes, skill=name)
    html = renderer.render(parsed.body, raw_urls(raw), "")
    return html, pack(html) if fetched else None, ""


def _skill_md(detail: dict[str, Any], entry: dict[str, Any] | None, read: Callable[[str], bytes]) -> bytes:
    """SKILL.md as published: its raw copy, or (where only some files are published raw) out of the zip."""
    if entry is not None and entry.get("raw"):
        return read(entry["raw"])
    with zipfile.ZipFile(io.BytesIO(read(detail["bundles"]["zip"]["path"]))) as archive:
        return archive.read(detail["skill_md"])
