"""``skillreg build``: validate every skill, then write the JSON API, bundles, discovery indexes and website.

The pipeline reads as its stages over one frozen value (``_Build``): read what the last build left
(``_prepare``), decide which skills to build again (``_plan``), build them in worker processes
(``_build_skills``), check the registry (``_check``), stage the registry-wide documents (``_stage_registry``)
and the website, then put everything in place (``transaction``) and record it (``manifest``).

Nothing in the output changes until everything is ready. A first build, or one whose record cannot be trusted,
stages everything and swaps the whole folder in. A rebuild stages only the skills whose files changed
(``signatures``), the registry-wide documents one of whose rows changed (``documents``, joined from the rows the
manifest keeps as bytes, ``outcome``) and the website, then commits those units under a journal.

Every version a skill had on the built branch is published too (``history``): its ``versions.json`` is part of
the skill's units, and the zips of old versions come from the bundle cache or are packed from git objects.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .. import __version__
from ..core.bundle import dumps
from ..core.config import CONFIG_NAME, RegistryConfig
from ..core.diagnostics import RULES, Diagnostic
from ..core.discovery import Discovery, discover_paths, refusal_finding, registry_skills
from ..core.errors import BuildError, UsageError
from ..core.fs import remove_path
from ..core.git_ignored import git_top
from ..core.loader import display_path
from ..core.model import sha256_hex
from ..core.search import SHARDS_INDEX_PATH
from ..core.urls import INDEX_PATH, STATE_PATH, detail_path, skill_units, versions_path
from ..core.workers import collecting_for_phase, paused_collector, run_parallel
from ..site.bodies import BODIES_STATE
from ..validate.baseline import BaselineCheck, judge_registry, read_baseline
from ..validate.report import ValidationReport
from .bundlecache import check_cache_place
from .collections import COLLECTIONS_DIR, stage_collections
from .current import BuildKey, Current, forget_current, record_current, shown
from .documents import INDEX_KEY, read_or_none, stage_documents
from .folder_changes import changed_folders
from .history import GitHistory, check_marks, read_skills_history, state_document
from .history_start import start_history
from .host_fit import PublishChoice, choose, over_limit, record_choice, skill_sizes, was_lean
from .identity import Identities, assign
from .manifest import MANIFEST_VERSION, StoredManifest, read_manifest, write_manifest
from .outcome import PUBLISHED_KEY, SkillOutcome, previous_outcomes
from .provenance import ProvenanceHistory, read_history
from .registry_findings import Heads, registry_findings
from .schemas import SCHEMA_DIR, write_schemas
from .site_marketplace import SITE_MARKETPLACE, SITE_MARKETPLACE_DIR, site_marketplace
from .skill_output import SkillJob, build_task, close_objects, init_worker, skill_key
from .skills_manifest import RECORD_KEY as SKILLS_MANIFEST_KEY
from .skills_manifest import stage_skills_manifest
from .transaction import (
    OutputPlace,
    check_output_folder,
    commit_units,
    empty_trash,
    link_unchanged_documents,
    output_errors,
    output_lock,
    recover_place,
    stage_file,
    staging,
    swap_output,
)
from .worktree import WorkTree, read_work_tree

BUNDLE_CACHE_ENV = "SKILLREG_BUNDLE_CACHE"


class BuildFailed(BuildError):
    """Validation found errors; nothing was written. Carries the findings for the CLI to show."""

    def __init__(self, report: ValidationReport) -> None:
        super().__init__(f"the build stopped: {report.summary()}; nothing was written")
        self.report = report


@dataclass(frozen=True)
class BuildResult:
    out: Path
    report: ValidationReport
    published: tuple[str, ...]  # skill names in the output
    written: tuple[str, ...]  # skills whose files were generated this time
    reused: tuple[str, ...]  # skills left as the previous build wrote them
    skipped: tuple[str, ...]  # invalid skills left out under --keep-going
    removed: tuple[str, ...]  # skills the previous output had and this one has not
    commit: str | None
    retired: tuple[str, ...] = ()  # skills gone from skills/ whose versions stay published
    packed: int = 0  # old versions' zips packed from git objects (the others came from the bundle cache)
    warnings: tuple[str, ...] = ()  # what the user should know about the output, e.g. a shallow history
    # A signing build: the length and sha256 of the digests.json its workers staged for each skill written or
    # retired in this run, which the signing stage signs without reading the files again.
    staged_digests: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    published_paths: tuple[str, ...] = ()  # the repository paths of ``published``, as findings name the skills
    publish_choice: str | None = None  # why the build chose the lean settings itself (``host_fit``)
    shown: tuple[str, ...] | None = None  # what the command shows of the findings without --verbose (``current``)


@dataclass(frozen=True)
class BuildOptions:
    """How to build, beyond the registry's own settings: the command's flags that registry.yaml also has
    (profile, base URL) are merged into the config first, once (``core.config.merge_flags``)."""

    paths: tuple[Path, ...] = ()  # skill folders or folders of skills (default: every skill discovery finds)
    jobs: int | None = None
    keep_going: bool = False  # leave invalid skills out instead of stopping
    site: bool = True  # also write the website
    wait: bool = True  # False: stop with ``OutputBusy`` when another build holds the output
    bundle_cache: Path | None = None  # else ``SKILLREG_BUNDLE_CACHE``, else a folder in the output's state
    on_progress: Callable[[int, int], None] | None = None
    on_wait: Callable[[int | None], None] | None = None  # told once another build has held the output a moment
    sign: Path | None = None  # a folder of keys (``skillreg trust init``): sign the output with TUF metadata
    key: BuildKey | None = None  # what the build reads, taken before it starts: recorded if it succeeds (``current``)


@dataclass(frozen=True)
class _Build:
    """One build's inputs, read before anything is staged; every stage reads them, none changes them."""

    config: RegistryConfig
    options: BuildOptions
    place: OutputPlace
    found: Discovery
    bundle_cache: Path
    folders: tuple[Path, ...]
    paths: Mapping[str, str]  # each skill folder (as a string) -> its path in the repository
    gone: tuple[str, ...]  # paths of skills git knows that the work tree no longer holds (a whole build only)
    history: ProvenanceHistory
    git: GitHistory
    warnings: tuple[str, ...]
    settings: str
    index_before: bytes | None  # the output's index.json
    stored: StoredManifest | None  # the last build's record, when it was written for these settings
    work: WorkTree  # what git says of the skill folders: the paths it ignores (never published), signatures
    choice: PublishChoice | None = None  # the lean settings the build chose itself (``host_fit``)
    restated: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # (entries, signature) by ``skill_sizes``

    def job(self, tmp: Path) -> SkillJob:
        bodies = self.place.state / BODIES_STATE if self.options.site else None
        return SkillJob(self.config, self.history, tmp, self.git, self.bundle_cache, bodies,
                        digests=self.options.sign is not None, work=self.work)


Task = tuple[str, str, Path | None]  # (slug, repository path, folder) of a skill to build


@dataclass(frozen=True)
class _Plan:
    """What the last build left that this one reuses, and what it builds again."""

    previous: dict[str, SkillOutcome] | None  # None: a whole build
    stored: StoredManifest | None  # the record ``previous`` was read from
    reused: tuple[SkillOutcome, ...]
    to_build: tuple[Task, ...]  # no folder for a skill gone from the work tree
    record: Mapping[str, str]  # the build record's entries the plan decides (settings, provenance)
    identities: Identities  # the slugs the skills are built under
    guessed: Mapping[str, str | None]  # the SKILL.md names ``identities`` were assigned from, by path


@dataclass(frozen=True)
class _Checked:
    """The registry after validation: what is published, what is left out."""

    report: ValidationReport
    invalid: frozenset[str]
    outcomes: tuple[SkillOutcome, ...]  # every skill in skills/, valid or not
    kept: tuple[SkillOutcome, ...]  # those published
    retired: tuple[SkillOutcome, ...]  # skills that publish only their versions
    built: tuple[SkillOutcome, ...]  # those built in this run
    record: Mapping[str, str]  # the build record's entries of the registry-wide findings and kept versions
    kept_paths: tuple[str, ...] = ()  # the repository paths of ``kept``: what findings name them by


@dataclass(frozen=True)
class _Validated:
    """The registry's findings: every skill in skills/ and those left out as invalid."""

    report: ValidationReport
    invalid: frozenset[str]
    outcomes: tuple[SkillOutcome, ...]  # every skill in skills/, valid or not
    retired: tuple[SkillOutcome, ...]  # skills gone from skills/ that publish only their versions
    record: Mapping[str, str]  # the build record's entries of the registry-wide findings


def build(config: RegistryConfig, out: Path, options: BuildOptions = BuildOptions()) -> BuildResult:
    """Validate, then write the output; see the module docstring for how it is put in place.

    The whole build, recovery included, holds the output's lock: another build of the same output waits
    (``on_wait`` is told once it has waited a moment) or, with ``wait=False``, stops with ``OutputBusy``.
    The bundle cache keeps old versions' zips and records so that a rebuild packs only new digests.
    """
    with paused_collector():  # from the first record read: a collection walks every record read so far
        return _build(config, out, options)


def _build(config: RegistryConfig, out: Path, options: BuildOptions) -> BuildResult:
    found = _discover(config, options.paths)
    with output_lock(out, wait=options.wait, on_wait=options.on_wait) as place:
        forget_current(place)
        inputs = _prepare(config, options, place, found)
        try:
            result = _run(inputs)
            record_choice([place.state, inputs.bundle_cache], inputs.choice)
            if options.sign is not None:
                result = _sign(inputs.config, place, options.sign, result, inputs.index_before)
            elif options.key and not options.paths and len(inputs.work.signatures) == len(inputs.found.skills):
                result = replace(result, shown=shown(result.report, result.published_paths, result.skipped))
                record_current(place, options.key, Current(len(result.published), result.commit, result.shown or (),
                                                           result.warnings, result.publish_choice))
            return result
        finally:
            if inputs.stored is not None:
                inputs.stored.close()


def _sign(config: RegistryConfig, place: OutputPlace, keys: Path, result: BuildResult,
          index_before: bytes | None) -> BuildResult:
    """The signing stage (signing/metadata.py): TUF metadata over what this build left in the output; the result
    gains a warning when signed files expire soon (the same commit built again does not renew them), and when the
    root does (only `trust renew-root` renews it)."""
    from ..signing.expiry import chain_root_warning, renewal_warning
    from ..signing.metadata import sign_build

    # Every skill this build's workers wrote staged its digests.json from the bytes it staged; a retired skill
    # kept whole keeps the one an earlier signing build's worker wrote, or has none and gets it from the output.
    staged: dict[str, tuple[int, str] | None] = {name: None for name in result.retired}
    staged.update(result.staged_digests)
    signed = sign_build(config, place.base, place.state, keys, {*result.written, *result.removed, *result.retired},
                        index_before, staged=staged)
    warnings = [renewal_warning(place.base, signed.first_expiry), chain_root_warning(config)]
    return replace(result, warnings=(*result.warnings, *(warning for warning in warnings if warning is not None)))


def _discover(config: RegistryConfig, paths: Sequence[Path]) -> Discovery:
    """The skills to build: those in ``paths``, else every skill of the registry; an error when there is none."""
    for path in paths:
        if not path.is_dir():
            raise UsageError(f"{display_path(path)}: no such folder")
    if paths:
        return discover_paths(paths, config.root).require()
    home = config.root / config.skills_dir
    if config.locations == (config.skills_dir,) and not home.is_dir() and not home.is_symlink():
        raise UsageError(f"{display_path(home)}: no such folder, so there is no skill to build (the registry's "
                         f"skills go there, `skills_dir` in {CONFIG_NAME}); create the first with "
                         f"`skillreg new NAME`")
    return registry_skills(config).require()


def _prepare(config: RegistryConfig, options: BuildOptions, place: OutputPlace, found: Discovery) -> _Build:
    """Put an interrupted build's output back, then read the skills' git history and the record of the last
    build."""
    out = place.base
    recover_place(place)
    empty_trash(place)
    changes = options.key.changes if options.key is not None and not options.paths else None
    found, work = read_work_tree(git_top(config.root), config.root, found, changes)
    check_output_folder(place.out, config, [s.folder for s in found.skills])
    folders = [s.folder for s in found.skills]
    root_skill = [s.path for s in found.skills] == ["."]
    git = start_history(read_skills_history(config.root, found.scope, place.state / "history.json",
                                            root_skill=root_skill), config)
    history = read_history(config.root, [s.path for s in found.skills], place.state / "provenance.json",
                           scope=found.scope, moved=git.moved)
    cache = options.bundle_cache or (Path(os.environ[BUNDLE_CACHE_ENV]) if os.environ.get(BUNDLE_CACHE_ENV)
                                     else place.state / "bundles")
    check_cache_place(cache, git.top or config.root, place.out)
    restated: dict[str, tuple[str, str]] = {}  # what reading the sizes stated of each folder git does not sign
    config, choice = choose(config, lambda: skill_sizes([(s.path, s.folder) for s in found.skills], work.read_ignored,
                                                        work.signatures, place.state, restated),
                            was_lean([place.state, cache]))
    present = {s.path for s in found.skills}
    left = set(git.gone())
    gone = tuple(path for path in git.names if path not in present and (
        path in left or not (config.root / path).exists())) if not options.paths else ()
    warnings: tuple[str, ...] = tuple(f"left out {r}" for r in found.refused) + over_limit(choice)
    if git.kind == "shallow":
        warnings += (f"{display_path(git.top or config.root)} is a shallow clone: versions older than its first "
                    "commit are missing from versions.json (marked \"history\": \"shallow\"); fetch the whole "
                    "history (git fetch --unshallow, or actions/checkout with fetch-depth: 0) to publish them",)
    settings = _settings(config, options.site)
    index_before = (out / INDEX_PATH).read_bytes() if (out / INDEX_PATH).is_file() else None
    with suppress(OSError):
        (place.state / "manifest.json").unlink(missing_ok=True)  # the record of builders before manifest.sqlite
    stored = read_manifest(place.manifest, settings, sha256_hex(index_before) if index_before is not None else None)
    paths = {str(s.folder): s.path for s in found.skills}
    return _Build(config, options, place, found, cache, tuple(folders), paths, gone, history, git, warnings, settings,
                  index_before, stored, work, choice, restated)


def _settings(config: RegistryConfig, site: bool) -> str:
    """A rebuild may reuse skills only when everything else the output depends on is unchanged."""
    settings = asdict(config)
    settings["root"] = str(config.root.resolve())
    settings["path"] = str(config.path.resolve()) if config.path else None
    # The rules' severities decide which skills and old versions publish: a rule that becomes a warning
    # publishes again what it withdrew, so a change to them rebuilds every skill.
    severities = {code: rule.severity.value for code, rule in RULES.items()}
    return sha256_hex(json.dumps({"builder": __version__, "config": settings, "profile": config.profile,
                                  "site": site, "rules": severities}, sort_keys=True, default=str).encode())


def _run(b: _Build) -> BuildResult:
    """The stages, with the cyclic collector paused except while workers are forked and the website is written
    (``core.workers.collecting_for_phase``)."""
    plan = _plan(b)
    with output_errors(b.place, b.index_before is not None), staging(b.place) as tmp:
        built = _build_skills(b, tmp, plan.to_build, jobs=b.options.jobs, on_progress=b.options.on_progress)
        plan, built = _settle(b, plan, tmp, built)
        checked = _check(b, plan, tmp, built)
        units, staged = _stage_registry(b, plan, tmp, checked)
        if b.options.site and plan.previous is not None:
            unchanged = [rel for rel in (INDEX_PATH, SHARDS_INDEX_PATH) if rel not in units]
            link_unchanged_documents(b.place.base, tmp, unchanged)
        removed, changed = _changes(b, plan, checked)
        if b.options.site:
            units += _stage_site(b, plan, tmp, checked.report, changed)
        if plan.previous is None:
            swap_output(tmp, b.place)
        else:
            commit_units(tmp, b.place, [u for name in changed for u in skill_units(name)] + units)
    _record(b.place.manifest, plan, checked, {**plan.record, **checked.record, **staged})
    return _result(b, checked, removed)


def _plan(b: _Build) -> _Plan:
    """Reuse each skill whose folder, history and provenance are as the last build recorded them."""
    previous = previous_outcomes(b.stored)
    stored = b.stored if previous is not None else None
    known = previous or {}
    by_folder = {o.folder: o for o in known.values() if not o.retired}
    guessed = {s.path: old.declared for s in b.found.skills if (old := by_folder.get(str(s.folder))) is not None}
    identities = assign(b.found.skills, guessed, b.gone, b.git, b.config)
    slugs = identities.slugs
    named = [(slugs[s.path], s.path, str(s.folder), s.folder) for s in b.found.skills]
    candidates = [(old, where) for slug, where, path, _ in named
                  if (old := known.get(slug)) is not None and old.folder == path]
    signatures, restated = b.work.signatures, b.restated
    stated = {old.folder for old, where in candidates if restated.get(where) == (old.entries, old.signature)}
    surveyed = [(old, where) for old, where in candidates if where not in signatures and old.folder not in stated]
    moved = changed_folders([(old.folder, old.entries, old.signature, b.work.ignored.get(where, ()))
                             for old, where in surveyed], b.options.jobs)
    unchanged = {old.folder for n, (old, _) in enumerate(surveyed) if n not in moved} | stated | {
        old.folder for old, where in candidates if signatures.get(where, "") == old.signature}
    fingerprint = b.git.fingerprints()
    # Each skill's key depends on its own record and on the history, which the same commit gives again.
    provenance = b.history.key()
    same_history = stored is not None and stored.meta.get("provenance") == provenance
    reused: list[SkillOutcome] = []
    to_build: list[Task] = []
    for slug, where, path, folder in named:
        old = known.get(slug)
        if (old is not None and old.folder == path and path in unchanged
                and old.history == fingerprint(where)
                and (old.digest is None or same_history
                     or old.key == skill_key(b.config, b.history, where, old.digest, old.folder, old.skill_md))):
            reused.append(old)
        else:
            to_build.append((slug, where, folder))
    for where in b.gone:
        old = known.get(slugs[where])
        if old is not None and old.retired and old.history == fingerprint(where):
            reused.append(old)
        else:
            to_build.append((slugs[where], where, None))
    record = {"version": str(MANIFEST_VERSION), "settings": b.settings, "provenance": provenance}
    return _Plan(previous, stored, tuple(reused), tuple(to_build), record, identities, guessed)


def _settle(b: _Build, plan: _Plan, tmp: Path, built: list[SkillOutcome]) -> tuple[_Plan, list[SkillOutcome]]:
    """The slugs once every SKILL.md's name is known: a skill built or reused under a slug that was guessed wrong
    (its name is not its folder's, or another skill now contends for it) is built again under its own."""
    path_of = plan.identities.path_of()
    every = [*plan.reused, *built]
    named = {path_of[o.name]: o.declared for o in every if not o.retired}
    if named == plan.guessed:  # every name as guessed: the same slugs
        return plan, built
    final = assign(b.found.skills, named, b.gone, b.git, b.config)
    wrong = {o.name: path_of[o.name] for o in every if final.slugs[path_of[o.name]] != o.name}
    if not wrong:
        return plan, built
    for o in built:
        if o.name in wrong:
            for unit in skill_units(o.name):
                remove_path(tmp / unit)
    folders = {s.path: s.folder for s in b.found.skills}
    again = _build_skills(b, tmp, [(final.slugs[p], p, folders.get(p)) for p in wrong.values()], jobs=b.options.jobs)
    reused = tuple(o for o in plan.reused if o.name not in wrong)
    settled = replace(plan, reused=reused, identities=final, guessed=named)
    return settled, [*(o for o in built if o.name not in wrong), *again]


def _build_skills(b: _Build, tmp: Path, tasks: Sequence[Task], *, jobs: int | None,
                  on_progress: Callable[[int, int], None] | None = None) -> list[SkillOutcome]:
    b.work.read_ignored(where for _, where, folder in tasks if folder is not None)  # before the workers start
    try:
        with collecting_for_phase():
            return run_parallel(build_task, tasks, initializer=init_worker, initargs=(b.job(tmp),), jobs=jobs,
                                on_progress=on_progress)
    finally:
        close_objects()  # the one this process started when it built the skills itself


def _check(b: _Build, plan: _Plan, tmp: Path, built: list[SkillOutcome]) -> _Checked:
    """Validate the registry as a whole, stopping on an error unless asked to keep going; leave the invalid
    skills out, each still keeping the versions it published before; then apply the history's marks."""
    validated = _validate(b, plan, built)
    path_of = plan.identities.path_of()
    kept = [o for o in validated.outcomes if path_of[o.name] not in validated.invalid and o.digest is not None]
    _unstage_invalid(tmp, [o for o in built if path_of[o.name] in validated.invalid])
    kept_versions, built_again = _keep_invalid_versions(b, plan, tmp, validated.invalid)
    retired = sorted([*validated.retired, *kept_versions], key=lambda o: o.name)
    _apply_history_marks(b.config, kept, retired)
    record = {**validated.record, KEPT_VERSIONS_KEY: json.dumps(
        {o.name: [o.history, " ".join(o.digests), o.latest] for o in kept_versions}, sort_keys=True)}
    return _Checked(validated.report, validated.invalid, validated.outcomes, tuple(kept), tuple(retired),
                    (*built, *built_again), record, tuple(path_of[o.name] for o in kept))


def _validate(b: _Build, plan: _Plan, built: list[SkillOutcome]) -> _Validated:
    """Every skill's own findings and the registry-wide ones; ``BuildFailed`` on an error unless keeping going."""
    every = [*plan.reused, *built]
    retired = sorted((o for o in every if o.retired), key=lambda o: o.name)
    outcomes = sorted((o for o in every if not o.retired), key=lambda o: (o.name, o.folder))
    heads = Heads(outcomes, b.folders)
    path_of = plan.identities.path_of()
    found, record = registry_findings(outcomes, heads, [path_of[o.name] for o in outcomes], plan.stored)
    found += [refusal_finding(r) for r in b.found.refused]
    baseline = read_baseline(b.config)  # known errors leave their skill out without stopping the build
    diagnostics = [d for o in outcomes for d in o.diagnostics] + found if baseline is None else \
        judge_registry(BaselineCheck(baseline, b.config.root, ratchet=False),
                       [(o.folder, o.diagnostics) for o in outcomes], found)
    diagnostics.sort(key=Diagnostic.sort_key)
    report = ValidationReport(heads, tuple(diagnostics))
    invalid = report.invalid_names()
    if report.failed() and not b.options.keep_going:
        raise BuildFailed(report)
    return _Validated(report, frozenset(invalid), tuple(outcomes), tuple(retired), record)


def _unstage_invalid(tmp: Path, invalid: Sequence[SkillOutcome]) -> None:
    """Remove what the workers staged for skills left out as invalid."""
    for o in invalid:
        for unit in skill_units(o.name):
            remove_path(tmp / unit)


def _keep_invalid_versions(b: _Build, plan: _Plan, tmp: Path, invalid: frozenset[str]) -> \
        tuple[list[SkillOutcome], list[SkillOutcome]]:
    """Left out under --keep-going, an invalid skill still keeps what it published before: its versions, and
    those of them built again in this run."""
    slugs = plan.identities.slugs
    still = [(slugs[path], path) for path in sorted(invalid) if path in slugs and b.git.of(path) and path not in b.gone]
    kept_versions, to_build = _kept_versions(b, plan, still)
    built_again = _build_skills(b, tmp, to_build, jobs=1) if to_build else []
    return [*kept_versions, *built_again], built_again


def _apply_history_marks(config: RegistryConfig, kept: Sequence[SkillOutcome],
                         retired: Sequence[SkillOutcome]) -> None:
    """Check the registry's history marks (yanks, takedowns) against the versions published."""
    by_name = {o.name: o for o in [*kept, *retired] if o.digests}
    check_marks(config.history, config.path, lambda name: set(by_name[name].digests) if name in by_name
                else None, {o.name: o.digest for o in kept if o.digest})


KEPT_VERSIONS_KEY = "kept_versions"  # the build record's versions of the skills left out under --keep-going


def _kept_versions(b: _Build, plan: _Plan, names: Sequence[tuple[str, str]]) -> tuple[list[SkillOutcome], list[Task]]:
    """The published versions of the invalid skills ``names``, left out under --keep-going: as the last build
    recorded them when the skill's history is the same (its output still holds them), else to be built again."""
    try:
        recorded = json.loads(plan.stored.meta.get(KEPT_VERSIONS_KEY, "{}")) if plan.stored is not None else {}
    except ValueError:
        recorded = {}
    if not isinstance(recorded, dict):
        recorded = {}
    fingerprint = b.git.fingerprints()
    kept: list[SkillOutcome] = []
    to_build: list[Task] = []
    for name, path in names:
        old = recorded.get(name)
        history = fingerprint(path)
        if isinstance(old, list) and len(old) == 3 and old[0] == history:
            kept.append(SkillOutcome.versions_only(name, history, tuple(str(old[1]).split()), old[2], fresh=False))
        else:
            to_build.append((name, path, None))
    return kept, to_build


def _stage_registry(b: _Build, plan: _Plan, tmp: Path, checked: _Checked) -> tuple[list[str], dict[str, str]]:
    """Stage the registry-wide documents that change, ``state.json``, the schemas and ``.nojekyll``; returns
    their units and this stage's entries of the build record."""
    out = b.place.base
    listed = stage_collections(tmp, b.config, b.found, checked.kept, checked.kept_paths, plan.stored)
    units, record = stage_documents(tmp, out, b.config, b.history.source, checked.kept, plan.stored, listed,
                                    b.index_before)
    record.setdefault(INDEX_KEY, sha256_hex(b.index_before) if b.index_before is not None else "")
    stored = plan.stored
    same = stored is not None and stored.meta.get(PUBLISHED_KEY) == record[PUBLISHED_KEY]
    manifest_units, record[SKILLS_MANIFEST_KEY] = stage_skills_manifest(
        tmp, out, [o.name for o in checked.kept], [o.name for o in checked.built], whole=plan.previous is None,
        recorded=stored.meta.get(SKILLS_MANIFEST_KEY) if same and stored is not None else None)
    units += manifest_units
    state = dumps(state_document(len(checked.kept), {o.name: o.latest for o in [*checked.kept, *checked.retired]},
                                 b.choice.document() if b.choice is not None else None))
    if plan.previous is None or read_or_none(out / STATE_PATH) != state:
        stage_file(tmp, STATE_PATH, state)
        units.append(STATE_PATH)
    write_schemas(tmp)
    stage_file(tmp, ".nojekyll", b"")
    if (marketplace := site_marketplace(b.config, b.history.source.commit)) is not None:
        stage_file(tmp, SITE_MARKETPLACE, marketplace)
    return [*units, SCHEMA_DIR, ".nojekyll", COLLECTIONS_DIR, SITE_MARKETPLACE_DIR], record


def _changes(b: _Build, plan: _Plan, checked: _Checked) -> tuple[list[str], list[str]]:
    """The skills the last output had that this one has not, and every skill whose units change (those too)."""
    if plan.previous is None:
        return [], []
    out = b.place.base
    kept_names = {o.name for o in checked.kept}
    retired_names = {o.name for o in checked.retired}
    removed = sorted(name for name, o in plan.previous.items()
                     if name not in kept_names and name not in retired_names and _published(out, name, o))
    changed = sorted({o.name for o in checked.built if o.name in kept_names} | {
        o.name for o in checked.retired if o.fresh}) + removed
    return removed, changed


def _stage_site(b: _Build, plan: _Plan, tmp: Path, report: ValidationReport, changed: list[str]) -> list[str]:
    """Stage the website; a rebuild writes only the pages its changes touch, which it names as units to commit."""
    from ..site.pages import write_site

    rebuild = plan.previous is not None
    out = b.place.base
    with collecting_for_phase():
        return list(write_site(b.config, tmp, report, api_roots=(tmp, out) if rebuild else (tmp,),
                               previous=out if rebuild else None, changed=changed if rebuild else None,
                               state=b.place.state).units)


def _published(out: Path, name: str, old: SkillOutcome) -> bool:
    """Whether the previous output holds anything of ``name`` (a skill recorded as invalid published nothing)."""
    return (old.retired or old.digest is not None) and (
        os.path.lexists(out / detail_path(name)) or os.path.lexists(out / versions_path(name)))


def _record(path: Path, plan: _Plan, checked: _Checked, meta: Mapping[str, str]) -> None:
    """Write the manifest: every skill's outcome (invalid ones too, so an unchanged invalid skill is not
    validated again), a skill left out under --keep-going as its invalid self rather than its kept history, and
    the stages' entries ``meta``."""
    stored, previous = plan.stored, plan.previous
    names = {o.name for o in checked.outcomes}
    records = [*checked.outcomes, *(o for o in checked.retired if o.name not in names)]
    if stored is None or previous is None:
        if stored is not None:
            stored.close()
        write_manifest(path, meta=meta, rows=[o.to_record() for o in records])
        return
    stored.close()
    fresh = [o for o in records if o.fresh]
    recorded = {o.name for o in records}
    dropped = sorted(name for name in previous if name not in recorded)
    if fresh or dropped or any(stored.meta.get(k) != v for k, v in meta.items()):
        write_manifest(path, meta=meta, rows=[o.to_record() for o in fresh], removed=dropped, update=True)


def _result(b: _Build, checked: _Checked, removed: list[str]) -> BuildResult:
    fresh = {o.name for o in checked.built}
    kept = checked.kept
    fresh_kept = {o.name for o in kept if o.name in fresh}
    return BuildResult(
        out=b.place.out, report=checked.report,
        published=tuple(o.name for o in kept),
        published_paths=checked.kept_paths,
        written=tuple(o.name for o in kept if o.name in fresh),
        reused=tuple(o.name for o in kept if o.name not in fresh),
        skipped=tuple(sorted(checked.invalid)),
        removed=tuple(removed),
        commit=b.history.source.commit,
        retired=tuple(sorted(o.name for o in checked.retired)),
        warnings=b.warnings, publish_choice=b.choice.line() if b.choice is not None else None,
        packed=sum(o.packed for o in checked.built),
        staged_digests={o.name: o.signed for o in checked.built
                        if o.signed is not None and (o.name in fresh_kept or o.retired)},
    )
