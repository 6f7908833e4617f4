"""``skillreg mcp``: the client library as MCP tools, with prompts.chat's tool and field names, beside the MCP
Skills extension (mcp_skills), over stdio or streamable HTTP (mcp_http).

Tools: ``search_skills`` (the registry's own ranking), ``get_skill`` (metadata and every file, from the
verified bundle) and ``install_skill`` (the same verified, atomic, locked install as ``skillreg install``);
both of the last two take an optional ``version``, a metadata.version or a digest, chosen as ``install`` does.
stdout carries the protocol only; warnings go to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote

from pydantic import Field

from .. import __version__
from ..core.errors import ClientError, SkillRegError
from ..core.limits import MCP_MAX_FILES, MCP_MAX_SKILL_BYTES, MIB
from ..core.model import SkillFile
from ..core.terminal import visible
from ..core.urls import declared_author, page_path
from .locations import require_skill_name
from .registry import Registry
from .search import search_with_total

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from .install import FetchedSkill


def _title(name: str, headings: str) -> str:
    first = headings.split(" · ", 1)[0].strip() if headings else ""
    return first or name.replace("-", " ").title()


class SkillCatalog:
    """What the tools return, as plain data; kept apart from the server so it is easy to test and reuse."""

    def __init__(self, registry: Registry, project: Path | None = None) -> None:
        self.registry = registry
        self.project = project

    def warn(self, message: str) -> None:
        """Notes for the person watching the server (stderr); stdout carries the protocol only."""
        print(f"Note: {visible(message)}", file=sys.stderr, flush=True)

    def link(self, detail: Mapping[str, Any]) -> str | None:
        """The skill's web page on the registry that was named (a local build links to the published page)."""
        if self.registry.folder is None:
            return self.registry.url + quote(page_path(str(detail["name"])))
        page = (detail.get("links") or {}).get("page")
        return page if isinstance(page, str) and "://" in page else None

    def summary(self, detail: Mapping[str, Any], headings: str = "") -> dict[str, Any]:
        contributors = [str(a) for a in (detail.get("provenance") or {}).get("authors") or []]
        files = [str(f.get("path")) for f in detail.get("files", []) if isinstance(f, dict)]
        name = str(detail["name"])
        return {
            "id": name,
            "slug": name,
            "title": _title(name, headings),
            "description": detail.get("description"),
            "author": declared_author(detail.get("frontmatter") or {}),  # what the skill says (metadata.author)
            "contributors": contributors,  # who committed to its folder (git)
            "category": detail.get("category"),
            "tags": list(detail.get("tags") or []),
            "version": detail.get("version"),
            "digest": detail.get("digest"),
            "files": files,
            "fileCount": len(files),
            "createdAt": (detail.get("provenance") or {}).get("created"),
            "link": self.link(detail),
        }

    def search(self, query: str, limit: int = 10, category: str | None = None,
               tag: str | None = None, collection: str | None = None) -> dict[str, Any]:
        index = self.registry.search()
        if collection:
            members = set(self.members(collection))
            ranked = index.rank(query, category=category, tag=tag, limit=index.total(query, category=category, tag=tag))
            found = [hit for hit in ranked if hit.name in members]
            hits, total = found[:limit], len(found)
        else:
            hits, total = search_with_total(index, query, category=category, tag=tag, limit=limit)
        with ThreadPoolExecutor(max_workers=min(8, max(1, len(hits)))) as pool:
            details = list(pool.map(lambda h: self.registry.detail(h.name), hits))
        skills = [self.summary(detail, str(hit.row.headings)) for hit, detail in zip(hits, details)]
        return {"query": query, "count": len(skills), "total": total, "skills": skills}

    def members(self, collection: str) -> list[str]:
        """The slugs of a collection's skills (its document under api/v1/collections/); an error naming it when
        the registry publishes no such collection."""
        from ..core.urls import collection_path
        from .transport import NotFound

        try:
            doc = self.registry.document(collection_path(require_skill_name(collection)))
        except NotFound:
            raise ClientError(f"{self.registry.url}: no collection named `{collection}`") from None
        return [s for s in doc.get("skills") or () if isinstance(s, str)]

    def get(self, id_or_slug: str, version: str | None = None) -> dict[str, Any]:
        """The files of the version ``install_skill`` would take (the newest that is not yanked), or with
        ``version`` (a metadata.version or a digest) that version's."""
        skill, detail = self._version(id_or_slug.strip(), (version or "").strip() or None)
        served(skill.name, skill.files)
        files = []
        for f in skill.files:
            if f.is_text:
                files.append({"filename": f.path, "content": f.data.decode("utf-8")})
            else:
                import base64

                files.append({"filename": f.path, "content": base64.b64encode(f.data).decode("ascii"),
                              "encoding": "base64"})
        skill_md = next((f["content"] for f in files if f["filename"] == skill.skill_md), "")
        headings = " · ".join(line.lstrip("#").strip() for line in skill_md.split("\n") if line.startswith("# "))
        return {**self.summary(detail, headings), "version": skill.version, "digest": skill.digest,
                "license": detail.get("license"), "updatedAt": (detail.get("provenance") or {}).get("updated"),
                "files": files}

    def _version(self, name: str, version: str | None) -> tuple[FetchedSkill, Mapping[str, Any]]:
        """One published version and what describes it: the detail document, or, for a skill that left the
        registry, its own frontmatter."""
        from ..core.frontmatter import parse_skill_md
        from .install import MAX_FRONTMATTER_BYTES
        from .project import choose_version
        from .transport import NotFound

        skill = choose_version(self.registry, name, version)()
        try:
            return skill, self.registry.detail(name)
        except NotFound:
            pass
        skill_md = next(f for f in skill.files if f.path == skill.skill_md)
        front = parse_skill_md(skill_md.data, f"{name}/{skill.skill_md}", max_frontmatter_bytes=MAX_FRONTMATTER_BYTES,
                               skill=name).frontmatter
        data: dict[str, Any] = dict(front.data) if front is not None else {}
        meta: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
        return skill, {"name": name, "description": data.get("description"), "frontmatter": data,
                       "license": data.get("license"), "category": meta.get("category"),
                       "tags": [t.strip() for t in str(meta.get("tags") or "").split(",") if t.strip()],
                       "files": [{"path": f.path} for f in skill.files]}

    def install(self, slug: str, target: str = "claude", force: bool = False,
                version: str | None = None) -> dict[str, Any]:
        """``target``: an agent name from the agent table (the skill goes into its project folder; an agent that
        calls the tool never chooses a free path); ``version``: a metadata.version or a digest (default: the newest
        version that is not yanked)."""
        from . import project as project_ops
        from .agents import agent_table
        from .lock import locked

        root = self.project or Path.cwd()
        folder = agent_table().get(target.strip()).folder(global_=False, project_root=root)
        with locked(root, waiting=self.warn) as lock:
            lock, changes = project_ops.install(lock, self.registry, [(slug.strip(), (version or "").strip() or None)],
                                                 [folder], force=force)
        change = changes[0]
        entry = lock.entries[change.name]
        return {"slug": change.name, "status": change.action, "version": change.version, "digest": change.digest,
                "path": str(lock.folder(lock.target(folder / change.name))), "files": sorted(entry.files),
                "lock": str(lock.path)}


def served(name: str, files: Sequence[SkillFile]) -> None:
    """Refuse, with a message that says so, a skill larger than the MCP Skills extension serves (a registry
    published before the shared limits could hold one); installing it still works."""
    size = sum(len(f.data) for f in files)
    if len(files) > MCP_MAX_FILES or size > MCP_MAX_SKILL_BYTES:
        raise ClientError(f"{name} is too large to serve over MCP: it has {len(files):,} files and {size:,} bytes, "
                          f"and MCP serves at most {MCP_MAX_FILES:,} files and {MCP_MAX_SKILL_BYTES // MIB} MiB "
                          f"per skill; install it with install_skill instead")


def _one_name(id_: str | None, slug: str | None) -> str:
    """get_skill takes ``id`` or ``slug`` (prompts.chat accepts both); here they are the same name."""
    from mcp.server.mcpserver.exceptions import ToolError

    given = {v.strip() for v in (id_, slug) if v is not None and v.strip()}
    if not given:
        raise ToolError("get_skill needs the skill's id or slug")
    if len(given) > 1:
        raise ToolError(f"get_skill was given id {id_!r} and slug {slug!r}; they name different skills")
    return given.pop()


def create_server(registry: Registry, project: Path | None = None, *, install: bool = True) -> MCPServer:
    """The tools, and every published skill under the MCP Skills extension; ``install``: offer install_skill."""
    from mcp.server.caching import CacheHint
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from .mcp_skills import TTL_MS, SkillsExtension, serve_skill_resources
    from .pins import bind_project
    from .skill_pages import SkillPages

    bind_project(registry, project or Path.cwd())  # install_skill binds again, from the lock it holds
    catalog = SkillCatalog(registry, project)
    pages = SkillPages(registry)
    hint = CacheHint(ttl_ms=TTL_MS, scope="private")
    server = MCPServer("skillreg", version=__version__,
                       instructions="Search the skill registry, read a skill's files"
                                    + (", and install a skill into this project after verifying its digest."
                                       if install else "."),
                       extensions=[SkillsExtension(pages)], log_level="WARNING",
                       cache_hints={"resources/list": hint, "resources/read": hint, "tools/list": hint})
    serve_skill_resources(server, pages)

    def run(call: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
        from .targets import Refused

        try:
            return call(*args)
        except Refused as exc:  # the command line's way out is a flag no tool call can pass
            raise ToolError(exc.tool) from None
        except SkillRegError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(description="Search the registry's Agent Skills by keyword, ranked like the registry's website. "
                             "Returns each skill's id, slug, title, description, author (metadata.author), "
                             "contributors (git commit authors), category, tags, files, fileCount, createdAt "
                             "and link; count is how many are returned, total how many match.")
    def search_skills(query: Annotated[str, Field(description="Search query to find relevant skills")],
                      limit: Annotated[int, Field(ge=1, le=50, description="Maximum number of skills (1-50)")] = 10,
                      category: Annotated[str | None, Field(description="Filter by category slug")] = None,
                      tag: Annotated[str | None, Field(description="Filter by tag slug")] = None,
                      collection: Annotated[str | None, Field(description="Filter by collection (a plugin or "
                                                                          "category) name")] = None
                      ) -> dict[str, Any]:
        return run(catalog.search, query, limit, category, tag, collection)

    @server.tool(description="Get an Agent Skill by id or slug, with every file's content (verified against the "
                             "published digest). Save the files under .claude/skills/{slug}/ to use it"
                             + (", or call install_skill." if install else "."))
    def get_skill(id: Annotated[str | None, Field(description="The skill's id")] = None,
                  slug: Annotated[str | None, Field(description="The skill's slug (the same as its id here)")] = None,
                  version: Annotated[str | None, Field(description="A published version (metadata.version) or "
                                                                   "digest (sha256:... or 12+ hex digits); default: "
                                                                   "the newest")] = None
                  ) -> dict[str, Any]:
        return run(catalog.get, _one_name(id, slug), version)

    if not install:
        return server

    @server.tool(description="Install an Agent Skill into this project: verifies the bundle's sha256 and the "
                             "skill digest, swaps the folder in atomically and records it in skills-lock.json. "
                             "Never runs anything from the skill.")
    def install_skill(slug: Annotated[str, Field(description="The skill's slug")],
                      target: Annotated[str, Field(description="The agent whose project skill folder receives it: "
                                                               "claude, codex, gemini, copilot, cursor, opencode or "
                                                               "agents")] = "claude",
                      version: Annotated[str | None, Field(description="A published version (metadata.version) or "
                                                                       "digest; default: the newest that is not "
                                                                       "yanked")] = None
                      ) -> dict[str, Any]:
        return run(catalog.install, slug, target, False, version)

    return server


def serve(location: str, http: str | None = None, *, allowed_hosts: Sequence[str] = (),
          allowed_origins: Sequence[str] = (), allow_install: bool = False) -> None:
    """Over stdio (the default), or with ``http`` ([HOST:]PORT) over streamable HTTP, where install_skill is
    offered only with ``allow_install``: an endpoint anyone on it can call must not write into the project."""
    from .mcp_http import parse_listen, security, serve_http
    from .mcp_stdio import run_stdio

    registry = Registry(location, warn=lambda message: print(f"Warning: {visible(message)}", file=sys.stderr))
    if http is None:
        run_stdio(create_server(registry))
        return
    listen = parse_listen(http)
    security(listen, allowed_hosts, allowed_origins)  # refuses a bad combination before anything starts
    serve_http(create_server(registry, install=allow_install), listen, allowed_hosts, allowed_origins)
