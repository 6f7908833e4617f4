"""The MCP Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``) over the published registry.

The SDK's ``Extension``/``MethodBinding`` serve the extension's own methods (``skills/list``, ``skills/get``,
``resources/directory/read``); ``resources/list`` and ``resources/read`` are spec methods, which an extension may
not bind, so ``serve_skill_resources`` replaces MCPServer's handlers for them with paginated ones through the
low-level server's ``add_request_handler``. Every skill file is a ``skill://<name>/<path>`` resource whose bytes
come from the verified bundle (``SkillPages``).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, unquote

import anyio.to_thread
import mcp_types as types
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError

from ..core.content_types import BINARY, TEXT, media_type
from ..core.errors import SkillRegError
from .skill_pages import SkillPages, SkillRow

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SCHEME = "skill://"
DIRECTORY = "inode/directory"
TTL_MS = 60_000  # how long a host may reuse a listing or a read: a registry changes when it is rebuilt
CACHE = {"ttlMs": TTL_MS, "cacheScope": "private"}

T = TypeVar("T")


class ListSkillsParams(types.RequestParams):
    cursor: str | None = None


class SkillUriParams(types.RequestParams):
    uri: str


class DirectoryParams(types.RequestParams):
    uri: str
    cursor: str | None = None


def invalid(message: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, message)


async def off_loop(call: Callable[[], T]) -> T:
    """Run a registry read (blocking network or disk) in a worker thread; its errors become the client's."""
    try:
        return await anyio.to_thread.run_sync(call)
    except SkillRegError as exc:
        raise MCPError(types.INTERNAL_ERROR, str(exc)) from None


def file_uri(name: str, path: str = "") -> str:
    return SCHEME + name + "".join("/" + quote(part, safe="") for part in path.split("/") if part)


def parse_uri(uri: str) -> tuple[str, str] | None:
    """(skill name, path inside it, "" for its folder) of a ``skill://`` URI, or None."""
    if not uri.startswith(SCHEME):
        return None
    name, _, rest = uri[len(SCHEME):].partition("/")
    parts = [unquote(part) for part in rest.split("/")] if rest else []
    if not name or any(part in ("", ".", "..") or "/" in part for part in parts):
        return None
    return name, "/".join(parts)


def mime_type(path: str, text: bool | None = None) -> str:
    """The resource's type from the registry's one table (``core.content_types``), as ``serve`` and ``upload`` send
    it; an extension the table does not know is text/plain for text, else bytes."""
    return media_type(path) or (TEXT if text else BINARY)


def skill_entry(row: SkillRow) -> dict[str, Any]:
    """One entry of ``skills/list``: the SKILL.md URI, the frontmatter, and every file with digest and size."""
    return {"uri": file_uri(row.name, row.skill_md), "frontmatter": dict(row.frontmatter),
            "resources": [{"uri": file_uri(row.name, f.path), "digest": "sha256:" + f.sha256, "size": f.size}
                          for f in row.files]}


def children(row: SkillRow, folder: str) -> list[dict[str, Any]] | None:
    """The direct children of ``folder`` ("" for the skill's own) as directory-read resources; None when the
    skill has no such folder."""
    prefix = folder + "/" if folder else ""
    found: dict[str, dict[str, Any]] = {}
    for f in row.files:
        if not f.path.startswith(prefix):
            continue
        head, sep, _ = f.path[len(prefix):].partition("/")
        if sep:
            found.setdefault(head, {"uri": file_uri(row.name, prefix + head), "name": head, "mimeType": DIRECTORY})
        else:
            found[head] = {"uri": file_uri(row.name, f.path), "name": head, "mimeType": mime_type(f.path),
                           "size": f.size}
    if not found and folder:
        return None
    return [found[key] for key in sorted(found)]


class Listing:
    """Cursors over the pages of ``SkillPages``: the page number and what identifies the listing it belongs to."""

    def __init__(self, pages: SkillPages) -> None:
        self.pages = pages

    def page(self, cursor: str | None) -> tuple[list[SkillRow], str | None]:
        token, count = self.pages.listing()
        number = 0 if cursor is None else self._number(cursor, token)
        if number >= max(count, 1):
            raise invalid(f"cursor {cursor!r} is past the end of the listing")
        rows = self.pages.page(number) if count else []
        following = f"{token}.{number + 1}" if number + 1 < count else None
        return [row for row in rows if row.servable], following

    @staticmethod
    def _number(cursor: str, token: str) -> int:
        got, _, number = cursor.partition(".")
        if not number.isdigit():
            raise invalid(f"{cursor!r} is not a cursor this server gave")
        if got != token:
            raise invalid("the registry changed since this listing began; list again from the start")
        return int(number)


class SkillsExtension(Extension):
    """``skills/list``, ``skills/get`` and ``resources/directory/read``, advertised with ``directoryRead``."""

    identifier = SKILLS_EXTENSION

    def __init__(self, pages: SkillPages) -> None:
        self.pages = pages
        self.listing = Listing(pages)

    def settings(self) -> dict[str, Any]:
        return {"directoryRead": True}

    def methods(self) -> Sequence[MethodBinding]:
        return (MethodBinding("skills/list", ListSkillsParams, self.list_skills),
                MethodBinding("skills/get", SkillUriParams, self.get_skill),
                MethodBinding("resources/directory/read", DirectoryParams, self.read_directory))

    async def list_skills(self, ctx: Any, params: ListSkillsParams) -> dict[str, Any]:
        rows, following = await off_loop(lambda: self.listing.page(params.cursor))
        result: dict[str, Any] = {"skills": [skill_entry(row) for row in rows], **CACHE}
        if following is not None:
            result["nextCursor"] = following
        return result

    async def get_skill(self, ctx: Any, params: SkillUriParams) -> dict[str, Any]:
        parsed = parse_uri(params.uri)
        row = await off_loop(lambda: self.pages.row(parsed[0])) if parsed else None
        if row is None or parsed is None or parsed[1] != row.skill_md or not row.servable:
            raise invalid(f"{params.uri} is not a skill this server serves")
        return {"skill": skill_entry(row), **CACHE}

    async def read_directory(self, ctx: Any, params: DirectoryParams) -> dict[str, Any]:
        if params.cursor is not None:
            raise invalid("a skill's folder is listed in one page; this server gave no cursor")
        parsed = parse_uri(params.uri)
        row = await off_loop(lambda: self.pages.row(parsed[0])) if parsed else None
        listed = children(row, parsed[1]) if row is not None and parsed is not None and row.servable else None
        if listed is None:
            raise invalid(f"{params.uri} is not a folder of a skill this server serves")
        return {"resources": listed, **CACHE}


def serve_skill_resources(server: MCPServer, pages: SkillPages) -> None:
    """``resources/list`` (each skill's SKILL.md, a page of skills at a time) and ``resources/read`` (any file of a
    skill, from its verified bundle) in place of MCPServer's own."""
    listing = Listing(pages)

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams) -> types.ListResourcesResult:
        rows, following = await off_loop(lambda: listing.page(params.cursor))
        return types.ListResourcesResult(next_cursor=following, resources=[
            types.Resource(uri=file_uri(row.name, row.skill_md), name=str(row.frontmatter.get("name", row.name)),
                           description=_text(row.frontmatter.get("description")), mime_type="text/markdown",
                           size=next(f.size for f in row.files if f.path == row.skill_md)) for row in rows])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        parsed = parse_uri(uri)
        row = await off_loop(lambda: pages.row(parsed[0])) if parsed else None
        if row is None or parsed is None or not row.servable or parsed[1] not in {f.path for f in row.files}:
            raise invalid(f"{uri} is not a file of a skill this server serves")
        found = (await off_loop(lambda: pages.files(row)))[parsed[1]]
        contents: types.TextResourceContents | types.BlobResourceContents
        if found.is_text:
            contents = types.TextResourceContents(uri=uri, mime_type=mime_type(found.path, True),
                                                  text=found.data.decode("utf-8"))
        else:
            contents = types.BlobResourceContents(uri=uri, mime_type=mime_type(found.path, False),
                                                  blob=base64.b64encode(found.data).decode("ascii"))
        return types.ReadResourceResult(contents=[contents])

    low = server._lowlevel_server  # noqa: SLF001 - the SDK's documented way to replace a spec method's handler
    low.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
    low.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
