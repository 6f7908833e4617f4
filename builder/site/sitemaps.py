"""sitemap.xml (split into an index of sitemaps past the protocol's limits) and robots.txt for the website."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from urllib.parse import quote, urlsplit

from ..core.errors import BuildError

SITEMAP_MAX_URLS = 50_000  # the sitemaps protocol's limits on one file
SITEMAP_MAX_BYTES = 50 * 1024 * 1024
SITEMAP_INDEX_MAX = 50_000  # sitemaps one index may list
_SITEMAP_HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                 '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
_SITEMAP_TAIL = "</urlset>\n"
_PLAIN_PATH = re.compile(r"[a-z0-9/-]*")


def sitemap_files(site_url: str, urls: Iterable[str], *, max_urls: int | None = None,
                  max_bytes: int | None = None) -> dict[str, bytes]:
    """``sitemap.xml`` listing every page, or, past the protocol's 50,000 URLs or 50 MB a file, a sitemap index
    of that name pointing at ``sitemap-1.xml``, ``sitemap-2.xml``, ... beside it. Without dates, so two builds
    of one commit stay byte-identical; search engines already know the address ``sitemap.xml``."""
    max_urls = max_urls or SITEMAP_MAX_URLS
    room = (max_bytes or SITEMAP_MAX_BYTES) - len(_SITEMAP_HEAD) - len(_SITEMAP_TAIL)
    parts: list[list[str]] = [[]]
    used = 0
    base = html.escape(site_url)
    for u in urls:
        # The site's own paths are slugs, which neither percent-encoding nor XML escaping changes.
        loc = base + u if _PLAIN_PATH.fullmatch(u) else html.escape(site_url + quote(u, safe="/"))
        line = f"  <url><loc>{loc}</loc></url>\n"
        if parts[-1] and (len(parts[-1]) >= max_urls or used + len(line) > room):
            parts.append([])
            used = 0
        parts[-1].append(line)
        used += len(line)
    files = {f"sitemap-{n}.xml": (_SITEMAP_HEAD + "".join(lines) + _SITEMAP_TAIL).encode("utf-8")
             for n, lines in enumerate(parts, 1)}
    if len(files) == 1:
        return {"sitemap.xml": files["sitemap-1.xml"]}
    if len(files) > SITEMAP_INDEX_MAX:
        raise BuildError(f"the site has more pages than a sitemap index of {SITEMAP_INDEX_MAX:,} sitemaps can list")
    index = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    index += [f"  <sitemap><loc>{html.escape(site_url + name)}</loc></sitemap>" for name in files]
    index.append("</sitemapindex>\n")
    return {**files, "sitemap.xml": "\n".join(index).encode("utf-8")}


def robots_txt(site_url: str) -> bytes | None:
    """robots.txt naming the sitemap, for a site served at the root of its host: crawlers read robots.txt only
    there, so a project site below a path (``user.github.io/repo/``) gets none."""
    if urlsplit(site_url).path not in ("", "/"):
        return None
    return f"User-agent: *\nAllow: /\n\nSitemap: {site_url}sitemap.xml\n".encode()
