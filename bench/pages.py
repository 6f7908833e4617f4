"""The website's figures for ``python -m bench --scale N`` (issue 17): what skill pages weigh against their budget
(builder/site/budget.py), and the website's share of a one-skill rebuild.

The share is timed in its own process (``python -m bench.pages --config C --out OUT --skill NAME``) the way a
build runs it: the new index staged beside the output, then ``write_site`` asked for the pages one changed skill
touches, comparing against the output as it stands. Nothing in the output is changed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .harness import run_process


def page_figures(out: Path) -> dict[str, Any]:
    """Median and largest skill page, largest chrome and sections, and whether every page kept the budget."""
    from builder.site.budget import CHROME_BUDGET, SECTIONS_BUDGET, page_parts

    parts = [page_parts(p.read_bytes()) for p in sorted((out / "skills").glob("*/index.html"))]
    if not parts:
        return {}
    sections = sorted(p.sections for p in parts)
    return {
        "skill page median KB": statistics.median(p.total for p in parts) / 1024,
        "skill page largest KB": max(p.total for p in parts) / 1024,
        "skill page chrome largest KB": max(p.chrome for p in parts) / 1024,
        "skill page sections median KB": statistics.median(sections) / 1024,
        "skill page sections largest KB": sections[-1] / 1024,
        f"chrome budget {CHROME_BUDGET / 1024:.2f} KB held (1 yes, 0 no)": int(
            all(p.chrome <= CHROME_BUDGET for p in parts)),
        f"sections budget {SECTIONS_BUDGET / 1024:.0f} KB held by the median (1 yes, 0 no)": int(
            statistics.median(sections) <= SECTIONS_BUDGET),
    }


def site_rebuild_seconds(config: Path, out: Path, skill: str, env: dict[str, str]) -> float:
    """The website's share of a one-skill rebuild of ``out`` by this checkout."""
    finished = run_process([sys.executable, "-m", "bench.pages", "--config", str(config), "--out", str(out),
                            "--skill", skill], env=env, timeout=3600, cwd=Path(__file__).resolve().parent.parent)
    return float(json.loads(finished.output.strip().splitlines()[-1])["seconds"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pages")
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True, help="a `skillreg build` output, with its state")
    parser.add_argument("--skill", required=True, help="the skill taken as changed")
    args = parser.parse_args(argv)

    from builder.core.config import load_config
    from builder.core.search import SHARDS_INDEX_PATH
    from builder.core.urls import INDEX_PATH
    from builder.publish.transaction import output_place
    from builder.site.pages import write_site

    config = load_config(args.config)
    out = args.out.resolve()
    stage = Path(tempfile.mkdtemp(prefix=".pages-bench-", dir=out.parent))
    try:
        for rel in (INDEX_PATH, SHARDS_INDEX_PATH):
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / rel, stage / rel)
        started = time.perf_counter()
        result = write_site(config, stage, api_roots=(stage, out), previous=out, changed=[args.skill],
                            state=output_place(out).state)
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    json.dump({"seconds": seconds, "units": len(result.units), "written": result.written}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
