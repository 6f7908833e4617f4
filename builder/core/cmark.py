"""GitHub's Markdown renderer, cmark-gfm, as the ``cmarkgfm`` distribution builds it, called through cffi.

``cmarkgfm``'s own helpers free neither the syntax tree nor the HTML of a rendering (about 250 KB kept for every
2.5 KB table body rendered, so a build worker would grow by gigabytes): this module opens the same compiled
library, declares the few functions it needs and frees both, so a process renders any number of bodies in the
memory of one.
"""

from __future__ import annotations

import functools
from typing import Any

import cffi
from cmarkgfm import _cmark

# GitHub's extensions (the footnotes are an option of the parser, not an extension). `tagfilter` is left out:
# the sanitiser removes what it would escape, as it always has.
EXTENSIONS = (b"table", b"strikethrough", b"tasklist", b"autolink")
# cmark's option bits (cmark-gfm.h): keep raw HTML for the sanitiser, read footnotes, mark each block's source.
OPT_SOURCEPOS = 1 << 1
OPT_FOOTNOTES = 1 << 13
OPT_UNSAFE = 1 << 17
OPTIONS = OPT_SOURCEPOS | OPT_FOOTNOTES | OPT_UNSAFE

_DECLARATIONS = """
typedef struct cmark_parser cmark_parser;
typedef struct cmark_node cmark_node;
typedef struct cmark_syntax_extension cmark_syntax_extension;
typedef struct cmark_llist cmark_llist;
typedef struct cmark_mem {
    void *(*calloc)(size_t, size_t); void *(*realloc)(void *, size_t); void (*free)(void *);
} cmark_mem;
const char *cmark_version_string(void);
cmark_mem *cmark_get_default_mem_allocator(void);
void cmark_gfm_core_extensions_ensure_registered(void);
cmark_syntax_extension *cmark_find_syntax_extension(const char *name);
cmark_parser *cmark_parser_new(int options);
void cmark_parser_free(cmark_parser *parser);
int cmark_parser_attach_syntax_extension(cmark_parser *parser, cmark_syntax_extension *extension);
void cmark_parser_feed(cmark_parser *parser, const char *buffer, size_t len);
cmark_node *cmark_parser_finish(cmark_parser *parser);
cmark_llist *cmark_parser_get_syntax_extensions(cmark_parser *parser);
char *cmark_render_html(cmark_node *root, int options, cmark_llist *extensions);
char *cmark_render_xml(cmark_node *root, int options);
void cmark_node_free(cmark_node *node);
"""


class _Library:
    def __init__(self) -> None:
        self.ffi = cffi.FFI()
        self.ffi.cdef(_DECLARATIONS)
        self.lib: Any = self.ffi.dlopen(_cmark.__file__)  # the library cmarkgfm has loaded: one registry
        self.lib.cmark_gfm_core_extensions_ensure_registered()
        self.extensions = {name: self.lib.cmark_find_syntax_extension(name) for name in EXTENSIONS}
        if any(extension == self.ffi.NULL for extension in self.extensions.values()):
            raise RuntimeError("cmark-gfm lacks one of GitHub's extensions")
        self.free = self.lib.cmark_get_default_mem_allocator().free


@functools.cache
def _library() -> _Library:
    return _Library()


def version() -> str:
    """cmark-gfm's own version (``0.29.0.gfm.13``); ``cmarkgfm``'s ``CMARK_VERSION`` constant is stale."""
    library = _library()
    return str(library.ffi.string(library.lib.cmark_version_string()).decode("ascii"))


def render_html(body: str, extensions: tuple[bytes, ...] = EXTENSIONS) -> str:
    """``body`` as GitHub renders it (raw HTML kept for the sanitiser, each block with ``data-sourcepos``), with
    ``extensions`` (some of ``EXTENSIONS``)."""
    return _render(body, extensions, html=True)


def render_xml(body: str, extensions: tuple[bytes, ...]) -> str:
    """cmark's XML of ``body``'s syntax tree, every node with its source position (lines and byte columns)."""
    return _render(body, extensions, html=False)


def _render(body: str, extensions: tuple[bytes, ...], html: bool) -> str:
    library = _library()
    lib, ffi = library.lib, library.ffi
    text = body.encode("utf-8", "replace")  # a lone surrogate (an undecodable byte kept) as `?`
    parser = lib.cmark_parser_new(OPTIONS)
    try:
        for name in extensions:
            lib.cmark_parser_attach_syntax_extension(parser, library.extensions[name])
        lib.cmark_parser_feed(parser, text, len(text))
        root = lib.cmark_parser_finish(parser)
        try:
            if html:
                rendered = lib.cmark_render_html(root, OPTIONS, lib.cmark_parser_get_syntax_extensions(parser))
            else:
                rendered = lib.cmark_render_xml(root, OPTIONS)
            try:
                return str(ffi.string(rendered).decode("utf-8", "replace"))
            finally:
                library.free(rendered)
        finally:
            lib.cmark_node_free(root)
    finally:
        lib.cmark_parser_free(parser)
