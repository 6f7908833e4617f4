"""``python -m bench.compare OLD NEW``: is a change slower? Two ``skillreg`` programs, interleaved, on one corpus.

OLD and NEW are ``skillreg`` executables (for example ``.venv/bin/skillreg`` of a clone checked out at the
commit before a change, and of the change itself). Each round runs ``skillreg validate --profile spec`` and a
cold ``skillreg build --no-site`` with each program, alternating which goes first, and the medians of wall
time and CPU time (the process and its workers) are printed side by side with the difference. Build outputs
go to ``--out-dir`` (default: tmpfs where there is one, so the disk's noise stays out of the comparison).
"""

from __future__ import annotations

import argparse
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
from .harness import default_cache_dir

KINDS = ("validate", "build")
TMPFS = Path("/dev/shm")


def _command(program: str, kind: str, corpus: Path, out: Path) -> list[str]:
    config = ["--config", str(corpus / "registry.yaml")]
    if kind == "validate":
        return [program, *config, "validate", "--profile", "spec", str(corpus / "skills")]
    return [program, *config, "build", "--no-site", "--out", str(out)]


def run_once(program: str, kind: str, corpus: Path, out_dir: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one cold run."""
    scratch = Path(tempfile.mkdtemp(prefix="compare-", dir=out_dir))
    env = {**os.environ, "SKILLREG_STATE_DIR": str(scratch / "state"), "XDG_STATE_HOME": str(scratch / "state")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        done = subprocess.run(_command(program, kind, corpus, scratch / "site"), capture_output=True, text=True,
                              env=env)
        wall = time.perf_counter() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(corpus / ".skillreg-cache", ignore_errors=True)  # where older builders kept a manifest
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{program} {kind} exited {done.returncode}:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(old: str, new: str, corpus: Path, rounds: int, kinds: Sequence[str], out_dir: Path) -> list[str]:
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {(p, k): [] for p in ("old", "new") for k in kinds}
    programs = [("old", old), ("new", new)]
    for number in range(rounds):
        order = programs if number % 2 == 0 else programs[::-1]
        for kind in kinds:
            for label, program in order:
                runs[(label, kind)].append(run_once(program, kind, corpus, out_dir))
    lines = []
    for kind in kinds:
        figures = []
        for index, what in ((0, "wall"), (1, "CPU")):
            a = statistics.median(r[index] for r in runs[("old", kind)])
            b = statistics.median(r[index] for r in runs[("new", kind)])
            figures.append(f"{what} {a:.3f} s -> {b:.3f} s ({(b / a - 1) * 100:+.1f}%)")
        lines.append(f"{kind}: median of {rounds} rounds, " + "; ".join(figures))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the skillreg executable before the change")
    parser.add_argument("new", help="the skillreg executable with the change")
    parser.add_argument("-n", type=int, default=1_000, help="skills in the generated corpus (default: 1000)")
    parser.add_argument("--rounds", type=int, default=15, help="runs of each program per measurement (default: 15)")
    parser.add_argument("--only", choices=KINDS, action="append", help="measure only this (repeatable)")
    parser.add_argument("--shape", choices=SHAPES, default="synthetic", help="corpus shape (default: synthetic)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="where generated corpora are kept")
    parser.add_argument("--out-dir", type=Path, default=None, help="where build outputs go (default: tmpfs)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.n < 1:
        parser.error("-n and --rounds must be at least 1")
    for program in (args.old, args.new):
        if shutil.which(program) is None:
            parser.error(f"{program}: not an executable")
    corpus = cached_corpus(args.cache_dir or default_cache_dir(), args.n, shape=args.shape).parent
    out_dir = args.out_dir or (TMPFS if TMPFS.is_dir() and os.access(TMPFS, os.W_OK) else Path(tempfile.gettempdir()))
    for line in compare(args.old, args.new, corpus, args.rounds, args.only or KINDS, out_dir):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
