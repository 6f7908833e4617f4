"""Skill files that a browser would open as a page able to run script on the registry's own site.

The site serves every skill file raw, at ``api/v1/skills/<name>/files/<path>`` and under ``.well-known/skills/``,
with the media type the host picks from the file's extension (GitHub Pages uses the mime-db table, kept in
``data/active_types.yaml``). A file served as HTML, XHTML, SVG or any XML type is a document on the registry's
origin, so it is parsed the way a browser would parse it, HTML with an HTML5 parser (Lexbor, through selectolax)
and everything else with expat, and refused when it holds anything that runs script, navigates the page,
embeds another document or posts a form elsewhere. An SVG diagram without any of that passes unchanged.
"""

from __future__ import annotations

import functools
import posixpath
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from xml.parsers import expat

import yaml

XHTML = "http://www.w3.org/1999/xhtml"
SVG = "http://www.w3.org/2000/svg"
MATHML = "http://www.w3.org/1998/Math/MathML"
ACTIVE_NAMESPACES = frozenset({XHTML, SVG, MATHML})  # where a browser gives elements behaviour in an XML document

# Elements that run script or load another document into the page, in HTML and in SVG.
SCRIPTING_ELEMENTS = frozenset({"script", "handler", "listener"})
EMBEDDING_ELEMENTS = frozenset({"iframe", "frame", "frameset", "object", "embed", "applet", "portal",
                                "fencedframe"})
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "data", "poster", "background", "codebase",
                            "cite", "longdesc", "lowsrc", "dynsrc", "manifest", "ping", "xlink:href"})
SCRIPT_SCHEMES = ("javascript:", "vbscript:", "livescript:")
# A data: URL may only carry a raster image, and only where an image is loaded (an SVG image cannot run script
# there, but a data: document navigated to or embedded can).
DATA_IMAGE_TYPES = ("data:image/png", "data:image/jpeg", "data:image/gif", "data:image/webp", "data:image/avif",
                    "data:image/bmp")
IMAGE_ELEMENTS = frozenset({"img", "image", "feimage", "source", "picture", "input"})
REFRESH = frozenset({"refresh", "set-cookie"})
MAX_SVGZ_BYTES = 16 * 1024 * 1024
# An HTML5 tree builder takes time quadratic in nesting depth (20,000 nested elements: under a second; 170,000, a
# minute). A page with more start tags than this is refused rather than parsed: no skill needs one.
MAX_HTML_TAGS = 20_000
_START_TAG = re.compile(rb"<[A-Za-z]")
_URL_IGNORED = "".join(chr(c) for c in range(0x21))  # what a URL parser strips around and (tab, newline) inside


@functools.cache
def _active_types() -> dict[str, str]:
    text = (Path(__file__).parents[1] / "data" / "active_types.yaml").read_text(encoding="utf-8")
    table = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return {ext: media_type for media_type, exts in table.items() for ext in exts.split()}


def served_type(path: str) -> str | None:
    """The active media type a host serves ``path`` as, or None when a browser would not render it as a page."""
    ext = posixpath.splitext(posixpath.basename(path))[1][1:].lower()
    return _active_types().get(ext) if ext else None


def active_content(path: str, data: bytes) -> tuple[int, str] | None:
    """(line or 0, what) in the file at ``path`` would run or load something on the registry's site, or None."""
    media_type = served_type(path)
    if media_type is None:
        return None
    if path.lower().endswith(".svgz"):
        try:
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            data = inflater.decompress(data, MAX_SVGZ_BYTES)
        except zlib.error:
            return 0, "gzip data that cannot be read"
        if inflater.unconsumed_tail:
            return 0, f"more than {MAX_SVGZ_BYTES // (1024 * 1024)} MiB once decompressed"
    if media_type == "text/html":
        html = _html_problem(data)
        return (0, html) if html else None
    return _xml_problem(data)


# ------------------------------------------------------------------------------------------------------- HTML

def _html_problem(data: bytes) -> str | None:
    from selectolax.lexbor import LexborHTMLParser

    if b"\x1b" in data:
        return "an escape byte (0x1B), which switches some encodings and can turn text into markup"
    tags = len(_START_TAG.findall(data)) if data.count(b"<") > MAX_HTML_TAGS else 0
    if tags > MAX_HTML_TAGS:
        return f"{tags:,} tags, more than the {MAX_HTML_TAGS:,} a page may have to be checked"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", "replace")
    else:  # the host declares UTF-8; invalid bytes become U+FFFD, as in the browser
        text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    tree = LexborHTMLParser(text)
    for node in tree.root.traverse(include_text=False) if tree.root is not None else ():
        tag = (node.tag or "").lower()
        problem = _element_problem(tag, {k.lower(): v or "" for k, v in node.attributes.items()})
        if problem:
            return problem
    return None


# -------------------------------------------------------------------------------------------------------- XML

class _Refused(Exception):
    def __init__(self, line: int, what: str) -> None:
        super().__init__(what)
        self.line, self.what = line, what


def _xml_problem(data: bytes) -> tuple[int, str] | None:
    """Parse with expat; external entities are never loaded and internal ones are expanded, so what the
    checks see is what a browser would build. Not well-formed input is refused: a browser renders a broken
    XML document up to the error, which this could not check."""
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(what: str) -> None:
        raise _Refused(parser.CurrentLineNumber, what)

    def start(name: str, attributes: dict[str, str]) -> None:
        namespace, _, local = name.rpartition(" ")
        named = {_attribute_name(key): value for key, value in attributes.items()}
        if namespace in ACTIVE_NAMESPACES:
            problem = _element_problem(local.lower(), named)
        else:  # inert here, but a script URL is refused wherever it is
            problem = next(_script_urls(named), None)
        if problem:
            refuse(problem)

    def processing_instruction(target: str, _data: str) -> None:
        if target.lower() == "xml-stylesheet":
            refuse("an <?xml-stylesheet?> instruction, which can apply XSLT that writes script")

    def entity(name: str, is_parameter: bool, value: str | None, base: str | None, system_id: str | None,
               public_id: str | None, notation: str | None) -> None:
        if is_parameter:
            refuse(f"a parameter entity `%{name};`")
        if system_id is not None or public_id is not None:
            refuse(f"an external entity `&{name};`")
        if expat.version_info < (2, 4, 1):  # before expat's own cap on entity expansion (billion laughs)
            refuse(f"an entity `&{name};`, which this machine's expat cannot expand safely")

    def external_reference(*_args: object) -> int:
        refuse("a reference to an external entity")
        return 0

    parser.StartElementHandler = start
    parser.ProcessingInstructionHandler = processing_instruction
    parser.EntityDeclHandler = entity
    parser.ExternalEntityRefHandler = external_reference
    try:
        parser.Parse(data, True)
    except _Refused as refused:
        return refused.line, refused.what
    except expat.ExpatError as exc:
        return exc.lineno, f"XML that is not well-formed ({expat.ErrorString(exc.code)}), which a browser shows " \
                           "up to the error"
    except (LookupError, ValueError) as exc:  # an encoding expat and Python do not know
        return 0, f"XML in an encoding that cannot be read ({exc})"
    return None


def _attribute_name(key: str) -> str:
    namespace, _, local = key.rpartition(" ")
    return f"xlink:{local}" if namespace == "http://www.w3.org/1999/xlink" else local.lower()


# ----------------------------------------------------------------------------------------------- both kinds

def _element_problem(tag: str, attributes: dict[str, str]) -> str | None:
    if tag in SCRIPTING_ELEMENTS:
        return f"an element <{tag}>"
    if tag in EMBEDDING_ELEMENTS:
        return f"an element <{tag}>, which loads another document into the page"
    if tag == "base":
        return "an element <base>, which sends every link of the page elsewhere"
    for name in attributes:
        if name.startswith("on") or name.startswith("xlink:on"):
            return f"an event handler `{name}` on <{tag}>"
    if tag == "meta" and attributes.get("http-equiv", "").strip().lower() in REFRESH:
        return f"<meta http-equiv=\"{attributes['http-equiv']}\">, which redirects or sets cookies"
    if tag in ("form", "button", "input"):
        target = attributes.get("action" if tag == "form" else "formaction", "").strip().lower()
        if target.startswith(("http:", "https:", "//", "\\")):
            return f"a <{tag}> that posts to {target}"
    problem = next(_script_urls(attributes), None)
    if problem:
        return f"{problem} on <{tag}>"
    for name in URL_ATTRIBUTES & attributes.keys():
        url = _url(attributes[name])
        if url.startswith("data:") and not (tag in IMAGE_ELEMENTS and url.startswith(DATA_IMAGE_TYPES)):
            return f"a data: URL in `{name}` on <{tag}>, which can carry a document"
    return None


def _script_urls(attributes: dict[str, str]) -> Iterator[str]:
    """Every attribute whose value, or one ``;``-separated part of it (SVG animation values), is a script URL."""
    for name, value in attributes.items():
        if any(_url(part).startswith(SCRIPT_SCHEMES) for part in value.split(";")):
            yield f"a script URL in `{name}`"


def _url(value: str) -> str:
    """The URL as a browser reads it: blanks and controls around it dropped, tabs and newlines inside too."""
    return value.strip(_URL_IGNORED).replace("\t", "").replace("\n", "").replace("\r", "").lower()
