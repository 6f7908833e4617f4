"""``skillreg baseline``: write the registry's baseline of today's findings, or prune the fixed ones from it."""

from __future__ import annotations

import click

from ..core.config import merge_flags
from ..core.loader import display_path
from ..core.words import counted
from .context import Context, pass_context
from .registry import PROFILE_CHOICES


@click.command(short_help="Write the baseline of today's findings.")
@click.option("--prune", is_flag=True,
              help="Only remove what is fixed (or whose skill is gone); never add a finding.")
@click.option("--profile", type=click.Choice(PROFILE_CHOICES), default=None,
              help="Validation profile (default: registry.yaml).")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core for many skills).")
@pass_context
def baseline(obj: Context, prune: bool, profile: str | None, jobs: int | None) -> None:
    """Validate every skill and write .skillreg-baseline.json beside registry.yaml: each rule, skill folder,
    file and count found today, so that `validate` fails only on new findings.

    A finding of a safety rule is never written; it keeps failing until it is fixed. A pull request may prune
    the baseline, never grow it: `validate --changed-since` refuses one that holds more than its base branch's.
    """
    from ..validate.baseline import write_baseline

    config = merge_flags(obj.registry("baseline"), profile=profile)
    done = write_baseline(config, prune=prune, jobs=jobs)
    verb = "Pruned" if prune else "Wrote"
    change = f"{counted(done.removed, 'fixed finding')} removed" if prune else \
        f"{done.added:,} added, {done.removed:,} removed"
    click.echo(f"{verb} {display_path(done.path)}: {counted(done.findings, 'known finding')} in "
               f"{counted(done.skills, 'skill')} of {done.checked:,} ({change})")
    if done.unheld:
        rules = ", ".join(f"{code} ×{count:,}" for code, count in done.unheld.items())
        click.echo(f"Not held: {counted(sum(done.unheld.values()), 'error')} of safety rules ({rules}), which no "
                   f"baseline holds; `skillreg validate` fails until they are fixed")
