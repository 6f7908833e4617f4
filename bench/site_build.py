"""``python -m bench.site_build --config REGISTRY --out OUT [--naive]``: write the website into an existing API
output and print, as JSON, how long ``write_site`` took.

Run as a subprocess by the site measurement, so the peak memory read for the process is the website's alone
and the naive and our configurations are timed the same way (imports excluded).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.site_build")
    parser.add_argument("--config", type=Path, required=True, help="registry.yaml of the built registry")
    parser.add_argument("--out", type=Path, required=True, help="a `skillreg build --no-site` output")
    parser.add_argument("--naive", action="store_true", help="the naive mkdocs-material configuration")
    args = parser.parse_args(argv)

    from builder.core.config import load_config
    from builder.site.pages import write_site

    from .naive_site import write_naive_site

    config = load_config(args.config)
    started = time.perf_counter()
    result = write_naive_site(config, args.out) if args.naive else write_site(config, args.out)
    seconds = time.perf_counter() - started
    json.dump({"seconds": seconds, "pages": result.pages, "skills": result.skills,
               "warnings": len(result.warnings)}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
