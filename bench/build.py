"""build: ``skillreg build --no-site`` (JSON API and bundles) cold, after one changed skill and with nothing changed.

Every build runs as its own subprocess, so its wall-clock time includes interpreter start-up and its peak memory
can be read from the kernel. Outputs go to a folder under the bench cache (this machine's ext4 disk, where each
file created costs a fraction of a millisecond) and, for cold builds, also to tmpfs (/dev/shm), which shows how
much of a cold build is the disk. The last cold output on disk is kept for the other measurements in the run
(``api_output``), so nothing is built twice.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from builder.core.urls import INDEX_PATH, detail_path

from .harness import BenchContext, BenchError, Finished, Row, Target, remove_tree, run_process, settle, skillreg_command

FULL_SIZES = (1_000, 10_000)
QUICK_SIZES = (200,)
LARGE = 10_000
LARGE_REPEAT = 3  # runs per figure at 10,000 skills, which keeps the full suite near 20 minutes
TMPFS = Path("/dev/shm")
MIB = 1024 * 1024

COLD_DISK = "cold, output on disk"
COLD_TMPFS = "cold, output on tmpfs (/dev/shm)"
RSS_LARGEST = "peak RSS of a cold build, largest process"
RSS_TREE = "peak RSS of a cold build, all processes (sampled)"
ONE_CHANGED = "rebuild after one changed skill (incremental)"
NO_CHANGE = "rebuild, nothing changed"
SUBJECTS = (COLD_DISK, COLD_TMPFS, RSS_LARGEST, RSS_TREE, ONE_CHANGED, NO_CHANGE)


def build_command(ctx: BenchContext, n: int, out: Path) -> list[str]:
    return skillreg_command() + ["--config", str(ctx.registry(n)), "build", "--no-site", "--out", str(out)]


def api_output(ctx: BenchContext, n: int) -> Path:
    """A ``skillreg build --no-site`` output of the corpus of ``n`` skills, made at most once per run."""
    out = ctx.api_builds.get(n)
    if out is not None and (out / INDEX_PATH).is_file():
        return out
    out = ctx.out_dir / f"api-n{n}"
    ctx.discard(out)
    ctx.log(f"  building the API of {n:,} skills for this measurement")
    run_process(build_command(ctx, n, out))
    ctx.api_builds[n] = out
    return out


def build_bench(ctx: BenchContext) -> list[Row]:
    rows = [row for n in (QUICK_SIZES if ctx.quick else FULL_SIZES) for row in _measure(ctx, n)]
    return sorted(rows, key=lambda row: (SUBJECTS.index(row.subject), row.n))


def _measure(ctx: BenchContext, n: int) -> list[Row]:
    repeat = min(ctx.repeat, LARGE_REPEAT) if n >= LARGE else ctx.repeat
    corpus = ctx.corpus(n)
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    cold_disk: list[Finished] = []
    cold_tmpfs: list[Finished] = []
    kept: Path | None = None
    tmpfs_root = Path(tempfile.mkdtemp(prefix="skillreg-bench-", dir=TMPFS)) if TMPFS.is_dir() else None
    try:
        for run in range(repeat):
            ctx.log(f"  build: {n:,} skills, cold run {run + 1} of {repeat}")
            out = ctx.out_dir / f"cold-n{n}-run{run + 1}"
            ctx.discard(out)
            settle()
            cold_disk.append(run_process(build_command(ctx, n, out)))
            if kept is not None:
                ctx.discard(kept)
            kept = out
            if tmpfs_root is not None:
                cold_tmpfs.append(run_process(build_command(ctx, n, tmpfs_root / "out")))
                remove_tree(tmpfs_root / "out")
    finally:
        if tmpfs_root is not None:
            remove_tree(tmpfs_root)
    assert kept is not None
    ctx.api_builds[n] = kept

    # One skill in the middle gets a line appended per run, as an edit in a pull request would.
    skill_md = sorted(p for p in corpus.iterdir() if p.is_dir())[n // 2] / "SKILL.md"
    original = skill_md.read_bytes()
    untouched = min(p.name for p in corpus.iterdir() if p.is_dir())
    one_changed: list[Finished] = []
    ctx.log(f"  build: {n:,} skills, {repeat} rebuilds after one changed skill, {repeat} with no change")
    try:
        for run in range(repeat):
            skill_md.write_bytes(original + f"\nEdited for rebuild {run + 1}.\n".encode())
            settle()
            one_changed.append(_incremental(ctx, n, kept, skill_md.parent.name, untouched))
    finally:
        skill_md.write_bytes(original)
    run_process(build_command(ctx, n, kept))  # untimed: the kept output matches the corpus again
    no_change = []
    for _ in range(repeat):
        settle()
        no_change.append(run_process(build_command(ctx, n, kept)))

    # Targets apply at the sizes the issues name, not to the small corpora of --quick.
    target = Target("<", 20) if n >= LARGE else None
    rebuild_target = Target("<", 1) if n in FULL_SIZES else None
    rows = [
        Row("build", COLD_DISK, n, "s", _seconds(cold_disk),
            "`skillreg build --no-site` into an empty folder on the ext4 disk, as a subprocess (wall clock, "
            "interpreter start-up included); validation, API documents, zip and JSON bundles, discovery "
            "indexes.", target),
        Row("build", RSS_LARGEST, n, "MiB", tuple(f.max_rss / MIB for f in cold_disk),
            "ru_maxrss of the build's process tree (RUSAGE_CHILDREN of a small wrapper): the largest single "
            "process, main or worker."),
        Row("build", RSS_TREE, n, "MiB", tuple(f.tree_rss / MIB for f in cold_disk),
            "the build and its worker processes together: their PSS summed every 50 ms from /proc (a page the "
            "forked workers share with the main process counts 1/k in each of the k processes)."),
        Row("build", ONE_CHANGED, n, "s", _seconds(one_changed),
            "a line appended to one SKILL.md, then `skillreg build --no-site` into the same folder: that skill's "
            "files and the indexes are rewritten, the rest reused (checked on the output).",
            rebuild_target),
        Row("build", NO_CHANGE, n, "s", _seconds(no_change),
            "`skillreg build --no-site` again with nothing changed: signatures of every skill folder are compared "
            "with the last build's and the indexes rewritten."),
    ]
    if cold_tmpfs:
        rows.append(Row("build", COLD_TMPFS, n, "s", _seconds(cold_tmpfs),
                        "as `cold, output on disk`, but the output folder is on tmpfs (/dev/shm), memory-backed, "
                        "where creating a file costs almost nothing: compare with the disk row to see what the disk "
                        "adds (~15 files per skill).", target))
    return rows


def _incremental(ctx: BenchContext, n: int, out: Path, changed: str, untouched: str) -> Finished:
    """A timed rebuild, checked to have rewritten the changed skill and left an unchanged one's files alone."""
    other = out / detail_path(untouched)
    before = (os.stat(out / detail_path(changed)).st_ino, os.stat(other).st_ino)
    done = run_process(build_command(ctx, n, out))
    after = (os.stat(out / detail_path(changed)).st_ino, os.stat(other).st_ino)
    if after[0] == before[0] or after[1] != before[1]:
        raise BenchError(f"the rebuild of {out} after changing {changed} did not take the incremental path")
    return done


def _seconds(runs: list[Finished]) -> tuple[float, ...]:
    return tuple(f.seconds for f in runs)
