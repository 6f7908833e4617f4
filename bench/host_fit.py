"""``python -m bench.host_fit CORPUS [--skills N] [--build WORK]``: the output size the build projects to choose
its ``publish:`` settings (``builder.publish.host_fit``), what the projection costs, and, with ``--build``, the
sizes the build really writes for the first N skills with the default settings and with the lean ones.

CORPUS is a folder of skill folders (``bench.real_corpus``'s output). The projection is timed in CPU seconds of
this process; the sizes count every path (a hard-linked copy twice, as Pages does).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from builder.core.config import LEAN_PUBLISH, PUBLISH_COPIES, Publish
from builder.publish.host_fit import folder_bytes, project

from .harness import skillreg_command
from .scale import output_sizes

DEFAULTS = {key: getattr(Publish(), key) for key in PUBLISH_COPIES}


def projection(folders: list[Path]) -> dict[str, float]:
    """The projected bytes with the default and the lean settings, and the CPU seconds reading the sizes took."""
    start = time.process_time()
    sizes = [folder_bytes(folder) for folder in folders]
    seconds = time.process_time() - start
    return {"skills": len(folders), "file bytes": sum(sizes), "projection CPU seconds": seconds,
            "projected default bytes": project(Publish(), sizes),
            "projected lean bytes": project(Publish(**LEAN_PUBLISH), sizes)}


def built_sizes(folders: list[Path], work: Path) -> dict[str, float]:
    """The bytes the build writes for ``folders`` with the default settings and with the lean ones, each written
    in registry.yaml (so the build chooses nothing), the website included, under the agents profile."""
    (work / "skills").mkdir(parents=True)
    for folder in folders:
        shutil.copytree(folder, work / "skills" / folder.name, copy_function=os.link, symlinks=True)
    figures: dict[str, float] = {}
    for label, settings in (("default", DEFAULTS), ("lean", LEAN_PUBLISH)):
        config = {"title": "host fit", "skills_dir": "skills", "profile": "agents", "publish": settings}
        (work / "registry.yaml").write_text(json.dumps(config), encoding="utf-8")
        out = work / f"site-{label}"
        subprocess.run([*skillreg_command(), "build", "--keep-going", "--out", str(out)], cwd=work, check=True,
                       capture_output=True)
        sizes, _ = output_sizes(out)
        published = json.loads((out / "api/v1/index.json").read_bytes())["count"]
        figures[f"built {label} bytes"] = sum(sizes.values())
        figures[f"published skills ({label})"] = published
        figures.update({f"built {label}, {part}, bytes a published skill": size / max(published, 1)
                        for part, size in sizes.items() if size})
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.host_fit", description=__doc__)
    parser.add_argument("corpus", type=Path, help="a folder of skill folders")
    parser.add_argument("--skills", type=int, default=None, metavar="N", help="the first N by name (default: all)")
    parser.add_argument("--build", type=Path, default=None, metavar="WORK",
                        help="also build the first N into an empty folder WORK and measure the output")
    args = parser.parse_args()
    folders = sorted(p for p in args.corpus.iterdir() if p.is_dir() and not p.name.startswith("."))[:args.skills]
    figures = projection(folders)
    if args.build is not None:
        args.build.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="host-fit-", dir=args.build))
        try:
            figures.update(built_sizes(folders, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    for key, value in figures.items():
        print(f"{key}: {value:,.2f}" if isinstance(value, float) else f"{key}: {value:,}")


if __name__ == "__main__":
    main()
