"""validate: speed and peak memory of ``skillreg validate`` (text and ``--format json``) and of skills-ref's
validator, on the same folders in one run, with the speed-up (issue 14: >= 5x; 60,000 skills in <= 25 s)."""

from __future__ import annotations

import sys
from pathlib import Path

from .corpus import REPO
from .harness import (
    BenchContext,
    BenchError,
    Finished,
    Row,
    Target,
    compile_bytecode,
    interleaved,
    run_process,
    skillreg_command,
)

FULL_N = 1_000
QUICK_N = 100
LARGE = 10_000  # from here on each figure takes minutes (skills-ref alone 2 ms a skill): fewer runs
LARGE_REPEAT = 2
MB = 1024 * 1024

# skills-ref as a whole process, as `skillreg validate` is measured: interpreter start, imports, every folder.
_SKILLS_REF_PROCESS = """\
import sys
from pathlib import Path
from skills_ref.validator import validate
folders = sorted(p for p in Path(sys.argv[1]).iterdir() if p.is_dir())
rejected = [f.name for f in folders if validate(f)]
print(f"{len(folders)} folders, {len(rejected)} rejected")
sys.exit(1 if rejected else 0)
"""


def measure(command: list[str], findings: bool = False) -> Finished:
    """One run of ``command``; with ``findings`` (real skills), exit code 1 (some skill rejected) counts too."""
    return run_process(command, cwd=REPO, exits=(0, 1) if findings else (0,))


def flagged_skills(files: list[str], root: Path) -> int:
    """How many skill folders of ``root`` the findings' files lie in."""
    folders = set()
    for file in files:
        path = Path(file).resolve()
        if root.resolve() in path.parents:
            folders.add(path.relative_to(root.resolve()).parts[0])
    return len(folders)


def validate_bench(ctx: BenchContext) -> list[Row]:
    from skills_ref.validator import validate as skills_ref_validate

    from builder.core.config import load_config
    from builder.validate.run import validate_paths

    n = ctx.skills or (10**9 if ctx.real is not None else QUICK_N if ctx.quick else FULL_N)
    repeat = min(ctx.repeat, LARGE_REPEAT) if n >= LARGE else ctx.repeat
    root = ctx.corpus(n)
    config = load_config(REPO / "registry.yaml")
    cli = skillreg_command() + ["validate", "--profile", "spec", str(root)]
    cli_json = cli + ["--format", "json"]
    reference_process = [sys.executable, "-c", _SKILLS_REF_PROCESS, str(root)]
    finished: dict[str, list[Finished]] = {"text": [], "json": [], "ref": []}

    def ours() -> object:
        return validate_paths([root], config, "spec")

    def ours_hashed() -> object:
        report = validate_paths([root], config, "spec")
        return [f.sha256 for skill in report.skills for f in skill.files]

    def process(key: str, command: list[str]) -> object:
        done = measure(command, ctx.real is not None)
        finished[key].append(done)
        return done

    def reference() -> object:
        return [skills_ref_validate(folder) for folder in sorted(p for p in root.iterdir() if p.is_dir())]

    n = sum(1 for p in root.iterdir() if p.is_dir())  # a real corpus may hold fewer than asked for
    # On generated skills the comparison is only fair when both tools accept every skill: check once, which also
    # warms the caches. Real skills have findings (both tools still read every one): they are counted instead.
    report = validate_paths([root], config, "spec")
    flagged = flagged_skills([d.file for d in report.diagnostics], root)
    if ctx.real is None and (report.diagnostics or len(report.skills) != n):
        shown = "\n".join(d.message for d in report.diagnostics[:5])
        raise BenchError(f"skillreg reports {len(report.diagnostics)} findings for the corpus of {n}:\n{shown}")
    del report
    rejected = [(folder.name, errors) for folder in sorted(root.iterdir()) if (errors := skills_ref_validate(folder))]
    if rejected and ctx.real is None:
        raise BenchError(f"skills-ref rejects {len(rejected)} generated skills, e.g. {rejected[0]}")
    findings = (f"real public skills: skillreg reports findings in {flagged:,} of them (--profile spec), "
                f"skills-ref rejects {len(rejected):,}; " if ctx.real is not None else "")
    compile_bytecode()  # the CLI as installed: its modules' bytecode written once, not compiled at every start
    measure(cli, ctx.real is not None)

    ctx.log(f"  validate: {n:,} skills x {repeat} runs")
    t_ours, t_hashed, t_cli, t_json, t_ref_process, t_ref = interleaved(
        [ours, ours_hashed, lambda: process("text", cli), lambda: process("json", cli_json),
         lambda: process("ref", reference_process), reference], repeat)
    # A process's own figure (the wrapper's clock) leaves out the wrapper's start and this harness's bookkeeping.
    t_cli, t_json, t_ref_process = ([f.seconds for f in finished[key]] for key in ("text", "json", "ref"))

    def per_skill_ms(runs: list[float]) -> tuple[float, ...]:
        return tuple(seconds * 1000 / n for seconds in runs)

    def rss(key: str) -> tuple[float, ...]:
        return tuple(f.max_rss / MB for f in finished[key])

    def tree_rss(key: str) -> tuple[float, ...]:
        return tuple(f.tree_rss / MB for f in finished[key])

    speed_target = Target(">=", 5)
    rows = [
        Row("validate", "skillreg `validate_paths` (in-process)", n, "ms/skill", per_skill_ms(t_ours),
            findings + "reads every file of every skill (bytes, mode, size, binary sniff, invisible-character scan of "
            "SKILL.md and scripts/), checks links (CommonMark) and registry-wide names; does not hash."),
        Row("validate", "skillreg `validate_paths` + sha256 of every file", n, "ms/skill", per_skill_ms(t_hashed),
            "as above plus a SHA-256 of every file, the extra work a build does per file."),
        Row("validate", "`skillreg validate` (CLI, text)", n, "ms/skill", per_skill_ms(t_cli),
            "what users run, as a whole process: interpreter start-up, imports, worker processes."),
        Row("validate", "`skillreg validate --format json` (CLI)", n, "ms/skill", per_skill_ms(t_json), ""),
        Row("validate", "skills-ref `validate` (whole process)", n, "ms/skill", per_skill_ms(t_ref_process),
            f"skills-ref {_version('skills-ref')} over every folder in one Python process; reads only SKILL.md."),
        Row("validate", "skills-ref `validate` (in-process)", n, "ms/skill", per_skill_ms(t_ref),
            "the same calls inside this process: no start-up."),
        Row("validate", "CPU time, `skillreg validate` (CLI, text), all processes", n, "ms/skill",
            per_skill_ms([f.cpu_seconds for f in finished["text"]]),
            "user + system time of the CLI and its workers: what the run costs, however busy the machine"),
        Row("validate", "CPU time, skills-ref (whole process)", n, "ms/skill",
            per_skill_ms([f.cpu_seconds for f in finished["ref"]]), ""),
        Row("validate", "`skillreg validate` (CLI, text), skills per second", n, "skills/s",
            tuple(n / seconds for seconds in t_cli), ""),
        Row("validate", "speed-up, skills-ref in-process / `skillreg validate` CLI", n, "x",
            tuple(ref / mine for ref, mine in zip(t_ref, t_cli)), "the issue's measure: our whole process "
            "against skills-ref's calls alone", speed_target),
        Row("validate", "speed-up, skills-ref process / `skillreg validate` CLI", n, "x",
            tuple(ref / mine for ref, mine in zip(t_ref_process, t_cli)), "", speed_target),
        Row("validate", "speed-up, skills-ref in-process / skillreg in-process", n, "x",
            tuple(ref / mine for ref, mine in zip(t_ref, t_ours)), ""),
        Row("validate", "peak RSS, `skillreg validate` (text), largest process", n, "MB", rss("text"),
            "ru_maxrss of the largest process of the tree (RUSAGE_CHILDREN of a small fresh wrapper, whose own "
            "~10 MB is the floor)", Target("<=", 200)),
        Row("validate", "peak RSS, `skillreg validate --format json`, largest process", n, "MB", rss("json"), "",
            Target("<=", 200)),
        Row("validate", "peak RSS, `skillreg validate` (text), whole tree", n, "MB", tree_rss("text"),
            "the PSS of the CLI and its workers summed, sampled every 50 ms (a page shared by k processes counts "
            "1/k in each)"),
        Row("validate", "peak RSS, skills-ref (whole process)", n, "MB", rss("ref"), ""),
    ]
    if n >= 60_000:
        rows.append(Row("validate", "`skillreg validate` (CLI, text), whole run", n, "s", tuple(t_cli),
                        "issue 14: 60,000 skills on two cores", Target("<=", 25)))
    return rows


def _version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "(unknown version)"
