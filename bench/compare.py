"""``python -m bench.compare OLD NEW``: is a change slower? Two ``skillreg`` programs, interleaved, on one corpus.

OLD and NEW are ``skillreg`` executables (for example ``.venv/bin/skillreg`` of a clone checked out at the
commit before a change, and of the change itself). Each round runs, with each program, alternating which goes
first: ``validate`` (``skillreg validate --profile spec``) and ``build`` (a cold ``skillreg build --no-site``) of
a generated corpus of ``-n`` skills outside git, and ``site`` (a cold ``skillreg build`` with the website) of the
corpus of ``--site-n`` skills in a git repository where every skill was changed once (two commits), so the
build publishes two versions of each from history. The medians of wall time and CPU time (the process and its
workers) are printed side by side with the difference. Build outputs, state and bundle caches go to
``--out-dir`` (default: tmpfs where there is one, so the disk's noise stays out of the comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .corpus import SHAPES, cached_corpus
from .harness import BenchContext, default_cache_dir
from .versions import history_repo

KINDS = ("validate", "build", "site")
SITE_N = 200  # skills the site kind builds by default: a cold site build of 1,000 takes over a minute here
SITE_VERSIONS = 2  # the site kind's history: the corpus, then one commit changing every skill
TMPFS = Path("/dev/shm")


def _command(program: str, kind: str, registry: Path, out: Path) -> list[str]:
    config = ["--config", str(registry / "registry.yaml")]
    if kind == "validate":
        return [program, *config, "validate", "--profile", "spec", str(registry / "skills")]
    if kind == "site":
        return [program, *config, "build", "--out", str(out)]
    return [program, *config, "build", "--no-site", "--out", str(out)]


def _check_output(kind: str, registry: Path, out: Path) -> str | None:
    """What is wrong with a build's output for the measurement to count, or None: the site kind must have
    written the website and every version of one skill from history (a sample, read after the timer stopped)."""
    if kind != "site":
        return None
    if not (out / "index.html").is_file():
        return f"no website in {out}"
    first = min(p.name for p in (registry / "skills").iterdir() if p.is_dir())
    published = json.loads((out / "api/v1/skills" / first / "versions.json").read_text(encoding="utf-8"))
    if len(published["versions"]) != SITE_VERSIONS:
        return f"{first} has {len(published['versions'])} published versions, not {SITE_VERSIONS}"
    return None


def run_once(program: str, kind: str, registry: Path, out_dir: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one cold run: fresh state, output and
    bundle cache in a scratch folder that is removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="compare-", dir=out_dir))
    env = {**os.environ, "SKILLREG_STATE_DIR": str(scratch / "state"), "XDG_STATE_HOME": str(scratch / "state"),
           "SKILLREG_BUNDLE_CACHE": str(scratch / "bundles")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        done = subprocess.run(_command(program, kind, registry, scratch / "site"), capture_output=True, text=True,
                              env=env)
        wall = time.perf_counter() - started
        wrong = _check_output(kind, registry, scratch / "site") if done.returncode == 0 else None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(registry / ".skillreg-cache", ignore_errors=True)  # where older builders kept a manifest
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{program} {kind} exited {done.returncode}:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    if wrong:
        raise SystemExit(f"{program} {kind}: {wrong}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(old: str, new: str, registries: dict[str, Path], rounds: int, out_dir: Path) -> list[str]:
    """One line per kind of ``registries`` (kind -> the registry folder it runs on), in that order."""
    kinds = list(registries)
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {(p, k): [] for p in ("old", "new") for k in kinds}
    programs = [("old", old), ("new", new)]
    for number in range(rounds):
        order = programs if number % 2 == 0 else programs[::-1]
        for kind in kinds:
            for label, program in order:
                runs[(label, kind)].append(run_once(program, kind, registries[kind], out_dir))
    lines = []
    for kind in kinds:
        figures = []
        for index, what in ((0, "wall"), (1, "CPU")):
            a = statistics.median(r[index] for r in runs[("old", kind)])
            b = statistics.median(r[index] for r in runs[("new", kind)])
            figures.append(f"{what} {a:.3f} s -> {b:.3f} s ({(b / a - 1) * 100:+.1f}%)")
        lines.append(f"{kind}: median of {rounds} rounds, " + "; ".join(figures))
    return lines


def registry_for(kind: str, cache_dir: Path, n: int, shape: str) -> Path:
    """The folder holding registry.yaml and skills/ that ``kind`` runs on, made once per (n, shape) and cached:
    the generated corpus, or for the site kind that corpus in a git repository with two versions of each skill."""
    if kind == "site":
        ctx = BenchContext(cache_dir=cache_dir, shape=shape)
        return history_repo(ctx, n, SITE_VERSIONS, per_skill=False)
    return cached_corpus(cache_dir, n, shape=shape).parent


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the skillreg executable before the change")
    parser.add_argument("new", help="the skillreg executable with the change")
    parser.add_argument("-n", type=int, default=1_000, help="skills in the generated corpus (default: 1000)")
    parser.add_argument("--site-n", type=int, default=SITE_N,
                        help=f"skills in the git repository the site kind builds (default: {SITE_N})")
    parser.add_argument("--rounds", type=int, default=15, help="runs of each program per measurement (default: 15)")
    parser.add_argument("--only", choices=KINDS, action="append", help="measure only this (repeatable)")
    parser.add_argument("--shape", choices=SHAPES, default="synthetic", help="corpus shape (default: synthetic)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="where generated corpora are kept")
    parser.add_argument("--out-dir", type=Path, default=None, help="where build outputs go (default: tmpfs)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.n < 1 or args.site_n < 1:
        parser.error("-n, --site-n and --rounds must be at least 1")
    for program in (args.old, args.new):
        if shutil.which(program) is None:
            parser.error(f"{program}: not an executable")
    cache_dir = args.cache_dir or default_cache_dir()
    kinds = [kind for kind in KINDS if kind in (args.only or KINDS)]
    registries = {kind: registry_for(kind, cache_dir, args.site_n if kind == "site" else args.n, args.shape)
                  for kind in kinds}
    out_dir = args.out_dir or (TMPFS if TMPFS.is_dir() and os.access(TMPFS, os.W_OK) else Path(tempfile.gettempdir()))
    for line in compare(args.old, args.new, registries, args.rounds, out_dir):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
