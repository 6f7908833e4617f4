"""The client commands of ``skillreg``: search, info, install, update, remove, list, verify, mcp.

Each command parses its options, calls one function of ``builder.client``, prints the result and picks
the exit code; errors are raised and become one line on stderr in the group's one handler (``app``).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..core.errors import EXIT_FAILURE
from ..core.model import short_digest
from ..core.terminal import visible, visible_json

if TYPE_CHECKING:
    from ..client.lock import Lock
    from ..client.project import Change
    from ..client.registry import Registry


def registry_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--registry", "location", envvar="SKILLREG_REGISTRY", metavar="URL",
                        help="Registry root: https:// URL, http://127.0.0.1 URL, file:// URL or a folder "
                             "(default: $SKILLREG_REGISTRY, else site/ of the local registry's build).")(func)


def global_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--global", "global_", is_flag=True,
                        help="The user's skill folders (~/...) and lock, instead of the current project's.")(func)


def dir_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--dir", "dirs", multiple=True, type=click.Path(file_okay=False, path_type=Path),
                        help="A skills folder outside the agents' folders that this command may write into "
                             "(repeatable); a lock alone never allows one.")(func)


def _typed(folder: Path) -> Path:
    """A --dir as typed, made absolute against the current folder."""
    return folder.expanduser().absolute()


def _warn(message: str) -> None:
    click.echo(f"Warning: {visible(message)}", err=True)


def default_location() -> str:
    """The output folder of the local registry's build: works with no network."""
    from ..core.config import load_config
    from ..core.errors import ClientError, ConfigError, UsageError
    from ..core.urls import INDEX_PATH

    obj = click.get_current_context().find_root().obj
    missing = UsageError("no registry given: pass --registry URL or set SKILLREG_REGISTRY "
                         "(or run inside a registry checkout after `skillreg build`)")
    try:
        config = obj.config if obj is not None else load_config(None)
    except ConfigError:
        raise missing from None
    site = config.root / "site"
    if (site / INDEX_PATH).is_file():
        return str(site)
    if config.path is None:
        raise missing  # no registry.yaml above this folder: this is not a registry checkout
    raise ClientError(f"the registry at {display_path(config.root)} has no build ({display_path(site / INDEX_PATH)} "
                     "is missing): run `skillreg build` first, or pass --registry URL")


def open_registry(location: str | None) -> Registry:
    from ..client.registry import Registry

    return Registry(location or default_location(), warn=_warn)


def _pinned_registry(location: str | None) -> Registry:
    """The registry, bound to the root the current project's lock pins for it (a pin binds every read)."""
    from ..client.pins import bind_project

    return bind_project(open_registry(location), Path.cwd())


def _registry_for(location: str | None) -> Callable[[str], Registry]:
    """The registry a lock entry came from, unless --registry (or $SKILLREG_REGISTRY) names one for all; each is
    opened once. A lock's registry on this machine or a local network is refused: only the user names those."""
    from ..client.locations import check_lock_registry
    from ..client.registry import Registry

    explicit = open_registry(location) if location else None
    opened: dict[str, Registry] = {}

    def registry_for(url: str) -> Registry:
        if explicit is not None:
            return explicit
        if url not in opened:
            opened[url] = Registry(check_lock_registry(url), warn=_warn, public_only=True)
        return opened[url]

    return registry_for


def display_path(path: Path) -> str:
    from ..core.loader import display_path as shown

    return shown(path)


def _short(digest: str) -> str:
    return visible(short_digest(digest))


def _count(value: object) -> str:
    """A size from a registry document: thousands separators when it is a number, shown safely when not."""
    return f"{value:,}" if isinstance(value, int) else visible(value)


def _lock(global_: bool) -> Lock:
    from ..client.lock import read_lock

    return read_lock(Path.cwd(), global_=global_)


def _waiting(message: str) -> None:
    click.echo(f"{message[0].upper()}{message[1:]} ...", err=True)


def _changing(global_: bool) -> AbstractContextManager[Lock]:
    """The lock, held for the whole command: concurrent commands take turns and never lose each other's entries."""
    from ..client.lock import locked

    return locked(Path.cwd(), global_=global_, waiting=_waiting)


# -- search and info ------------------------------------------------------------------------------------------

@click.command(short_help="Find skills, ranked as the website ranks.")
@click.argument("words", nargs=-1, required=True, metavar="QUERY...")
@click.option("--category", help="Only skills in this category (a slug).")
@click.option("--tag", help="Only skills with this tag.")
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True, help="At most this many results.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@registry_option
def search(words: tuple[str, ...], category: str | None, tag: str | None, limit: int, as_json: bool,
           location: str | None) -> None:
    """Find skills by name, description, category, tags and headings, ranked as the website ranks them.

    Several words are one query, as in the website's search box: a skill must match every word.
    """
    from ..client.search import search_with_total

    query = " ".join(words)
    registry = _pinned_registry(location)
    index = registry.search()
    hits, total = search_with_total(index, query, category=category, tag=tag, limit=limit)
    if as_json:
        skills = [{"name": h.row.name, "description": h.row.description, "category": h.row.category or None,
                   "tags": list(h.row.tags), "score": h.score} for h in hits]
        click.echo(visible_json(json.dumps({"query": query, "count": len(skills), "total": total, "skills": skills},
                                           indent=2, ensure_ascii=False)))
        return
    if not hits:
        click.echo(f"No skills match {visible(repr(query))}.")
        return
    width = max(len(visible(h.name)) for h in hits)
    for hit in hits:
        labels = " · ".join(x for x in (str(hit.row.category or ""), ", ".join(map(str, hit.row.tags))) if x)
        click.echo(f"{visible(hit.name).ljust(width)}  {visible(labels)}")
        click.echo("  " + textwrap.shorten(visible(hit.row.description), 110, placeholder=" …"))
    if total > len(hits):
        more = (f"; --limit {total} shows them all" if total <= 50 else
                "; --limit 50 shows more" if limit < 50 else "; more words, --category or --tag narrow it")
        click.echo(f"{len(hits)} of {total:,} matches shown{more}")


@click.command(short_help="Show one skill: files, permissions, digest.")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the registry's detail document as JSON.")
@click.option("--versions", "versions", is_flag=True,
              help="List every published version (newest first): version, date, digest, status and reason.")
@registry_option
def info(name: str, as_json: bool, versions: bool, location: str | None) -> None:
    """Show one skill: description, files, permissions summary, provenance and digest."""
    registry = _pinned_registry(location)
    if versions:
        _print_versions(registry, name, as_json)
        return
    detail = registry.detail(name)
    if as_json:
        click.echo(visible_json(json.dumps(detail, indent=2, sort_keys=True, ensure_ascii=False)))
        return
    click.echo(visible(f"{detail['name']} {detail.get('version') or ''}".rstrip()))
    click.echo(textwrap.fill(visible(detail.get("description", "")), 100))
    click.echo()
    from ..core.urls import declared_author

    rows = [("category", detail.get("category") or "-"), ("tags", ", ".join(map(str, detail.get("tags") or [])) or "-"),
            ("license", detail.get("license") or "-"),
            ("author", declared_author(detail.get("frontmatter") or {}) or "- (no metadata.author)"),
            ("digest", detail["digest"])]
    for label, value in rows:
        click.echo(f"{label + ':':<13}{visible(value)}")
    files = [f for f in detail.get("files", []) if isinstance(f, dict)]
    click.echo(f"{'files:':<13}{len(files)} ({_count(detail.get('size', 0))} bytes)")
    width = max((len(visible(f.get('path'))) for f in files), default=0)
    for f in files:
        mark = "  executable" if f.get("executable") else ""
        click.echo(f"  {visible(f.get('path')).ljust(width)}  {_count(f.get('size', 0)):>9}{mark}")
    perms = detail.get("permissions") or {}
    click.echo("permissions:")
    for label, key, none in (("scripts", "scripts", "none"), ("allowed tools", "allowed_tools", "not declared"),
                             ("network", "network", "none spotted"), ("runs programs", "shell", "none spotted")):
        click.echo(f"  {label + ':':<16}{visible(', '.join(map(str, perms.get(key) or [])) or none)}")
    prov = detail.get("provenance") or {}
    click.echo("provenance:")
    for label, value in (("created", prov.get("created")), ("updated", prov.get("updated")),
                         ("contributors", ", ".join(map(str, prov.get("authors") or []))),
                         ("commit", prov.get("commit")), ("source", prov.get("source_url") or prov.get("source_path"))):
        click.echo(f"  {label + ':':<16}{visible(value or '-')}")
    click.echo(f"install with: skillreg install {visible(detail['name'])}")


def _print_versions(registry: Registry, name: str, as_json: bool) -> None:
    from ..client.versions import read_history
    from ..core.errors import ClientError
    from ..core.urls import versions_path

    history = read_history(registry, name)
    if history is None:
        registry.detail(name)  # says so when the registry does not publish the skill at all
        raise ClientError(f"{registry.url}{versions_path(name)}: the registry publishes no version history for "
                          f"{name} (it was built before version history); `skillreg info {name}` shows its one version")
    if as_json:
        click.echo(visible_json(json.dumps(history.document, indent=2, sort_keys=True, ensure_ascii=False)))
        return
    rows = [(v.version or "-", (v.time or "-")[:10], f"{short_digest(v.digest)}…",
             v.status + (" (install NAME takes this)" if v.digest == history.latest else ""),
             v.reason or "") for v in history.versions]
    if not rows:
        click.echo(f"{name}: no published versions.")
        return
    header = ("VERSION", "DATE", "DIGEST", "STATUS", "REASON")
    shown = [tuple(visible(cell) for cell in row) for row in [header, *rows]]
    widths = [max(len(row[i]) for row in shown) for i in range(4)]
    for row in shown:
        click.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + f"  {row[4]}".rstrip())
    if history.latest is None:
        click.echo(f"{name} is no longer in the registry; install a version with {name}@DIGEST")


# -- install, update, remove -----------------------------------------------------------------------------------

def _split(spec: str) -> tuple[str, str | None]:
    name, _, digest = spec.partition("@")
    return name, digest or None


def _label(version: str | None, digest: str) -> str:
    """``1.0.0 (sha256:56fb92b7e099…)``, or the short digest alone for a skill without a version."""
    return f"{visible(version)} ({_short(digest)}…)" if version else f"{_short(digest)}…"


def _print_changes(changes: Sequence[Change]) -> None:
    for change in changes:
        name = visible(change.name)  # a lock's key, which another tool may have written
        where = visible(", ".join(change.targets))
        version = visible(f" {change.version}") if change.version else ""
        if change.action == "unchanged":
            click.echo(f"{name}{version} is already installed in {where}")
        elif change.action in ("updated", "would update"):
            verb = "Updated" if change.action == "updated" else "Would update"
            click.echo(f"{verb} {name} {_label(change.previous_version, change.previous or '')} -> "
                       f"{_label(change.version, change.digest)} in {where}")
        elif change.digest:
            click.echo(f"{change.action.capitalize()} {name}{version} ({_short(change.digest)}…) into {where}")
        else:
            click.echo(f"{change.action.capitalize()} {name}{version} into {where}")


def _print_recorded(before: Lock, after: Lock) -> None:
    """Say the lock was written only when it was: a restore, --frozen and an install of what is locked leave it."""
    if after.dumps() != before.dumps():
        click.echo(f"Recorded in {display_path(after.path)}")


def _print_unpublished(changes: Sequence[Change]) -> None:
    """Locked skills a restore could not fetch: the registry no longer publishes their locked digest."""
    for change in changes:
        why = (f"the registry no longer publishes it (locked {_short(change.digest)}…: it has neither the skill "
               "nor a version history for it)")
        if change.targets:
            click.echo(f"Cannot restore {visible(change.name)} into {visible(', '.join(change.targets))}: {why}",
                       err=True)
        else:
            click.echo(f"{visible(change.name)}: {why}; its folders match the lock, left as installed")


@click.command(short_help="Download, verify and install skills.")
@click.argument("specs", nargs=-1, metavar="[NAME[@DIGEST|@VERSION]|COLLECTION/]...")
@click.option("--agent", "agents", multiple=True, metavar="AGENT",
              help="Install into this agent's skill folder (repeatable): claude (default), codex, gemini, copilot, "
                   "cursor, opencode, agents.")
@click.option("--dir", "dirs", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="Install into this skills folder instead (the skill goes into DIR/NAME; repeatable). A restore "
                   "writes into a locked folder outside the agents' folders only when it is given here.")
@global_option
@click.option("--force", is_flag=True, help="Replace local changes and folders the lock does not know.")
@click.option("--frozen", is_flag=True, help="Fail instead of changing skills-lock.json when it and the registry "
                                              "disagree.")
@registry_option
def install(specs: tuple[str, ...], agents: tuple[str, ...], dirs: tuple[Path, ...], global_: bool, force: bool,
            frozen: bool, location: str | None) -> None:
    """Download, verify and install skills; with no NAME, restore everything in skills-lock.json.

    NAME takes the newest version that is not yanked; NAME@DIGEST (sha256:... or 12+ hex digits) and
    NAME@VERSION (metadata.version) any published one. COLLECTION/ installs every skill of a plugin or category,
    COLLECTION/NAME one of them, by slug or by the skill's own name. A restore writes exactly the locked
    digests, from the registry's version history if need be, and never moves the lock.

    The bundle must match the published sha256 and the files the published digest before anything is
    written; the new folder is swapped in with one rename. Nothing from the skill is run. Skills go only into
    the agents' skill folders and the --dir given; never inside .git, a virtual environment or site-packages.
    """
    from ..client import project
    from ..client.agents import agent_table
    from ..client.collections import expand
    from ..core.errors import UsageError

    typed = [_typed(d) for d in dirs]
    if not specs:
        if agents:
            raise UsageError("--agent chooses where new skills go; a restore uses the folders in the lock")
        with _changing(global_) as before:
            if not before.entries and not before.foreign:
                raise UsageError(f"nothing to restore: {display_path(before.path)} lists no skills; "
                                 "name the skills to install")
            lock, changes = project.restore(before, _registry_for(location), typed=typed, force=force, frozen=frozen)
        _print_changes([c for c in changes if c.action not in ("not published", "left alone")])
        _print_recorded(before, lock)
        _print_unpublished([c for c in changes if c.action == "not published"])
        for change in changes:
            if change.action == "left alone":
                click.echo(visible(change.note))
        return
    if agents and dirs:
        raise UsageError("give --agent or --dir, not both")
    if typed:
        folders = typed
    else:
        table = agent_table()
        folders = [table.get(a).folder(global_=global_, project_root=Path.cwd()) for a in (agents or (None,))]
    registry = open_registry(location)
    wanted = expand(registry, [_split(s) for s in specs])
    with _changing(global_) as before:
        lock, changes = project.install(before, registry, wanted, folders, typed=typed, force=force, frozen=frozen)
    _print_changes(changes)
    _print_recorded(before, lock)


@click.command(short_help="Install newer published versions of skills.")
@click.argument("names", nargs=-1)
@click.option("--dry-run", is_flag=True, help="Print what would change, file by file, as a unified diff.")
@click.option("--force", is_flag=True, help="Update even skills whose installed files were changed locally.")
@dir_option
@global_option
@registry_option
def update(names: tuple[str, ...], dry_run: bool, force: bool, dirs: tuple[Path, ...], global_: bool,
           location: str | None) -> None:
    """Install the newest published version of installed skills (all, or NAMES): a new digest is an update."""
    from ..client import project

    with _changing(global_) as before:
        if not before.entries:
            others = (f" installed by skillreg (the {len(before.foreign)} it lists were installed by another tool: "
                      "update them with it)") if before.foreign else ""
            click.echo(f"Nothing to update: {display_path(before.path)} lists no skills{others}.")
            return
        lock, changes = project.update(before, list(names), _registry_for(location),
                                       typed=[_typed(d) for d in dirs], dry_run=dry_run, force=force)
    for change in changes:
        if change.action == "unchanged":
            shown = visible(change.version) if change.version else _short(change.digest) + "…"
            click.echo(f"{visible(change.name)} is up to date ({shown})")
        elif change.action == "not published":
            click.echo(f"{visible(change.name)}: the registry no longer publishes it; left as installed")
        else:
            _print_changes([change])  # one "Recorded" line after all of them
            if dry_run:
                click.echo(visible(change.diff, multiline=True), nl=False)
    _print_recorded(before, lock)


@click.command(short_help="Delete installed skills and lock entries.")
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@click.option("--force", is_flag=True, help="Remove even if installed files were changed locally.")
@dir_option
@global_option
def remove(names: tuple[str, ...], force: bool, dirs: tuple[Path, ...], global_: bool) -> None:
    """Delete installed skills from every folder they were installed in, and from the lock.

    Every NAME is checked first: when one is not installed, or was changed locally (without --force), nothing
    is removed.
    """
    from ..client import project

    with _changing(global_) as lock:
        lock, changes = project.remove(lock, list(dict.fromkeys(names)), typed=[_typed(d) for d in dirs],
                                       force=force)
    for change in changes:
        click.echo(f"Removed {change.name} from {visible(', '.join(change.targets))}")


@click.command(name="list", short_help="Show the skills in skills-lock.json.")
@click.option("--json", "as_json", is_flag=True, help="Print the lock's entries as JSON.")
@global_option
def list_(as_json: bool, global_: bool) -> None:
    """Show the skills recorded in skills-lock.json: version, digest and folders; skills another tool (such as
    vercel's skills CLI) recorded are listed as installed by it."""
    lock = _lock(global_)
    entries = [lock.entries[n] for n in sorted(lock.entries)]
    others = [lock.foreign[n] for n in sorted(lock.foreign)]
    if as_json:
        theirs = [{"name": e.name, "installed_by": "another tool", "entry": dict(e.raw)} for e in others]
        click.echo(visible_json(json.dumps({"lock": str(lock.path), "skills": [e.to_dict() for e in entries],
                                            "other_tools": theirs}, indent=2, sort_keys=True, ensure_ascii=False)))
        return
    if not entries and not others:
        click.echo(f"No skills installed ({display_path(lock.path)} lists none).")
        return
    width = max(len(visible(name)) for name in [*lock.entries, *lock.foreign])
    vwidth = max((len(visible(e.version or "-")) for e in entries), default=1)
    for e in entries:
        click.echo(f"{visible(e.name).ljust(width)}  {visible(e.version or '-').ljust(vwidth)}  {_short(e.digest)}…  "
                   f"{visible(', '.join(e.targets))}")
    for other in others:
        source = other.text("sourceUrl") or other.text("source") or "no source"
        click.echo(f"{visible(other.name).ljust(width)}  installed by another tool ({visible(other.source_type)}: "
                   f"{visible(source)})")


@click.command(short_help="Check installed files against the lock.")
@click.argument("names", nargs=-1)
@global_option
def verify(names: tuple[str, ...], global_: bool) -> None:
    """Check installed files against skills-lock.json: report files changed, added or missing locally.

    A skill another tool recorded is checked through its computedHash, in every agent's folder that holds it.
    Each root the lock pins for a signed registry is checked against this machine's trust store.

    Exit 0 when every folder and pinned root matches, 1 otherwise. Reads only local files.
    """
    from ..client import project
    from ..client.pins import check_pins

    lock = _lock(global_)
    results = project.verify(lock, list(names))
    others = project.verify_foreign(lock, list(names))
    pins = check_pins(lock)
    if not results and not others:
        click.echo(f"Nothing to verify: {display_path(lock.path)} lists no skills.")
        return
    bad = 0
    width = max(len(visible(name)) for name in [*(r.name for r in results), *(o.name for o in others)])
    for r in results:
        status = "ok" if r.state.clean else "missing" if r.state.absent else "modified"
        click.echo(f"{status:<10}{visible(r.name).ljust(width)}  {visible(r.target)}")
        if r.state.clean:
            continue
        bad += 1
        for label, paths in (("changed", r.state.changed), ("added", r.state.added), ("missing", r.state.missing)):
            for path in paths:
                click.echo(f"    {label}: {visible(path)}")
    for other in others:
        where = visible(other.target or "-")
        why = f": {visible(other.why)}" if other.why else ""
        click.echo(f"{other.status:<10}{visible(other.name).ljust(width)}  {where}  (another tool's entry, "
                   f"checked by computedHash{why})")
        bad += other.status in ("modified", "missing")
    for problem in pins:
        click.echo(f"Pinned root: {visible(problem)}")
    total = len(results) + len(others)
    if bad:
        click.echo(f"{bad} of {total} installed folder(s) differ from {lock.path.name}")
        flag = " --global" if global_ else ""
        if any(not r.state.clean and not r.state.absent for r in results):
            click.echo(f"`skillreg install --force{flag}` restores the locked files, discarding the local changes "
                       "above")
        elif any(r.state.absent for r in results):
            click.echo(f"`skillreg install{flag}` restores the missing folders")
    elif pins:
        click.echo(f"All {total} installed folder(s) match {lock.path.name}; {len(pins)} pinned root(s) disagree "
                   "(above)")
    if bad or pins:
        raise click.exceptions.Exit(EXIT_FAILURE)
    click.echo(f"All {total} installed folder(s) match {lock.path.name}")


@click.command(short_help="Serve the registry to an agent over MCP.")
@registry_option
@click.option("--http", "http", metavar="[HOST:]PORT", default=None,
              help="Serve over streamable HTTP at /mcp on this port (host 127.0.0.1 unless given) instead of stdio.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="HOST[:PORT]",
              help="A Host header HTTP requests may carry besides the loopback names; required for a host that "
                   "is not loopback. Repeatable.")
@click.option("--allowed-origin", "allowed_origins", multiple=True, metavar="ORIGIN",
              help="A browser Origin HTTP requests may carry (e.g. https://app.example). Repeatable.")
@click.option("--allow-install", is_flag=True, help="Offer install_skill over HTTP too (stdio always offers it).")
def mcp(location: str | None, http: str | None, allowed_hosts: tuple[str, ...], allowed_origins: tuple[str, ...],
        allow_install: bool) -> None:
    """Serve search_skills, get_skill and install_skill, and every published skill under the MCP Skills extension
    (skills/list, skills/get, skill:// resources), to an agent over MCP: stdio, or streamable HTTP with --http."""
    from ..client.mcp_server import serve

    if http is None and (allowed_hosts or allowed_origins or allow_install):
        from ..core.errors import UsageError

        raise UsageError("--allowed-host, --allowed-origin and --allow-install go with --http")
    serve(location or default_location(), http, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins,
          allow_install=allow_install)


COMMANDS = [search, info, install, update, remove, list_, verify, mcp]
