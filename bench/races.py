"""``python -m bench.races installs|builds``: the concurrency reproductions of issue 12, as many rounds as asked.

``installs``: eight ``skillreg install NAME --registry DIR`` at once in one fresh project per round; a round is
good when every install exits 0 and ``skills-lock.json`` and ``.claude/skills/`` hold all eight skills.
``builds``: four ``skillreg build`` at once into one ``--out`` after each edit of a skill; a round is good when
all four exit 0 without a traceback and nothing of the builder's (``.out.*``) is left beside the output; at
the end the output must equal a clean build's. Both run in a temporary folder with their own home, cache and
state folders, on copies of this repository's skills.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .corpus import REPO

BUILD_SKILLS = ("csv-profiler", "secret-scanner", "changelog-from-git")
INSTALLS = 8
BUILDS = 4


def _env(work: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(work / "home"), "XDG_CACHE_HOME": str(work / "cache"),
            "XDG_STATE_HOME": str(work / "state"), "SKILLREG_STATE_DIR": str(work / "state"),
            "SKILLREG_CACHE_DIR": str(work / "cache" / "skillreg")}


def _registry(work: Path, names: Sequence[str]) -> Path:
    repo = work / "repo"
    (repo / "skills").mkdir(parents=True)
    shutil.copy(REPO / "registry.yaml", repo)
    for name in names:
        shutil.copytree(REPO / "skills" / name, repo / "skills" / name)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args], cwd=repo,
                       check=True, capture_output=True)
    return repo


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def installs(skillreg: str, rounds: int, work: Path) -> tuple[int, list[str]]:
    env = _env(work)
    site = work / "site"
    names = sorted(p.name for p in (REPO / "skills").iterdir() if (p / "SKILL.md").is_file())[:INSTALLS]
    subprocess.run([skillreg, "--config", str(REPO / "registry.yaml"), "build", "--no-site", "--out", str(site)],
                   env=env, check=True, capture_output=True)
    good, notes = 0, []
    for number in range(rounds):
        project = work / f"project-{number}"
        project.mkdir()
        procs = [subprocess.Popen([skillreg, "install", name, "--registry", str(site)], cwd=project, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in names]
        outcomes = [(p.wait(), p.communicate()[1]) for p in procs]
        lock = json.loads((project / "skills-lock.json").read_text(encoding="utf-8"))
        kept = sorted(lock.get("skills", {}))
        folders = [n for n in names if (project / ".claude" / "skills" / n / "SKILL.md").is_file()]
        if kept == names and folders == names and all(code == 0 and "Traceback" not in err for code, err in outcomes):
            good += 1
        else:
            notes.append(f"round {number}: {len(kept)} lock entries, {len(folders)} folders, "
                         f"exits {[code for code, _ in outcomes]}")
    return good, notes


def builds(skillreg: str, rounds: int, work: Path, site: bool) -> tuple[int, list[str]]:
    env = _env(work)
    repo = _registry(work, BUILD_SKILLS)
    command = [skillreg, "build", "--out", "out"] + ([] if site else ["--no-site"])
    subprocess.run(command, cwd=repo, env=env, check=True, capture_output=True)
    good, notes = 0, []
    for number in range(rounds):
        skill_md = repo / "skills" / BUILD_SKILLS[number % 2] / "SKILL.md"
        skill_md.write_text(skill_md.read_text(encoding="utf-8") + f"\nRound {number}.\n", encoding="utf-8")
        procs = [subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(BUILDS)]
        outcomes = [(p.wait(), p.communicate()[1]) for p in procs]
        deadline = time.monotonic() + 20  # replaced trees are deleted by a detached process
        while (left := [p.name for p in repo.iterdir() if p.name.startswith(".out.")]) and time.monotonic() < deadline:
            time.sleep(0.05)
        failed = [code for code, err in outcomes if code != 0 or "Traceback" in err]
        if not failed and not left:
            good += 1
        else:
            notes.append(f"round {number}: exits {[code for code, _ in outcomes]}, left beside the output: {left}")
    fresh = work / "fresh"
    subprocess.run([*command[:2], "--out", str(fresh), *command[4:]], cwd=repo, env=env, check=True,
                   capture_output=True)
    if _files(repo / "out") != _files(fresh):
        notes.append("the final output differs from a clean build of the same commit")
    return good, notes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.races", description=__doc__.split("\n\n")[0])
    parser.add_argument("race", choices=("installs", "builds"))
    parser.add_argument("--rounds", type=int, default=20, help="rounds (default: 20)")
    parser.add_argument("--skillreg", default=shutil.which("skillreg") or "skillreg",
                        help="the skillreg program to race (default: the one on PATH)")
    parser.add_argument("--site", action="store_true", help="builds: write the website too")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if shutil.which(args.skillreg) is None:
        parser.error(f"{args.skillreg}: not an executable")
    work = Path(tempfile.mkdtemp(prefix=f"skillreg-race-{args.race}-"))
    try:
        if args.race == "installs":
            good, notes = installs(args.skillreg, args.rounds, work)
            what = f"{INSTALLS} concurrent installs kept every lock entry and folder"
        else:
            good, notes = builds(args.skillreg, args.rounds, work, args.site)
            what = f"{BUILDS} concurrent builds into one output ended clean"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for note in notes:
        print(note)
    print(f"{good} of {args.rounds} rounds: {what}")
    return 0 if good == args.rounds and not notes else 1


if __name__ == "__main__":
    sys.exit(main())
