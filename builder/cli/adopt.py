"""``skillreg init``: make the git repository of skills in the current folder a registry."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.words import counted

KINDS_SHOWN = 6  # kinds of layout listed one a line; the rest are summed on one

if TYPE_CHECKING:
    from ..ops.init import InitPlan, InitResult
    from ..ops.registry_file import Settings


@click.command(short_help="Make this git repository a registry.")
@click.option("--force", is_flag=True,
              help="Replace registry.yaml, the workflows and the baseline when they exist already.")
@click.option("--action-ref", metavar="COMMIT",
              help="The commit of skill-registry whose action the workflows pin (default: the commit the running "
                   "skillreg comes from, when known).")
@click.option("-y", "--yes", is_flag=True,
              help="Ask nothing and take what was found (what happens anyway when standard input is not a terminal).")
def init(force: bool, action_ref: str | None, yes: bool) -> None:
    """Write registry.yaml, a pull-request and a Pages workflow, and a baseline of today's findings for the skills
    in this git repository.

    Skills are found where agents find them; nothing is moved. The title and description come from the README,
    the addresses from the `origin` remote. No file is replaced without --force, and the only tracked file that
    changes is .gitignore (the build's output folder appended).
    """
    from ..ops.init import default_settings, found_skills, plan_init, record_findings, refuse_existing, write_init
    from ..ops.origin import read_repository
    from ..ops.workflows import PAGES_WORKFLOW, VALIDATE_WORKFLOW
    from ..validate.baseline import BASELINE_NAME

    repo = read_repository(Path.cwd())
    targets = ["registry.yaml", VALIDATE_WORKFLOW, PAGES_WORKFLOW, BASELINE_NAME]
    if not force:
        refuse_existing(repo.root, targets)  # before the search: a second run stops at once
    found = found_skills(repo)
    settings = default_settings(repo, found)
    if not yes and sys.stdin.isatty():
        settings = _ask(settings)
    plan = plan_init(repo, settings, found, action_ref=action_ref, baseline_path=BASELINE_NAME,
                     make_baseline=record_findings)
    result = write_init(plan, force=force)
    _report(plan, result)


def _ask(settings: Settings) -> Settings:
    """The values found, offered as defaults: the title, the description and, without a GitHub remote, the
    address the site is served from."""
    from dataclasses import replace

    title = click.prompt("Title", default=settings.title)
    description = click.prompt("Description", default=settings.description or "", show_default=bool(
        settings.description))
    base_url = settings.base_url
    if not base_url:
        base_url = click.prompt("Public address of the site (empty: set it later)", default="", show_default=False)
    return replace(settings, title=title.strip(), description=description.strip(), base_url=base_url.strip())


def _report(plan: InitPlan, result: InitResult) -> None:
    from ..ops.registry_file import BUILD_OUTPUT

    layout, settings = plan.layout, plan.settings
    click.echo(f"Found {layout.summary()}:")
    for kind, folders, skills in layout.kinds[:KINDS_SHOWN]:
        click.echo(f"  {kind}: {counted(skills, 'skill')} in {counted(folders, 'folder')}")
    rest = layout.kinds[KINDS_SHOWN:]
    if rest:
        click.echo(f"  other folders: {counted(sum(k[2] for k in rest), 'skill')} in "
                   f"{counted(sum(k[1] for k in rest), 'folder')}")
    for refusal in plan.found.refused:
        click.echo(f"  skipped {refusal}")
    where = f"skills: {', '.join(settings.locations)}" if settings.locations else "skills: found where agents look"
    click.echo(f"Wrote registry.yaml: title {settings.title!r}, base_url {settings.base_url or '(empty: set it)'}, "
               f"profile agents, {where}")
    flows = [p for p in result.written if p.startswith(".github/")]
    click.echo(f"Wrote {' and '.join(flows)}, calling {plan.workflows.action}")
    if plan.baseline is not None:
        held = (f"{counted(plan.baseline.findings, 'known finding')} in {counted(plan.baseline.skills, 'skill')}, "
                "shown on their pages" if plan.baseline.findings else "no known findings")
        click.echo(f"Wrote {plan.baseline.path}: {held}; new and changed skills must meet the standard")
        if plan.baseline.unheld:
            rules = ", ".join(f"{code} in {counted(count, 'skill')}" for code, count in plan.baseline.unheld.items())
            click.echo(f"Not held: errors of safety rules, which no baseline holds ({rules}); `skillreg "
                       "build` stops on them until they are fixed (--keep-going leaves those skills out)")
    if result.replaced:
        click.echo(f"Replaced (--force): {', '.join(result.replaced)}")
    if result.ignored:
        click.echo(f"Appended {', '.join(result.ignored)} to .gitignore")
    if not plan.pinned:
        click.echo("Warning: the workflows are not pinned: replace SET-TO-A-COMMIT-OF-skill-registry in them with a "
                   "commit of skill-registry, or run init again with --force --action-ref COMMIT", err=True)
    added = " ".join(["registry.yaml", ".github/workflows", *([plan.baseline.path] if plan.baseline else []),
                      *([".gitignore"] if result.ignored else [])])
    click.echo("Next:")
    click.echo(f"  skillreg build      # the website and API into {BUILD_OUTPUT}/; `skillreg serve` shows them")
    click.echo(f"  git add {added} && git commit -m \"Publish the skills as a registry\"")
    click.echo(f"  on GitHub: Settings > Pages > Source: GitHub Actions, then push {plan.repository.branch}")
