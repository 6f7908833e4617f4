"""``python -m bench.rebuild_git CORPUS --work DIR [--skills N] [--copies K]``: rebuilds of real skills in git.

The first N skill folders of CORPUS (a folder of skill folders, ``bench.real_corpus``'s output), K times over
with the copies renamed (``make_repository``), are committed to a new repository in DIR with the lean
``publish:`` settings and the agents profile, built cold with the website (``build --keep-going``), then
rebuilt: with nothing changed (three times), after one published skill's SKILL.md gained a line left
uncommitted, and after it was put back (``--again`` measures the rebuilds again on what an earlier run left).
The figure to read is CPU time of the whole process tree (git included): wall time on a shared machine is
noise. Nothing of the corpus is written outside DIR.
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


def make_repository(corpus: Path, repo: Path, count: int | None, copies: int = 1) -> int:
    """The first ``count`` skill folders of ``corpus`` committed in ``repo``, ``copies`` times; how many folders.

    The first copy goes to ``skills/`` as the corpus names them; copy K (2, 3, ...) to its own top folder
    ``copy-K/``, each folder and the ``name`` its SKILL.md gives renamed ``NAME-copyK``, so that every name stays
    unique: real skills, replicated."""
    folders = sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith("."))[:count]
    places = ["skills", *(f"copy-{k}" for k in range(2, copies + 1))]
    for number, place in enumerate(places, start=1):
        (repo / place).mkdir(parents=True)
        for folder in folders:
            if number == 1:
                shutil.copytree(folder, repo / place / folder.name, symlinks=True)
            else:
                _renamed_copy(folder, repo / place / f"{folder.name}-copy{number}", f"-copy{number}")
    publish = "".join(f"  {key}: {str(value).lower()}\n" for key, value in LEAN_PUBLISH.items())
    where = "skills_dir: skills\n" if copies == 1 else "skills:\n" + "".join(f"  - {p}\n" for p in places)
    (repo / "registry.yaml").write_text("title: Real skills\nbase_url: https://example.invalid/registry/\n"
                                        f"{where}profile: agents\npublish:\n{publish}", encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "real skills")
    return len(folders) * copies


_NAME = re.compile(rb"^(name:[ \t]*)([\"']?)([^\"'\r\n]*?)([\"']?[ \t]*\r?)$", re.MULTILINE)


def _renamed_copy(folder: Path, to: Path, suffix: str) -> None:
    """A copy of the skill ``folder`` at ``to``, the ``name`` its SKILL.md gives gaining ``suffix`` when it was the
    folder's name (a skill invalid as it is stays so)."""
    shutil.copytree(folder, to, symlinks=True)
    skill_md = to / "SKILL.md"
    if skill_md.is_symlink() or not skill_md.is_file():
        return
    text = skill_md.read_bytes()
    found = _NAME.search(text)
    if found is not None and found.group(3) == folder.name.encode():
        start, end = found.span(3)
        skill_md.write_bytes(text[:end] + suffix.encode() + text[end:])


_WRITTEN = re.compile(r"\(([0-9,]+) written")


def _row(label: str, runs: Sequence[Finished]) -> str:
    cpu = statistics.median(r.cpu_seconds for r in runs)
    wall = statistics.median(r.seconds for r in runs)
    rss = max(r.max_rss for r in runs) / 2**20
    written = ", ".join(sorted({m.group(1) if (m := _WRITTEN.search(r.output)) else "?" for r in runs}))
    return f"| {label} | {written} | {cpu:.2f} | {wall:.2f} | {rss:.0f} |"


def measure(corpus: Path, work: Path, count: int | None, copies: int = 1, again: bool = False) -> str:
    repo, out = work / "registry", work / "site"
    skills = sum(1 for _ in (repo / "registry.yaml").parent.glob("*/*/SKILL.md")) if again else \
        make_repository(corpus, repo, count, copies)
    env = {**os.environ, "SKILLREG_STATE_DIR": str(work / "state"), "SKILLREG_BUNDLE_CACHE": str(work / "cache")}
    build = [*skillreg_command(), "--config", str(repo / "registry.yaml"), "build", "--keep-going", "--out", str(out)]
    cold = None if again else run_process(build, env=env, timeout=14400)
    published = json.loads((out / "api/v1/index.json").read_bytes())["skills"]
    unchanged = [run_process(build, env=env, timeout=3600) for _ in range(3)]
    name = published[len(published) // 2]["name"]
    skill_md = next(path for path in sorted(repo.glob(f"*/{name}/SKILL.md")))
    before = skill_md.read_bytes()
    skill_md.write_bytes(before + b"\nOne more line, changed for the rebuild figure.\n")
    try:
        edited = run_process(build, env=env, timeout=3600)
    finally:
        skill_md.write_bytes(before)
    back = run_process(build, env=env, timeout=3600)
    replicated = f" (real skills, replicated: {copies} copies of each, renamed)" if copies > 1 else ""
    return "\n".join([
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {skills:,} skills in git{replicated}, "
        f"{len(published):,} published, load average {os.getloadavg()[0]:.1f} at the end",
        "", "| build | skills written | CPU s (whole tree) | wall s | peak RSS MB (largest process) |",
        "| --- | ---: | ---: | ---: | ---: |",
        *([_row("cold, with the website", [cold])] if cold is not None else []),
        _row("nothing changed (median of 3)", unchanged),
        _row("one SKILL.md edited, uncommitted", [edited]), _row("the edit put back", [back])])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rebuild_git", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a folder of skill folders (python -m bench.real_corpus)")
    parser.add_argument("--work", type=Path, required=True, help="an empty folder for the repository and output")
    parser.add_argument("--skills", type=int, default=None, help="the first N skill folders (default: all)")
    parser.add_argument("--copies", type=int, default=1,
                        help="commit K copies of those folders, renamed, each under its own top folder (real skills, "
                             "replicated: 4 copies of the 15,751-skill corpus make 63,004)")
    parser.add_argument("--again", action="store_true",
                        help="measure the rebuilds again on the repository and output an earlier run left in --work")
    args = parser.parse_args(argv)
    if args.again:
        if not (args.work / "site").is_dir():
            parser.error(f"{args.work}: no earlier run to build again")
    elif args.work.exists() and any(args.work.iterdir()):
        parser.error(f"{args.work}: not empty")
    print(measure(args.corpus, args.work, args.skills, args.copies, args.again))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
