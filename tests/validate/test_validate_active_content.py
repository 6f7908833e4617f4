"""SK517: a skill file a browser would open as a page that runs script on the registry's site.

Each case is parsed as the host would serve it (the type comes from the extension); the committed fixture
``tests/validate/fixtures/active-content`` and the headless-browser test in ``tests/site/test_site_browser.py``
cover the same rule end to end.
"""

from __future__ import annotations

import gzip

import pytest

from builder.validate.active_content import active_content, served_type

SVG_OPEN = b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'


@pytest.mark.parametrize(("path", "expected"), [
    ("a.svg", "image/svg+xml"), ("A.SVG", "image/svg+xml"), ("x.svgz", "image/svg+xml"), ("p.html", "text/html"),
    ("p.htm", "text/html"), ("p.shtml", "text/html"), ("p.xht", "application/xhtml+xml"),
    ("p.xhtml", "application/xhtml+xml"), ("f.xml", "application/xml"), ("s.xsl", "application/xml"),
    ("s.xslt", "application/xslt+xml"), ("f.rss", "application/rss+xml"), ("m.mathml", "application/mathml+xml"),
    ("x.xul", "application/vnd.mozilla.xul+xml"), ("page.html.txt", None), ("run.js", None), ("README", None),
    (".svg", None), ("notes.md", None), ("data.json", None),
])
def test_the_served_type_comes_from_the_extension_not_the_machine(path: str, expected: str | None) -> None:
    assert served_type(path) == expected


@pytest.mark.parametrize(("path", "data", "expected"), [
    ("a.svg", SVG_OPEN + b"<script>alert(1)</script></svg>", (1, "an element <script>")),
    ("b.svg", b'<svg xmlns="http://www.w3.org/2000/svg"\n onload="alert(1)"/>', (1, "an event handler `onload` on <svg>")),
    ("c.svg", SVG_OPEN + b'<a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
     (1, "a script URL in `xlink:href` on <a>")),
    ("c2.svg", SVG_OPEN + b'<a href=" JaVa&#x09;sCrIpT:alert(1)">x</a></svg>', (1, "a script URL in `href` on <a>")),
    ("d.svg", SVG_OPEN + b'<a><animate attributeName="href" values="x;javascript:alert(1)"/></a></svg>',
     (1, "a script URL in `values` on <animate>")),
    ("e.svg", SVG_OPEN + b'<set attributeName="href" to="javascript:alert(1)"/></svg>', (1, "a script URL in `to` on <set>")),
    ("f.svg", SVG_OPEN + b'<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="x"/></foreignObject></svg>',
     (1, "an element <iframe>, which loads another document into the page")),
    ("g.svg", SVG_OPEN + b'<use href="data:image/svg+xml,&lt;svg/&gt;"/></svg>',
     (1, "a data: URL in `href` on <use>, which can carry a document")),
    ("h.svg", b'<!DOCTYPE svg [<!ENTITY e SYSTEM "file:///etc/passwd">]>' + SVG_OPEN + b"<text>&e;</text></svg>",
     (1, "an external entity `&e;`")),
    ("i.svg", b'<!DOCTYPE svg [<!ENTITY % p SYSTEM "http://127.0.0.1/x.dtd"> %p;]>' + SVG_OPEN + b"</svg>",
     (1, "a parameter entity `%p;`")),
    # What an internal entity or a DTD default attribute brings in is checked as if written out.
    ("j.svg", b'<!DOCTYPE svg [<!ENTITY s "&#60;script&#62;alert(1)&#60;/script&#62;">]>' + SVG_OPEN + b"&s;</svg>",
     (1, "an element <script>")),
    ("k.svg", b'<!DOCTYPE svg [<!ATTLIST svg onload CDATA "alert(1)">]>' + SVG_OPEN + b"</svg>",
     (1, "an event handler `onload` on <svg>")),
    ("l.svg", SVG_OPEN + b"<rect>", (1, "XML that is not well-formed (no element found), which a browser shows up to "
                                        "the error")),
    ("m.svgz", gzip.compress(SVG_OPEN + b"<script>alert(1)</script></svg>", mtime=0), (1, "an element <script>")),
    ("n.svgz", b"not gzip", (0, "gzip data that cannot be read")),
    ("feed.xml", b'<?xml version="1.0"?>\n<?xml-stylesheet type="text/xsl" href="s.xsl"?><r/>',
     (2, "an <?xml-stylesheet?> instruction, which can apply XSLT that writes script")),
    ("ns.xml", b'<r><x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script></r>', (1, "an element <script>")),
    ("m.mathml", b'<math xmlns="http://www.w3.org/1998/Math/MathML" href="javascript:alert(1)"/>',
     (1, "a script URL in `href` on <math>")),
    ("page.xhtml", b'<html xmlns="http://www.w3.org/1999/xhtml"><body onload="alert(1)"/></html>',
     (1, "an event handler `onload` on <body>")),
    ("p.html", b"<p>x</p><!--><script>alert(1)</script>-->", (0, "an element <script>")),
    ("q.html", b"<svg><script>alert(1)</script></svg>", (0, "an element <script>")),
    ("r.html", b"<img src=x onerror=alert(1)>", (0, "an event handler `onerror` on <img>")),
    ("s.html", b'<meta http-equiv="Refresh" content="0;url=https://example.org">',
     (0, "<meta http-equiv=\"Refresh\">, which redirects or sets cookies")),
    ("t.html", b'<form action="https://example.org/login"><input type=password></form>',
     (0, "a <form> that posts to https://example.org/login")),
    ("u.html", b"<base href=\"https://example.org/\">", (0, "an element <base>, which sends every link of the page elsewhere")),
    ("v.html", b"<object data=x.swf></object>", (0, "an element <object>, which loads another document into the page")),
    ("w.html", b"\xef\xbb\xbf<a href='vbscript:x'>x</a>", (0, "a script URL in `href` on <a>")),
    ("x.html", "<script>alert(1)</script>".encode("utf-16"), (0, "an element <script>")),
    ("y.html", b"<p>\x1b$B<script>\x1b(B</p>", (0, "an escape byte (0x1B), which switches some encodings and can turn "
                                                  "text into markup")),
])
def test_active_content_is_found(path: str, data: bytes, expected: tuple[int, str]) -> None:
    assert active_content(path, data) == expected


@pytest.mark.parametrize(("path", "data"), [
    ("diagram.svg", b'<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
                    b'"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n' + SVG_OPEN +
                    b'<style>rect{fill:red}</style><a href="https://example.org"><rect width="1" height="1"/></a>'
                    b'<image href="data:image/png;base64,iVBORw0KGgo="/><text>on and off</text></svg>'),
    ("mermaid.svg", SVG_OPEN + b'<foreignObject><div xmlns="http://www.w3.org/1999/xhtml"><span>label</span></div>'
                               b"</foreignObject></svg>"),
    ("illustrator.svg", b'<!DOCTYPE svg [<!ENTITY ns_svg "http://www.w3.org/2000/svg">]><svg xmlns="&ns_svg;"/>'),
    ("compressed.svgz", gzip.compress(SVG_OPEN + b"<circle r='1'/></svg>", mtime=0)),
    ("page.html", b"<!doctype html><h1>Report</h1><p>See <a href='https://example.org'>this</a>.</p>"
                  b"<img src='data:image/png;base64,iVBORw0KGgo=' alt=''><form><input name=q></form>"),
    ("data.xml", b"<config><script>not a script: no active namespace</script><meta/></config>"),
    ("template.html.txt", b"<script>filled in by the agent</script>"),
    ("app.js", b"document.write('<script>')"),
])
def test_inert_files_pass(path: str, data: bytes) -> None:
    assert active_content(path, data) is None


def test_an_entity_bomb_is_refused_without_expanding_it() -> None:
    entities = '<!ENTITY a0 "lol">' + "".join(f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 12))
    bomb = f"<!DOCTYPE svg [{entities}]>".encode() + SVG_OPEN + b"<text>&a11;</text></svg>"  # 10**11 x "lol"
    found = active_content("bomb.svg", bomb)
    assert found is not None and found[1].startswith(("XML that is not well-formed", "an entity `&a0;`")), found


@pytest.mark.timing
@pytest.mark.parametrize("unit", [b"<div>", b"<b>", b"<p><span>"])
def test_a_deeply_nested_page_at_the_size_cap_is_refused_in_linear_time(unit: bytes) -> None:
    """An HTML5 tree builder is quadratic in nesting depth: 170,000 nested <div> took Lexbor about a minute."""
    import time

    from builder.core.config import Limits

    page = unit * (Limits().max_file_bytes // len(unit))
    started = time.process_time()
    found = active_content("deep.html", page)
    elapsed = time.process_time() - started
    assert found is not None and found[1].endswith("tags, more than the 20,000 a page may have to be checked")
    assert elapsed < 2.0


@pytest.mark.timing
def test_a_page_with_the_most_tags_allowed_is_still_checked_quickly() -> None:
    import time

    started = time.process_time()
    assert active_content("deep.html", b"<div>" * 20_000) is None
    assert active_content("deep.html", b"<div>" * 19_999 + b"<script>x</script>") == (0, "an element <script>")
    assert time.process_time() - started < 4.0
