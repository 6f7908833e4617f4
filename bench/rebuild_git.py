"""``python -m bench.rebuild_git CORPUS --work DIR [--skills N]``: rebuilds of real skills kept in git.

The first N skill folders of CORPUS (a folder of skill folders, ``bench.real_corpus``'s output) are committed to
a new repository in DIR with the lean ``publish:`` settings and the agents profile, built cold with the website
(``build --keep-going``), then rebuilt: with nothing changed (three times), after one published skill's SKILL.md
gained a line left uncommitted, and after it was put back. The figure to read is CPU time of the whole process
tree (git included): wall time on a shared machine is noise. Nothing of the corpus is written outside DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from .harness import Finished, run_process, skillreg_command
from .scale import LEAN_PUBLISH

_GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid", "GIT_AUTHOR_DATE": "2026-12-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2026-12-01T00:00:00Z"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, env={**os.environ, **_GIT_ENV}, capture_output=True)


def make_repository(corpus: Path, repo: Path, count: int | None) -> int:
    """The first ``count`` skill folders of ``corpus`` committed in ``repo``; how many."""
    folders = sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith("."))[:count]
    (repo / "skills").mkdir(parents=True)
    for folder in folders:
        shutil.copytree(folder, repo / "skills" / folder.name, symlinks=True)
    publish = "".join(f"  {key}: {str(value).lower()}\n" for key, value in LEAN_PUBLISH.items())
    (repo / "registry.yaml").write_text("title: Real skills\nbase_url: https://example.invalid/registry/\n"
                                        f"skills_dir: skills\nprofile: agents\npublish:\n{publish}",
                                        encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "real skills")
    return len(folders)


_WRITTEN = re.compile(r"\(([0-9,]+) written")


def _row(label: str, runs: Sequence[Finished]) -> str:
    cpu = statistics.median(r.cpu_seconds for r in runs)
    wall = statistics.median(r.seconds for r in runs)
    rss = max(r.max_rss for r in runs) / 2**20
    written = ", ".join(sorted({m.group(1) if (m := _WRITTEN.search(r.output)) else "?" for r in runs}))
    return f"| {label} | {written} | {cpu:.2f} | {wall:.2f} | {rss:.0f} |"


def measure(corpus: Path, work: Path, count: int | None) -> str:
    repo, out = work / "registry", work / "site"
    skills = make_repository(corpus, repo, count)
    env = {**os.environ, "SKILLREG_STATE_DIR": str(work / "state"), "SKILLREG_BUNDLE_CACHE": str(work / "cache")}
    build = [*skillreg_command(), "--config", str(repo / "registry.yaml"), "build", "--keep-going", "--out", str(out)]
    cold = run_process(build, env=env, timeout=7200)
    published = json.loads((out / "api/v1/index.json").read_bytes())["skills"]
    unchanged = [run_process(build, env=env, timeout=3600) for _ in range(3)]
    skill_md = repo / "skills" / published[len(published) // 2]["name"] / "SKILL.md"
    before = skill_md.read_bytes()
    skill_md.write_bytes(before + b"\nOne more line, changed for the rebuild figure.\n")
    try:
        edited = run_process(build, env=env, timeout=3600)
    finally:
        skill_md.write_bytes(before)
    back = run_process(build, env=env, timeout=3600)
    return "\n".join([
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {skills:,} skills in git, {len(published):,} "
        f"published, load average {os.getloadavg()[0]:.1f} at the end",
        "", "| build | skills written | CPU s (whole tree) | wall s | peak RSS MB (largest process) |",
        "| --- | ---: | ---: | ---: | ---: |",
        _row("cold, with the website", [cold]), _row("nothing changed (median of 3)", unchanged),
        _row("one SKILL.md edited, uncommitted", [edited]), _row("the edit put back", [back])])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rebuild_git", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a folder of skill folders (python -m bench.real_corpus)")
    parser.add_argument("--work", type=Path, required=True, help="an empty folder for the repository and output")
    parser.add_argument("--skills", type=int, default=None, help="the first N skill folders (default: all)")
    args = parser.parse_args(argv)
    if args.work.exists() and any(args.work.iterdir()):
        parser.error(f"{args.work}: not empty")
    print(measure(args.corpus, args.work, args.skills))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
