"""The ``skillreg`` command line: parse options, call one core function, show the result, pick the exit code."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from . import __version__
from .config import PROFILES, RegistryConfig, load_config
from .errors import SkillRegError

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the project's errors into one line on stderr and their exit code, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except SkillRegError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)

    return wrapper


class Context:
    """What every command may need: the registry's configuration, read once on first use."""

    def __init__(self, config_path: Path | None) -> None:
        self.config_path = config_path

    @functools.cached_property
    def config(self) -> RegistryConfig:
        return load_config(self.config_path)


pass_context = click.make_pass_decorator(Context)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillreg")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              envvar="SKILLREG_CONFIG", help="registry.yaml to use (default: the nearest one above the current folder).")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None) -> None:
    """Validate, build and publish a registry of Agent Skills, and install skills from one."""
    ctx.obj = Context(config_path)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text", show_default=True,
              help="text for people, json for tools, github for workflow annotations and a job summary.")
@click.option("--profile", type=click.Choice(PROFILES), default=None,
              help="Which fields are allowed (default: `profile` in registry.yaml).")
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@pass_context
@handle_errors
def validate(obj: Context, paths: tuple[Path, ...], fmt: str, profile: str | None, strict: bool) -> None:
    """Check skill folders and report every problem with its file, line and rule code.

    PATHS are skill folders or folders of skills (default: the registry's skills/).
    Exit 0 when clean, 1 on errors (or warnings with --strict), 2 on usage errors.
    """
    from .report import format_github, format_json, format_text, summary_markdown
    from .validate import validate_paths

    config = obj.config
    profile = profile or config.profile
    report = validate_paths(list(paths) or [config.skills_path], config, profile)
    if fmt == "json":
        click.echo(format_json(report, profile), nl=False)
    elif fmt == "github":
        click.echo(format_github(report), nl=False)
        summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary_file:
            with open(summary_file, "a", encoding="utf-8") as fh:
                fh.write(summary_markdown(report.diagnostics, report.summary()))
    else:
        click.echo(format_text(report), nl=False)
    sys.exit(EXIT_FAIL if report.failed(strict) else EXIT_OK)


@cli.command()
@click.argument("name")
@click.option("--description", help="What the skill does and when to use it.")
@click.option("--category", help="A category slug from registry.yaml.")
@pass_context
@handle_errors
def new(obj: Context, name: str, description: str | None, category: str | None) -> None:
    """Create skills/NAME/ with a SKILL.md to fill in."""
    from .scaffold import new_skill

    folder = new_skill(obj.config, name, description, category)
    click.echo(f"Created {folder}/SKILL.md")
    click.echo(f"Edit it, then run: skillreg validate {folder}")


def main() -> None:
    cli(prog_name="skillreg")


if __name__ == "__main__":
    main()
