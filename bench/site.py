"""site: our website beside the naive mkdocs-material configuration (every skill page in the navigation,
mkdocs' built-in full-text search) on the same API output, and ours alone at 10,000 skills.

Both are written by ``write_site`` in a subprocess (bench/site_build.py) into the same ``skillreg build
--no-site`` output, one after the other within each repetition; only ``write_site`` is timed. Between runs the
website's files are moved aside, so the API output serves every run.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from builder.core.urls import API_ROOT

from .build import api_output
from .harness import BenchContext, BenchError, Finished, Row, Target, run_process, settle, tree_bytes

COMPARED_FULL = 1_000
COMPARED_QUICK = 100
ALONE_FULL = 10_000
ALONE_REPEAT = 3  # runs at 10,000 skills (about a minute each), which keeps the full suite near 20 minutes
NOT_SITE = (API_ROOT.split("/")[0], ".well-known", ".nojekyll")  # what `skillreg build --no-site` writes
MB = 1_000_000
MIB = 1024 * 1024

NAIVE = "naive mkdocs-material"
OURS = "ours"


def site_bench(ctx: BenchContext) -> list[Row]:
    n = COMPARED_QUICK if ctx.quick else COMPARED_FULL
    rows = _compare(ctx, n)
    if not ctx.quick:
        rows += _ours_alone(ctx, ALONE_FULL)
    return rows


def _compare(ctx: BenchContext, n: int) -> list[Row]:
    out = api_output(ctx, n)
    runs: dict[str, list[float]] = {NAIVE: [], OURS: []}
    sizes: dict[str, dict[str, float]] = {}
    for run in range(ctx.repeat):
        ctx.log(f"  site: {n:,} skills, run {run + 1} of {ctx.repeat}, naive and ours")
        for variant in (NAIVE, OURS):
            seconds, _ = _write_site(ctx, n, out, naive=variant == NAIVE)
            runs[variant].append(seconds)
            if variant not in sizes:
                sizes[variant] = _sizes(out, n)
            _clear_site(ctx, out)
    naive, ours = runs[NAIVE], runs[OURS]
    # The naive configuration's cost per page grows with the number of pages: the targets are set at 1,000.
    speed_target, size_target = (Target(">=", 4), Target(">=", 8)) if n == COMPARED_FULL else (None, None)
    rows = [
        Row("site", f"{NAIVE}, `write_naive_site`", n, "s", tuple(naive),
            "every skill page in the navigation, mkdocs' search plugin on, HTML inline, one process; "
            "`write_site` alone is timed, in a subprocess, into an existing API output on disk."),
        Row("site", f"{OURS}, `write_site`", n, "s", tuple(ours),
            "skill pages out of the navigation, no full-text search index, pages built in parallel shards."),
        Row("site", "speed-up, naive / ours", n, "x", tuple(a / b for a, b in zip(naive, ours)), "",
            speed_target),
    ]
    for variant in (NAIVE, OURS):
        rows.append(Row("site", f"{variant}, website size", n, "MB", (sizes[variant]["site"] / MB,),
                        "every file except api/, .well-known/ and .nojekyll, in 10^6 bytes."))
    rows.append(Row("site", "size ratio, naive / ours", n, "x",
                    (sizes[NAIVE]["site"] / sizes[OURS]["site"],), "", size_target))
    for variant in (NAIVE, OURS):
        rows.append(Row("site", f"{variant}, whole output (API and website)", n, "MB",
                        (sizes[variant]["whole"] / MB,),
                        "a file hard-linked under two paths (raw files under api/ and .well-known/) counted once."))
    for variant in (NAIVE, OURS):
        rows.append(Row("site", f"{variant}, one skill page", n, "KB", (sizes[variant]["page"] / 1000,),
                        "mean size of skills/<name>/index.html over all skill pages, in 10^3 bytes."))
    return rows


def _ours_alone(ctx: BenchContext, n: int) -> list[Row]:
    out = api_output(ctx, n)
    repeat = min(ctx.repeat, ALONE_REPEAT)
    seconds: list[float] = []
    processes: list[Finished] = []
    size: dict[str, float] = {}
    for run in range(repeat):
        ctx.log(f"  site: {n:,} skills, ours, run {run + 1} of {repeat}")
        took, process = _write_site(ctx, n, out, naive=False)
        seconds.append(took)
        processes.append(process)
        size = size or _sizes(out, n)
        _clear_site(ctx, out)
    return [
        Row("site", f"{OURS}, `write_site`", n, "s", tuple(seconds),
            "as at 1,000 skills; the API build before it is not included (see build).", Target("<", 90)),
        Row("site", f"{OURS}, website size", n, "MB", (size["site"] / MB,), "", Target("<", 300)),
        Row("site", f"{OURS}, one skill page", n, "KB", (size["page"] / 1000,), ""),
        Row("site", f"{OURS}, peak RSS, all processes (sampled)", n, "MiB",
            tuple(p.tree_rss / MIB for p in processes),
            "the `write_site` process and its shard workers together: their PSS summed every 50 ms from /proc "
            "(a page shared by k processes counts 1/k in each).", Target("<", 2048)),
        Row("site", f"{OURS}, peak RSS, largest process", n, "MiB", tuple(p.max_rss / MIB for p in processes),
            "ru_maxrss of the process tree (RUSAGE_CHILDREN of a small wrapper)."),
    ]


def _write_site(ctx: BenchContext, n: int, out: Path, *, naive: bool) -> tuple[float, Finished]:
    command = [sys.executable, "-m", "bench.site_build", "--config", str(ctx.registry(n)), "--out", str(out)]
    settle()
    process = run_process(command + (["--naive"] if naive else []), cwd=Path(__file__).resolve().parent.parent)
    try:
        report = json.loads(process.output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BenchError(f"bench.site_build printed no result:\n{process.output[-2000:]}") from None
    if report["skills"] != n:
        raise BenchError(f"the website of {out} has {report['skills']} skill pages, expected {n}")
    return float(report["seconds"]), process


def _sizes(out: Path, n: int) -> dict[str, float]:
    pages = [p.stat().st_size for p in (out / "skills").glob("*/index.html")]
    if len(pages) != n:
        raise BenchError(f"{out}/skills holds {len(pages)} skill pages, expected {n}")
    return {"site": tree_bytes(out, skip=NOT_SITE), "whole": tree_bytes(out), "page": statistics.fmean(pages)}


def _clear_site(ctx: BenchContext, out: Path) -> None:
    """Move the website's files aside, leaving the API output as `skillreg build --no-site` wrote it."""
    for entry in list(out.iterdir()):
        if entry.name not in NOT_SITE:
            ctx.discard(entry)
