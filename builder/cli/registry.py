"""The registry-side commands of ``skillreg``: validate, new, build, serve, export, import, prompt, marketplace,
rules, check-deploy and upload.

Each command parses its options, calls one core function, shows the result and returns; errors are raised and
become one line on stderr in the group's handler (``app``), which also picks the exit code.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..core.config import CONFIG_NAME, PROFILE_ALIASES, PROFILES, merge_flags
from ..core.errors import EXIT_FAILURE, SkillRegError, UsageError, cannot_listen
from ..core.git import work_tree_differs
from ..core.model import Skill
from ..core.words import counted
from .context import Context, pass_context

if TYPE_CHECKING:
    from ..publish.current import Current

PROFILE_CHOICES = (*PROFILES, *PROFILE_ALIASES)


@click.command(short_help="Check skills; report every problem.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text", show_default=True,
              help="text for people, json for tools, github for workflow annotations and a job summary.")
@click.option("--profile", type=click.Choice(PROFILE_CHOICES), default=None,
              help="Which fields are allowed (default: `profile` in registry.yaml; `lenient` is `agents`' old name).")
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@click.option("--changed-since", metavar="REF",
              help="Only the skills git shows changed since REF's merge base (commits, edits and untracked files), "
                   "plus the registry-wide rules over every skill; a baseline that grew since REF fails.")
@click.option("-v", "--verbose", is_flag=True,
              help="Show every finding: each repeat of a rule, and those the baseline holds.")
@pass_context
def validate(obj: Context, paths: tuple[Path, ...], fmt: str, profile: str | None, strict: bool,
             changed_since: str | None, verbose: bool) -> None:
    """Check skill folders and report every problem with its file, line and rule code.

    PATHS are skill folders or folders of skills (default: every skill the registry holds, found where
    registry.yaml's `skills` says or, without it, where agents look). With a baseline (.skillreg-baseline.json
    beside registry.yaml), the findings it holds fail nothing, and a finding of the open standard it does not
    hold is an error. Exit 0 when clean, 1 on errors (or warnings with --strict), 2 on usage errors.
    """
    from ..validate.baseline import baseline_check
    from ..validate.report import Findings, iter_github, iter_json, iter_text, summary_head, summary_line
    from ..validate.run import ValidationRun

    config = merge_flags(obj.config, profile=profile)
    changes = None
    findings: Findings
    if changed_since is not None:
        from ..validate.changes import changes_markdown, format_changes_text
        from ..validate.ratchet import validate_pull_request

        if paths:
            raise UsageError("--changed-since finds the skills itself; give it no PATHS")
        changes = validate_pull_request(config, changed_since)
        findings = changes.report
    else:  # streamed: findings are written while later skills are still being checked
        from ..core.discovery import NoSkillFound

        try:
            findings = ValidationRun(list(paths), config, baseline=baseline_check(config))
        except NoSkillFound as exc:
            if config.path is not None:
                raise
            raise UsageError(f"no {CONFIG_NAME} in {Path.cwd()} or a parent folder, and no skill here (looked in "
                             f"{exc.discovery.where()}); name the skill folders to check (`skillreg validate PATH "
                             f"...`), or run it in a registry's checkout or with --config FILE") from None
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY") if fmt == "github" else None
    # The job summary's table waits in a temporary file until the closing counts that head it are known.
    with tempfile.TemporaryFile("w+", encoding="utf-8") if summary_file else contextlib.nullcontext() as rows:
        if fmt == "json":
            pieces = iter_json(findings, config.profile, {"changed_since": changes.to_dict()} if changes else None)
        else:
            click.echo(format_changes_text(changes) if changes else "", nl=False)
            pieces = iter_github(findings, rows, verbose=verbose) if fmt == "github" else \
                iter_text(findings, verbose=verbose)
        for chunk in _batched(pieces):
            click.echo(chunk, nl=False)
        if summary_file and rows is not None:
            has_rows = rows.tell() > 0
            rows.seek(0)
            try:
                with open(summary_file, "a", encoding="utf-8") as fh:
                    fh.write((changes_markdown(changes) if changes else "") +
                             summary_head(summary_line(findings.tally), has_rows))
                    shutil.copyfileobj(rows, fh)
                    fh.write("\n" if has_rows else "")
            except OSError as exc:
                raise SkillRegError(f"GITHUB_STEP_SUMMARY={summary_file}: cannot append ({exc.strerror})") from None
    if findings.tally.failed(strict):
        raise click.exceptions.Exit(EXIT_FAILURE)


def _batched(pieces: Iterable[str], size: int = 1 << 16) -> Iterator[str]:
    """Join small output pieces into chunks of about ``size`` characters: one write each, not one per line."""
    buffer: list[str] = []
    length = 0
    for piece in pieces:
        buffer.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(buffer)
            buffer, length = [], 0
    if buffer:
        yield "".join(buffer)


@click.command(short_help="Create a skill folder NAME with a SKILL.md.")
@click.argument("name")
@click.option("--description", help="What the skill does and when to use it.")
@click.option("--category", help="A category slug from registry.yaml.")
@pass_context
def new(obj: Context, name: str, description: str | None, category: str | None) -> None:
    """Create NAME/ with a SKILL.md to fill in, in the registry's skills folder (the first `skills` location of
    registry.yaml; without one, the folder holding the most skills, else skills/)."""
    from ..core.discovery import skills_home
    from ..ops.scaffold import new_skill

    config = obj.registry("new")
    home = skills_home(config)
    folder = new_skill(config, name, description, category, skills_path=home, on_wait=_say_waiting_for_writer(home))
    click.echo(f"Created {folder}/SKILL.md")
    click.echo(f"Edit it, then run: skillreg validate {folder}")


def _say_waiting_for(what: str, holder: int | None = None) -> None:
    """The notice a command prints when another one holds the lock it needs (after about a second)."""
    who = f" (process {holder})" if holder else ""
    click.echo(f"Waiting for {what} to finish{who}...", err=True)


def _say_waiting_for_writer(skills: Path) -> Callable[[], None]:
    return lambda: _say_waiting_for(f"another `skillreg new` or `import` into {skills}/")


def _show_progress() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


@contextlib.contextmanager
def _progress(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for a long step, drawn once the step knows its total; None (no bar) when stderr
    is not a terminal. The callback takes (done, total) and moves the bar one item."""
    if not _show_progress():
        yield None
        return
    bar: Any = None

    def step(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
        bar.update(1)

    try:
        yield step
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


def _say_waiting(out: Path, holder: int | None) -> None:
    _say_waiting_for(f"another build of {out}/", holder)


@click.command(short_help="Validate, then write site, API and bundles.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("site"), show_default=True,
              help="Output folder; replaced as a whole when the build succeeds.")
@click.option("--base-url", help="Public URL the output is served from (default: `base_url` in registry.yaml).")
@click.option("--jobs", type=click.IntRange(min=1),
              help="Worker processes (default: one per core for large registries).")
@click.option("--keep-going", is_flag=True, help="Leave invalid skills out and list them instead of stopping.")
@click.option("--profile", type=click.Choice(PROFILE_CHOICES), default=None,
              help="Validation profile (default: registry.yaml).")
@click.option("--site/--no-site", default=True, show_default=True, help="Also write the website.")
@click.option("-v", "--verbose", is_flag=True,
              help="Show every finding and every skill left out; say which skills were written and which reused.")
@click.option("--no-wait", is_flag=True,
              help="If another build of --out is running, exit 1 at once instead of waiting.")
@click.option("--bundle-cache", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of old versions' zips to reuse, each checked against git's blob ids; never inside the "
                   "repository or --out (default: $SKILLREG_BUNDLE_CACHE, else one kept with the output's state).")
@click.option("--sign", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="KEYS",
              help="Sign the output with TUF, with the online keys in KEYS (made by `skillreg trust init`).")
@pass_context
def build(obj: Context, out: Path, base_url: str | None, jobs: int | None, keep_going: bool, profile: str | None,
          site: bool, verbose: bool, no_wait: bool, bundle_cache: Path | None, sign: Path | None) -> None:
    """Validate every skill, then write the website, JSON API, bundles and discovery indexes to --out.

    Any validation error stops the build before anything is written (exit 1).
    """
    from ..publish.current import build_key, read_current, shown

    config = merge_flags(obj.registry("build"), profile=profile, base_url=base_url)
    key = build_key(config, out, site=site, keep_going=keep_going)
    current = read_current(out, key) if key is not None and sign is None and not verbose else None
    if current is not None:
        _say_current(out, current, key is not None and key.differs)
        return
    from ..publish.build import BuildFailed, BuildOptions
    from ..publish.build import build as run_build
    from ..validate.report import format_text, outcome_lines

    try:
        with _progress("Building") as progress:
            result = run_build(config, out, BuildOptions(
                jobs=jobs, keep_going=keep_going, site=site, on_progress=progress, wait=not no_wait,
                on_wait=functools.partial(_say_waiting, out), bundle_cache=bundle_cache, sign=sign, key=key))
    except BuildFailed as failed:
        click.echo(format_text(failed.report, verbose=verbose), nl=False)
        raise
    if verbose:
        if result.report.diagnostics:
            click.echo(format_text(result.report, verbose=True), nl=False)
        for line in outcome_lines(result.report, result.published_paths, result.skipped, verbose=True):
            click.echo(line)
    else:  # the errors of the skills left out; the warnings are counted in the closing line and the outcome lines
        for text in result.shown if result.shown is not None else shown(result.report, result.published_paths,
                                                                             result.skipped):
            click.echo(text, nl=False)
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if result.publish_choice is not None:
        click.echo(result.publish_choice)
    if verbose:
        click.echo(f"Written: {', '.join(result.written) or '-'}")
        click.echo(f"Reused: {counted(len(result.reused), 'unchanged skill')}")
    commit = f" at commit {result.commit[:12]}" if result.commit else " (not a git repository: no provenance)"
    click.echo(f"Built {counted(len(result.published), 'skill')} into {out}/{commit} "
               f"({len(result.written)} written, {len(result.reused)} unchanged)")
    if result.commit and (key.differs if key is not None else work_tree_differs(config.root, out)):
        _say_differs(result.commit)
    if result.packed:
        click.echo(f"Packed {counted(result.packed, 'old version')} from git history; the others came from the "
                   "bundle cache")


def _say_current(out: Path, current: Current, differs: bool) -> None:
    """What ``build`` shows when nothing it reads changed since the last build: what that build showed."""
    for text in current.said:
        click.echo(text, nl=False)
    for warning in current.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if current.publish_choice is not None:
        click.echo(current.publish_choice)
    commit = f" at commit {current.commit[:12]}" if current.commit else ""
    click.echo(f"Built {counted(current.published, 'skill')} into {out}/{commit} (0 written, "
               f"{current.published} unchanged: nothing changed since the last build)")
    if current.commit and differs:
        _say_differs(current.commit)


def _say_differs(commit: str) -> None:
    click.echo(f"Note: the work tree differs from commit {commit[:12]}: the build is of the files as they are, "
               "uncommitted changes included (`git status` lists them)")


@click.command(short_help="Build, serve on 127.0.0.1, rebuild on change.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("site"), show_default=True,
              help="Output folder to build into and serve.")
@click.option("--keep-going", is_flag=True, help="Leave invalid skills out and publish the others, as build does.")
@pass_context
def serve(obj: Context, port: int, out: Path, keep_going: bool) -> None:
    """Build, serve the site on 127.0.0.1 and rebuild whenever a skill or registry.yaml changes (Ctrl-C stops).

    A build that fails leaves the previous one served; with none, the site answers 503 with the build's error."""
    from ..ops.serve import ServeEvent
    from ..ops.serve import serve as run_serve
    from ..publish.build import BuildFailed
    from ..validate.report import ErrorsOnly, format_text, outcome_lines

    def show(event: ServeEvent) -> None:
        if event.changed:
            click.echo(f"Changed: {', '.join(event.changed[:3])}{' ...' if len(event.changed) > 3 else ''}")
        if event.kind == "waiting":
            _say_waiting(out, event.holder)
        elif event.kind == "serving":
            click.echo(f"Serving {out}/ at {event.url} (Ctrl-C to stop)")
        elif event.kind == "built" and event.result is not None:
            result = event.result
            if result.skipped:
                click.echo(format_text(ErrorsOnly(result.report)), nl=False)
                for line in outcome_lines(result.report, result.published_paths, result.skipped):
                    click.echo(line)
            click.echo(f"Built {counted(len(result.published), 'skill')} into {out}/")
        elif event.kind == "failed":
            if isinstance(event.error, BuildFailed):
                click.echo(format_text(event.error.report), nl=False)
            then = "still serving the previous build" if event.kept else \
                "nothing to serve until a build succeeds (pages answer 503 with this error)"
            hint = "" if keep_going or not isinstance(event.error, BuildFailed) else \
                "; --keep-going publishes the valid skills"
            click.echo(f"Error: {event.error}; {then}{hint}", err=True)

    config = obj.registry("serve")
    try:
        run_serve(config, out, port=port, on_event=show, keep_going=keep_going)
    except KeyboardInterrupt:
        click.echo("Stopped.")
    except OSError as exc:
        raise cannot_listen("127.0.0.1", port, exc, "--port N, or --port 0 for any free port") from None


def _registry_skill(obj: Context, name: str) -> Skill:
    """Load one skill of the registry by name, or by path to its folder; refuse it when it has errors."""
    from ..core.discovery import registry_skills
    from ..validate.run import validate_folder

    folder = Path(name)
    if not (folder.is_dir() and ((folder / "SKILL.md").is_file() or (folder / "skill.md").is_file())):
        skills = registry_skills(obj.config).skills
        named = [s.folder for s in skills if s.path == name] or [s.folder for s in skills if s.name == name]
        if not named:
            raise UsageError(f"no skill named {name!r} in {obj.config.root} (by folder name or path)")
        folder = named[0]
    skill, found = validate_folder(folder, obj.config, obj.config.profile)
    errors = [d for d in found if d.severity.value == "error"]
    if errors:
        first = errors[0]
        raise SkillRegError(f"{first.file}:{first.line}: {first.code} {first.message} "
                            f"({counted(len(errors), 'error')}; run `skillreg validate {folder}`)")
    return skill


@click.command(short_help="Write one skill as a single file.")
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(["prompts-chat", "zip", "json"]), default="prompts-chat",
              show_default=True, help="prompts.chat multi-file text, a zip bundle or a JSON bundle.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout.")
@pass_context
def export(obj: Context, name: str, fmt: str, output: Path | None) -> None:
    """Write one skill as a single file: the same bytes the registry would publish."""
    from ..core.bundle import dumps, json_bundle, zip_bytes
    from ..ops.codec import serialize

    skill = _registry_skill(obj, name)
    if fmt == "zip":
        data = zip_bytes(skill.files)
    elif fmt == "json":
        data = dumps(json_bundle(skill))
    else:
        data = serialize(skill.files).encode("utf-8")
    if output is None:
        if fmt == "zip" and sys.stdout.isatty():
            raise UsageError("refusing to write a zip archive to a terminal; use -o FILE or a redirect")
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        from ..core.fs import write_atomic

        write_atomic(output, data)
        click.echo(f"Wrote {output} ({len(data):,} bytes)", err=True)


def _named(files: list[Any], name: str, max_frontmatter_bytes: int) -> list[Any]:
    """``import --name``: SKILL.md's own `name:` becomes NAME too (only that line changes), or nothing is written."""
    from ..core.frontmatter import parse_skill_md, renamed_skill_md
    from ..core.model import SkillFile

    parsed = parse_skill_md(files[0].data, "SKILL.md", max_frontmatter_bytes=max_frontmatter_bytes)
    if parsed.frontmatter is not None and parsed.frontmatter.data.get("name") == name:
        return files
    data = renamed_skill_md(files[0].data, name, max_frontmatter_bytes=max_frontmatter_bytes)
    return [SkillFile(files[0].path, data, files[0].executable), *files[1:]]


@click.command(name="import", short_help="Create a skill from a prompts.chat text.")
@click.argument("source", type=click.File("rb"))
@click.option("--name", help="Folder name for the skill (default: `name` in its SKILL.md).")
@pass_context
def import_(obj: Context, source: Any, name: str | None) -> None:
    """Create NAME/ in the registry's skills folder (as `new` does) from a prompts.chat multi-file text (FILE, or
    - for stdin), then validate it."""
    from ..core.discovery import skills_home
    from ..core.frontmatter import parse_skill_md
    from ..ops.codec import CodecError, parse
    from ..ops.scaffold import add_skill_folder, over_limits
    from ..validate.names import name_problems
    from ..validate.report import format_text
    from ..validate.run import validate_paths

    config = obj.registry("import")
    raw = source.read()
    label = getattr(source, "name", "<stdin>")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{label}: not UTF-8 text (byte offset {exc.start})") from None
    try:
        files = parse(text)
    except CodecError as exc:
        raise CodecError(f"{label}: {exc}") from None
    if name is None:
        parsed = parse_skill_md(files[0].data, "SKILL.md",
                                max_frontmatter_bytes=config.limits.max_frontmatter_bytes)
        declared = parsed.frontmatter.data.get("name") if parsed.frontmatter else None
        if not isinstance(declared, str) or not declared:
            raise UsageError(f"{label}: SKILL.md declares no usable `name`; pass --name")
        name = declared
    problems = name_problems(name)
    if problems:
        raise UsageError(problems[0])
    files = _named(files, name, config.limits.max_frontmatter_bytes)
    contents = {f.path: (f.data, f.executable) for f in files}
    over = over_limits(contents, config.limits)  # every limit before the first write
    if over:
        raise UsageError(f"{label}: {'; '.join(over)}; nothing was written")
    home = skills_home(config)
    folder = add_skill_folder(home, name, contents, on_wait=_say_waiting_for_writer(home))
    click.echo(f"Created {folder}/ with {counted(len(files), 'file')}")
    report = validate_paths([folder], config)
    click.echo(format_text(report), nl=False)
    if report.failed():
        raise click.exceptions.Exit(EXIT_FAILURE)


@click.command(short_help="Print the <available_skills> prompt block.")
@click.argument("names", nargs=-1)
@pass_context
def prompt(obj: Context, names: tuple[str, ...]) -> None:
    """Print the <available_skills> block for agent system prompts (all skills, or NAMES)."""
    from ..core.discovery import registry_skills
    from ..core.loader import load_skill
    from ..ops.prompt import to_prompt

    config = obj.registry("prompt", reads=True)
    if names:
        skills = [_registry_skill(obj, n) for n in names]
    else:
        skills = [load_skill(s.folder, config).skill for s in registry_skills(config).require().skills]
    click.echo(to_prompt(skills))


@click.command(short_help="Write or complete the marketplace files.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the committed file is out of date.")
@pass_context
def marketplace(obj: Context, check: bool) -> None:
    """Write .claude-plugin/marketplace.json, listing every skill the build publishes. A file the repository
    already has is kept as written and only completed: published skills it misses are added, skills no longer
    published dropped, each change printed. Without one, one plugin per plugin or category folder (and per
    category of registry.yaml) is generated."""
    from ..core.terminal import visible
    from ..ops.marketplaces import plan_marketplaces, write_marketplaces

    config = obj.registry("marketplace")
    plans = plan_marketplaces(config) if check else write_marketplaces(config)
    for warning in (w for plan in plans for w in plan.warnings):
        click.echo(f"warning: {visible(warning)}", err=True)
    for plan in plans if check else ():
        rel = plan.path.relative_to(config.root).as_posix()
        if plan.current is None and plan.data:
            raise SkillRegError(f"{rel} does not exist. Run `skillreg marketplace` and commit {rel}.")
        if not plan.unchanged:
            detail = f" ({'; '.join(plan.changes)})" if plan.changes else ""
            raise SkillRegError(f"{rel} is out of date{detail}. Run `skillreg marketplace` and commit {rel}.")
    for plan in (p for p in plans if p.data):  # a plan without data only carries warnings
        if check:
            click.echo(f"{plan.path.relative_to(config.root).as_posix()} is up to date")
            continue
        for change in plan.changes:
            click.echo(visible(change))
        click.echo(f"{'Unchanged:' if plan.unchanged else 'Wrote'} {plan.path}")


@click.command(short_help="List every validation rule.")
@click.option("--markdown", is_flag=True, help="The Markdown page kept in docs/rules.md.")
def rules(markdown: bool) -> None:
    """List every validation rule: code, severity and what it checks."""
    from ..validate.rulesdoc import rules_markdown, rules_text

    click.echo(rules_markdown() if markdown else rules_text(), nl=False)


@click.command(name="check-deploy", short_help="Check a deploy of --commit is live at URL.")
@click.argument("url")
@click.option("--commit", required=True, help="The commit the deploy was built from (e.g. $GITHUB_SHA).")
@click.option("--timeout", type=click.FloatRange(min=0), default=600, show_default=True,
              help="Seconds to keep trying; CDN caches may serve the old index for a while.")
@click.option("--interval", type=click.FloatRange(min=0), default=15, show_default=True,
              help="Seconds between attempts.")
def check_deploy(url: str, commit: str, timeout: float, interval: float) -> None:
    """Check that the site at URL serves api/v1/index.json built from --commit; retry until --timeout."""
    from ..client.credentials import Credentials
    from ..ops.deploy import check_deploy as run_check

    def show(attempt: int, seen: str) -> None:
        click.echo(f"attempt {attempt}: index {seen}; retrying in {interval:g}s", err=True)

    credentials = Credentials(url)  # a site that needs them gets them, as a client's install would send them
    result = run_check(url, commit, timeout=timeout, interval=interval, on_attempt=show, credentials=credentials)
    click.echo(f"{result.url} serves commit {commit} (attempt {result.attempts})")
    from ..signing.expiry import live_warnings

    for expiring in live_warnings(url, authorize=credentials.authorize):
        click.echo(f"Warning: {expiring}", err=True)


@click.command(short_help="Upload the output to S3-compatible storage.")
@click.argument("dest", metavar="s3://BUCKET/PREFIX")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("site"), show_default=True,
              help="The built output folder to upload.")
@click.option("--endpoint-url", help="An S3-compatible store's endpoint (R2, MinIO, B2, ...); default: AWS S3.")
@click.option("--region", help="The bucket's region (default: the AWS configuration's, else us-east-1).")
@click.option("--max-age", type=click.IntRange(min=0), default=60, show_default=True,
              help="Cache lifetime in seconds of files whose name stays while their content changes.")
@click.option("--jobs", type=click.IntRange(min=1), default=16, show_default=True, help="Uploads at a time.")
@click.option("--no-delete", is_flag=True, help="Keep objects below the prefix that the output no longer holds.")
@click.option("--delete-after", type=click.IntRange(min=0), metavar="SECONDS",
              help="Delete an object the output dropped only once it has been gone this long (so readers holding "
                   "an older index still find what it names); 0: at once. Default: an hour.")
@click.option("--dry-run", is_flag=True, help="Say what would be uploaded and deleted; change nothing.")
def upload(dest: str, out: Path, endpoint_url: str | None, region: str | None, max_age: int, jobs: int,
           no_delete: bool, delete_after: int | None, dry_run: bool) -> None:
    """Upload the output of `skillreg build` to s3://BUCKET/PREFIX: only what changed, content-addressed files
    first (cached for a year), the indexes last (cached --max-age seconds), then delete what the output dropped
    at least --delete-after seconds ago (what it dropped since waits for a later upload).

    Credentials come from the usual AWS environment variables or configuration files (needs boto3:
    pip install 'skill-registry[s3]').
    """
    from ..ops.upload import DELETE_AFTER, describe
    from ..ops.upload import upload as run_upload

    if delete_after is None:
        delete_after = DELETE_AFTER

    with _progress("Uploading") as progress:
        plan, result = run_upload(out, dest, endpoint_url=endpoint_url, region=region, jobs=jobs, max_age=max_age,
                                  delete=not no_delete, delete_after=delete_after, dry_run=dry_run,
                                  on_wait=functools.partial(_say_waiting, out), on_progress=progress)
    counts = describe(f.path for f in plan.uploads)
    classes = f"{counts['immutable']} immutable, {counts['mutable']} other, {counts['index']} index"
    waiting = plan.waiting
    kept = ""
    if waiting and not no_delete:
        when = datetime.datetime.fromtimestamp(max(waiting.values()), datetime.UTC)
        kept = (f"; {counted(len(waiting), 'object')} the output dropped kept until {when:%Y-%m-%d %H:%M} UTC at "
                "the latest (--delete-after), for an upload after that to delete")
    if result is None:
        click.echo(f"Would upload {counted(len(plan.uploads), 'file')} ({classes}) and delete "
                   f"{counted(len(plan.delete), 'object')} "
                   f"at {plan.destination}; {plan.unchanged} unchanged{kept}")
        return
    click.echo(f"Uploaded {counted(len(result.uploaded), 'file')} ({classes}) and deleted "
               f"{counted(len(result.deleted), 'object')} "
               f"at {result.destination}; {result.unchanged} unchanged{kept}")


COMMANDS = [validate, new, build, serve, export, import_, prompt, marketplace, rules, check_deploy, upload]
