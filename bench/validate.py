"""validate: ms per skill for ``skillreg validate`` and for skills-ref's validator, on the same folders in one run."""

from __future__ import annotations

import subprocess

from .corpus import REPO
from .harness import BenchContext, BenchError, Row, interleaved, skillreg_command

FULL_N = 1_000
QUICK_N = 100


def validate_bench(ctx: BenchContext) -> list[Row]:
    from skills_ref.validator import validate as skills_ref_validate

    from builder.core.config import load_config
    from builder.validate.checks import validate_paths

    n = QUICK_N if ctx.quick else FULL_N
    root = ctx.corpus(n)
    config = load_config(REPO / "registry.yaml")
    cli = skillreg_command() + ["validate", "--profile", "spec", str(root)]

    def ours() -> object:
        return validate_paths([root], config, "spec")

    def ours_hashed() -> object:
        report = validate_paths([root], config, "spec")
        return [f.sha256 for skill in report.skills for f in skill.files]

    def ours_cli() -> object:
        done = subprocess.run(cli, cwd=REPO, capture_output=True, text=True)
        if done.returncode != 0:
            raise BenchError(f"`{' '.join(cli)}` exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done

    def reference() -> object:
        return [skills_ref_validate(folder) for folder in sorted(p for p in root.iterdir() if p.is_dir())]

    # The comparison is only fair when both tools accept every skill: check once, which also warms the caches.
    report = validate_paths([root], config, "spec")
    if report.diagnostics or len(report.skills) != n:
        shown = "\n".join(d.message for d in report.diagnostics[:5])
        raise BenchError(f"skillreg reports {len(report.diagnostics)} findings for the corpus of {n}:\n{shown}")
    rejected = [(folder.name, errors) for folder in sorted(root.iterdir()) if (errors := skills_ref_validate(folder))]
    if rejected:
        raise BenchError(f"skills-ref rejects {len(rejected)} generated skills, e.g. {rejected[0]}")
    ours_cli()

    ctx.log(f"  validate: {n:,} skills x {ctx.repeat} runs")
    t_ours, t_hashed, t_cli, t_ref = interleaved([ours, ours_hashed, ours_cli, reference], ctx.repeat)

    def per_skill_ms(runs: list[float]) -> tuple[float, ...]:
        return tuple(seconds * 1000 / n for seconds in runs)

    return [
        Row("validate", "skillreg `validate_paths` (in-process)", n, "ms/skill", per_skill_ms(t_ours),
            "reads every file of every skill (bytes, mode, size, binary sniff, invisible-character scan of "
            "SKILL.md and scripts/), checks links and registry-wide names; does not hash."),
        Row("validate", "skillreg `validate_paths` + sha256 of every file", n, "ms/skill", per_skill_ms(t_hashed),
            "as above plus a SHA-256 of every file, the extra work a build does per file."),
        Row("validate", "`skillreg validate` (CLI, subprocess)", n, "ms/skill", per_skill_ms(t_cli),
            "what users run; includes interpreter start-up and imports, spread over the skills."),
        Row("validate", "skills-ref `validate` (in-process)", n, "ms/skill", per_skill_ms(t_ref),
            f"skills-ref {_version('skills-ref')} reads only SKILL.md of each folder."),
        Row("validate", "speed-up, skills-ref / skillreg in-process", n, "x",
            tuple(ref / mine for ref, mine in zip(t_ref, t_ours)), ""),
        Row("validate", "speed-up, skills-ref / `skillreg validate` CLI", n, "x",
            tuple(ref / mine for ref, mine in zip(t_ref, t_cli)), ""),
    ]


def _version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "(unknown version)"
