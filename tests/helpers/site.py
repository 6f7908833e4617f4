"""Shared by the website tests: build a registry, parse built pages, check links, serve a folder on 127.0.0.1."""

from __future__ import annotations

import functools
import os
import posixpath
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from builder.core.config import load_config
from builder.publish.build import BuildOptions, build
from helpers import REPO, write_tree

CHROMIUM = Path("/usr/bin/chromium")  # Debian's chromium and chromium-driver, which .ci/run installs
CHROMEDRIVER = Path("/usr/bin/chromedriver")
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "poster"}

HOSTILE_REGISTRY = """\
title: Hostile <script>window.__pwned=true</script> registry
base_url: https://example.org/hostile/
categories:
  - slug: security
    title: Security
    description: Finding secrets, risky code and vulnerable dependencies.
"""

# Every payload sets window.__pwned; the browser test checks it never becomes true.
HOSTILE_SKILL_MD = """\
---
name: evil-skill
description: 'Looks harmless <b onmouseover="window.__pwned=true">hover me</b> <script>window.__pwned=true</script>
  and is used when testing the sanitiser.'
license: MIT
metadata:
  category: security
  tags: xss, sanitiser
  version: "1.0.0"
  author: "<script>window.__pwned=true</script>"
---
# Evil <script>window.__pwned=true</script>

<script>window.__pwned = true;</script>
<img src=#x onerror="window.__pwned=true">
[click me](javascript:window.__pwned=true)
<iframe src="javascript:window.__pwned=true"></iframe>
<form action="javascript:window.__pwned=true"><input type="submit" value="go"></form>
<a href="jAvAsCrIpT:window.__pwned=true">mixed case</a>
<svg onload="window.__pwned=true"></svg>
<div style="background:url(javascript:window.__pwned=true)" onclick="window.__pwned=true">styled</div>
<style>body { display: none }</style>
<!--sr:0-->
{{ config }} {% raw %}

## Usage

Run [the script](scripts/run.sh), read [the guide](references/guide.md) or [jump](#usage).
![logo](assets/logo.png)
"""


def bundled_site(base: Path) -> Path:
    """The bundled registry built once per test session into ``base`` (skills another change leaves invalid are
    left out rather than failing every website test)."""
    out = base / "bundled-site"
    if not (out / "index.html").is_file():
        result = build(load_config(REPO / "registry.yaml"), out, BuildOptions(keep_going=True))
        assert len(result.published) >= 5
    return out


def hostile_site(base: Path) -> Path:
    """A registry of one skill whose body and metadata try every way in; built once per session into ``base``."""
    root = base / "hostile-registry"
    out = root / "site"
    if not (out / "index.html").is_file():
        write_hostile_registry(root)
        assert build(load_config(root / "registry.yaml"), out).published == ("evil-skill",)
    return out


def set_page_body(registry: Path, value: str) -> None:
    """Give ``registry``'s registry.yaml the ``publish:`` section ``page_body: value`` (replacing any there)."""
    text = (registry / "registry.yaml").read_text(encoding="utf-8")
    text = re.sub(r"\npublish:\n(  .*\n)*", "\n", text)
    (registry / "registry.yaml").write_text(text + f"publish:\n  page_body: {value}\n", encoding="utf-8")


def write_hostile_registry(root: Path) -> Path:
    return write_tree(root, {
        "registry.yaml": HOSTILE_REGISTRY,
        "skills/evil-skill/SKILL.md": HOSTILE_SKILL_MD,
        "skills/evil-skill/scripts/run.sh": "#!/bin/sh\necho hi\n",
        "skills/evil-skill/references/guide.md": "# Guide\n",
        "skills/evil-skill/assets/logo.png": b"\x89PNG\r\n\x1a\n",
    })


class Page(HTMLParser):
    """Every start tag of a page with its attributes, and the text of each script element."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data

    def urls(self) -> Iterator[str]:
        for _, attrs in self.tags:
            for name, value in attrs.items():
                if name in URL_ATTRIBUTES and value:
                    yield value

    def links_to(self, prefix: str) -> list[str]:
        return [attrs["href"] for tag, attrs in self.tags if tag == "a" and attrs.get("href", "").startswith(prefix)]


def read_page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


def internal_target(out: Path, page: Path, url: str, site_url: str) -> Path | None:
    """The file an internal URL of ``page`` resolves to in ``out`` (None for external URLs)."""
    parts = urlsplit(url)
    base = urlsplit(site_url)
    if parts.scheme or parts.netloc:
        if not site_url or not url.startswith(site_url):
            return None  # another host: not ours to check
        rel = url[len(site_url):]
    elif url.startswith("/"):
        base_path = base.path or "/"
        assert url.startswith(base_path), f"{page}: site-absolute link {url} outside the base path {base_path}"
        rel = url[len(base_path):]
    else:
        page_dir = page.parent.relative_to(out).as_posix()
        rel = posixpath.join(page_dir, parts.path) if page_dir != "." else parts.path
    path = unquote(urlsplit(rel).path)
    norm = posixpath.normpath(path) if path else "."
    assert not norm.startswith(".."), f"{page}: {url} leaves the site"
    target = out / norm
    if path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target


def broken_links(out: Path, site_url: str) -> list[str]:
    """Every internal URL of the built pages whose file is missing. The project's own documentation (every page's
    footer links it) is published beside this repository's registry by the Pages workflow, not by the build."""
    from builder.site.page_templates import SKILLREG_DOCS

    broken = []
    for page in sorted(out.rglob("*.html")):
        for url in read_page(page).urls():
            if url.startswith(("#", "mailto:", "data:", SKILLREG_DOCS)):
                continue
            target = internal_target(out, page, url, site_url)
            if target is not None and not target.is_file():
                broken.append(f"{page.relative_to(out)}: {url}")
    return broken


BROWSER_WAIT = 15  # seconds a browser test waits for a page; generous for a loaded two-core machine


@contextmanager
def chromium(profile: Path, wait: float) -> Iterator[Any]:
    """Headless Chromium driven by selenium, its profile in ``profile``, a 1280x900 window; never downloads anything."""
    os.environ["SE_OFFLINE"] = "true"  # selenium-manager must never try to download a browser or a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--window-size=1280,900", f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    browser.set_page_load_timeout(wait * 2)
    try:
        yield browser
    finally:
        browser.quit()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


class PagesHandler(QuietHandler):
    """A static host as GitHub Pages is one for a project site: the folder under ``base_path``, and a missing page
    answered with the folder's 404.html and status 404. With ``only_under``, every address outside ``base_path``
    is missing too (a mirror or a preview at a path of its own)."""

    base_path = "/"
    only_under = False

    def translate_path(self, path: str) -> str:
        if path.startswith(self.base_path):
            return super().translate_path("/" + path[len(self.base_path):])
        return super().translate_path("/no-such-file/" if self.only_under else path)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory, "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)


@contextmanager
def serve(folder: Path, handler: type[QuietHandler] | None = None) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) from a thread, with ``handler`` (a QuietHandler) if given;
    yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler or QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
