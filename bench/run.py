"""``python -m bench``: run the registered measurements and print one table (and write the same figures as JSON).

A measurement is a function ``name_bench(ctx: BenchContext) -> list[Row]`` in its own module, added to
``MEASUREMENTS``; its ``--only`` name is the function name without ``_bench``. It takes its corpus from
``ctx.corpus(n)`` (shared and cached), repeats each timing ``ctx.repeat`` times and, with ``ctx.quick``, keeps
to a few seconds. They run in the order listed: sizes, site and client read the build measurement's outputs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .build import build_bench
from .client import client_bench
from .corpus import SHAPES
from .harness import (
    BenchContext,
    BenchError,
    Row,
    default_cache_dir,
    machine_info,
    now,
    remove_tree,
    render_markdown,
    report_json,
    write_json,
    write_text,
)
from .real_corpus import describe, prepared_corpus
from .site import site_bench
from .sizes import sizes_bench
from .trust import trust_bench
from .validate import validate_bench
from .versions import versions_bench

Measurement = Callable[[BenchContext], list[Row]]

MEASUREMENTS: list[Measurement] = [validate_bench, build_bench, sizes_bench, site_bench, client_bench, versions_bench,
                                 trust_bench]

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "latest.json"


def measurement_name(measurement: Measurement) -> str:
    return measurement.__name__.removesuffix("_bench")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    names = [measurement_name(m) for m in MEASUREMENTS]
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run the benchmarks and print one "
                                     "Markdown table; the same figures go to a JSON file.")
    parser.add_argument("--quick", action="store_true",
                        help="small corpora and 3 runs; the whole suite finishes in under two minutes "
                             "(the full suite takes about 20 minutes)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure (default: 5, quick: 3)")
    parser.add_argument("--only", choices=names, action="append", metavar="NAME",
                        help=f"run only this measurement (repeatable): {', '.join(names)}")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH",
                        help="where to write the results as JSON (default: bench/results/latest.json)")
    parser.add_argument("--markdown", type=Path, default=None, metavar="PATH",
                        help="also write the table to this file (for the README)")
    parser.add_argument("--cache-dir", type=Path, default=None, metavar="DIR",
                        help="where generated corpora are kept between runs (default: $SKILLREG_BENCH_CACHE "
                             "or <tmp>/skillreg-bench)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default: 0)")
    parser.add_argument("--shape", choices=SHAPES, default=None,
                        help="generated corpus: synthetic (default; the corpus of earlier figures) or real "
                             "(sizes, files, links and code blocks of public skills, measured in issues 14 and 17)")
    parser.add_argument("--skills", type=int, default=None, metavar="N",
                        help="corpus size for validate (default: 1,000, quick: 100), e.g. 60000 for issue 14's "
                             "whole-registry figure")
    parser.add_argument("--scale", type=int, default=None, metavar="N",
                        help="instead of the suite: build N real-shaped skills cold with the website and print "
                             "sizes, build time and RSS, rebuild time, search transfer and CLI search times "
                             "(bench/scale.py; --shape defaults to real here)")
    parser.add_argument("--corpus", type=Path, default=None, metavar="DIR",
                        help="measure on the real skills found under DIR (folders holding a SKILL.md, as in a "
                             "public repository) instead of generated ones: copied once into the cache folder, "
                             "each named for its skill with its frontmatter name set to match, duplicate names "
                             "renamed <name>-<n> (bench/real_corpus.py); --skills and --scale take the first N")
    parser.add_argument("--baseline", default=None, metavar="SKILLREG",
                        help="with --scale: also measure this older skillreg program on the same corpus (its "
                             "figures are kept in the cache folder and reused, with the time they were measured)")
    parser.add_argument("--fresh-baseline", action="store_true",
                        help="with --baseline: measure it again rather than reuse its kept figures")
    parser.add_argument("--publish", choices=("lean", "default"), default=None,
                        help="with --scale: build this checkout with registry.yaml's publish: settings lean (raw "
                             "files SKILL.md links to, no JSON bundles, no .well-known/skills; the default) or "
                             "default (every copy); the baseline always gets the corpus's own registry.yaml")
    parser.add_argument("--no-site", action="store_true",
                        help="with --only trust: build its output without the website (signing reads only the "
                             "API; the cold build's figure is then the API's alone)")
    args = parser.parse_args(argv)
    if args.publish is not None and args.scale is None:
        parser.error("--publish needs --scale")
    if args.baseline is not None and args.scale is None:
        parser.error("--baseline needs --scale")
    if args.baseline is not None and shutil.which(args.baseline) is None:
        parser.error(f"{args.baseline}: not an executable")
    if args.corpus is not None and not args.corpus.is_dir():
        parser.error(f"--corpus {args.corpus}: not a folder")
    if args.corpus is not None and args.shape is not None:
        parser.error("--corpus and --shape are two corpora: give one")
    if args.scale is not None and args.scale < 1:
        parser.error("--scale must be at least 1")
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.skills is not None and args.skills < 2:
        parser.error("--skills must be at least 2")
    return args


def real_corpus(args: argparse.Namespace, cache_dir: Path) -> Path | None:
    """``--corpus``'s skills prepared in the cache (None without it), what they are said on standard error."""
    if args.corpus is None:
        return None
    made = prepared_corpus(cache_dir, [args.corpus])
    print(f"corpus: {describe(made, [args.corpus])}: {made.skills}", file=sys.stderr, flush=True)
    if made.count < 2:
        raise SystemExit(f"--corpus {args.corpus}: {made.count} skill folders found (a SKILL.md each); need 2")
    return made.skills


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    cache_dir = args.cache_dir or default_cache_dir()
    real = real_corpus(args, cache_dir)
    if args.scale is not None:
        from .scale import scale_main

        sys.stdout.write(scale_main(args.scale, args.baseline, cache_dir, args.shape or "real", args.seed,
                                    fresh_baseline=args.fresh_baseline, publish=args.publish or "lean",
                                    real=real))
        return 0
    args.shape = "public" if real is not None else args.shape or "synthetic"
    repeat = args.repeat or (3 if args.quick else 5)
    ctx = BenchContext(cache_dir=cache_dir, quick=args.quick, repeat=repeat, seed=args.seed, shape=args.shape,
                       skills=args.skills, real=real, site=not args.no_site)
    # The builder keeps a manifest per output folder in its state folder (23 MB at 10,000 skills): this run gets
    # one of its own, emptied first, so those of earlier runs' outputs pile up neither there nor in the user's.
    remove_tree(ctx.cache_dir / "build-state")
    os.environ["SKILLREG_STATE_DIR"] = str(ctx.cache_dir / "build-state")
    chosen = [m for m in MEASUREMENTS if not args.only or measurement_name(m) in args.only]
    info = machine_info()
    date = now()
    rows: list[Row] = []
    ctx.clear_leftovers()
    try:
        for measurement in chosen:
            name = measurement_name(measurement)
            ctx.log(f"{name} ...")
            started = time.perf_counter()
            try:
                rows.extend(measurement(ctx))
            except BenchError as exc:
                print(f"Error in {name}: {exc}", file=sys.stderr)
                return 1
            ctx.log(f"{name} done in {time.perf_counter() - started:.1f} s")
    finally:
        ctx.delete_outputs()
    names = [measurement_name(m) for m in chosen]
    table = render_markdown(rows, info, date, repeat, args.quick, args.shape)
    sys.stdout.write(table)
    if args.markdown is not None:
        write_text(args.markdown, table)
        ctx.log(f"wrote {args.markdown}")
    write_json(args.json, report_json(rows, info, date, repeat, args.quick, names, args.shape, ctx.measured_shapes))
    ctx.log(f"wrote {args.json}")
    return 0
