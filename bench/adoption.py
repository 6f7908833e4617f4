"""``python -m bench.adoption REPO...``: how much of a skills repository ``skillreg init && skillreg build``
publishes with no hand edit.

Each REPO is a git checkout. It is copied (with its history) into a temporary folder, so the checkout itself is
never changed; ``skillreg init`` then ``skillreg build`` run in the copy as a maintainer would run them, with
standard input closed and the user folders pointed into the temporary folder. Per repository it prints:

- **agents load**: the skills an agent would load, counted by a plain walk that shares no code with skillreg's
  discovery: a ``SKILL.md`` outside ``.git`` and ``node_modules``, not inside another skill's folder, whose
  frontmatter is a YAML mapping with a non-empty ``description``;
- **found**: the skills ``init`` found; **published**: the skills in the build's ``api/v1/index.json``, and the
  share of the skills agents load among them (matched by folder: each detail document's ``source_path``);
- **left out**: the skills agents load that were not published, by reason, most skills first: the rules of their
  errors under ``skillreg validate --format json`` (which judges skills as the build does), "not found" when
  skillreg's discovery does not find it, "build stopped" when it has no error but the build failed as a whole
  (then the number ``skillreg build --keep-going`` would publish is given too, to show what stopped it);
- whether any command printed a traceback.

The last lines compare the totals with the adoption goal: at least 95% overall of the skills agents load are
published, at least 60% in each repository, and no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from .harness import machine_info, now, skillreg_command

SKIPPED = {".git", "node_modules"}
FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*\r?$", re.DOTALL | re.MULTILINE)
GOAL_OVERALL, GOAL_EACH = 95.0, 60.0
TOP_REASONS = 4
TIMEOUT = 3600


# --------------------------------------------------------------------------------------------- the plain walk

def agent_skills(root: Path) -> tuple[list[str], list[str]]:
    """The folders (relative, POSIX) holding a SKILL.md an agent loads, and those holding one it would not (no
    frontmatter mapping with a description). A folder holding a SKILL.md is a skill: nothing below it is
    counted. Folder links are not followed, and a SKILL.md that is a link to another counted SKILL.md is that
    skill again, counted once, in the folder whose SKILL.md is the file itself."""
    folders: list[tuple[str, str, bool]] = []  # (folder, real path of its SKILL.md, SKILL.md is a link)
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        if "SKILL.md" not in files:
            continue
        dirs[:] = []
        skill_md = os.path.join(here, "SKILL.md")
        folders.append((Path(here).relative_to(root).as_posix(), os.path.realpath(skill_md),
                        os.path.islink(skill_md)))
    chosen: dict[str, tuple[str, bool]] = {}
    for folder, real, linked in folders:
        if real not in chosen or (chosen[real][1] and not linked):
            chosen[real] = (folder, linked)
    loaded: list[str] = []
    refused: list[str] = []
    for real, (folder, _) in chosen.items():
        (loaded if loads(Path(real)) else refused).append(folder)
    return sorted(loaded), sorted(refused)


def loads(skill_md: Path) -> bool:
    """An agent loads this SKILL.md: frontmatter between `---` lines, a YAML mapping, with a description."""
    try:
        text = skill_md.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    match = FRONTMATTER.match(text)
    if match is None:
        return False
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return False
    description = data.get("description") if isinstance(data, dict) else None
    return isinstance(description, str) and bool(description.strip())


# ------------------------------------------------------------------------------------------------ one repository

@dataclass
class Command:
    args: list[str]
    returncode: int
    seconds: float
    stdout: str
    stderr: str

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stdout + self.stderr

    def last_error(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""


@dataclass
class Outcome:
    repository: str
    commit: str
    agents_load: int
    agents_refuse: int
    found: int | None
    published: int  # skills in the build's index
    published_loaded: int  # of those, skills agents load (matched by their folder)
    init: Command
    build: Command
    reasons: list[tuple[str, int]] = field(default_factory=list)  # (why, skills agents load left out for it)
    keep_going: int | None = None  # when the build failed: the skills agents load that --keep-going publishes
    left_out: list[str] = field(default_factory=list)  # skills agents load that were not published, by folder

    @property
    def share(self) -> float:
        return 100.0 * self.published_loaded / self.agents_load if self.agents_load else 100.0

    @property
    def traceback(self) -> bool:
        return self.init.traceback or self.build.traceback


def run(command: Sequence[str], cwd: Path, env: dict[str, str]) -> Command:
    start = time.perf_counter()
    done = subprocess.run(list(command), cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, errors="replace", timeout=TIMEOUT)
    return Command([*command[-3:]], done.returncode, time.perf_counter() - start, done.stdout, done.stderr)


def adopt(repo: Path, work: Path) -> Outcome:
    """Copy ``repo`` into ``work``, run init and build there, and read what was published."""
    name = repo.resolve().name
    copy = work / name
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns("node_modules"))
    env = {**os.environ, "SKILLREG_STATE_DIR": str(work / "state"), "XDG_CACHE_HOME": str(work / "cache"),
           "NO_MKDOCS_2_WARNING": "1"}
    env.pop("SKILLREG_CONFIG", None)
    commit = _git(copy, "rev-parse", "--short=12", "HEAD")
    loaded, refused = agent_skills(copy)
    program = skillreg_command()
    init = run([*program, "init"], copy, env)
    build = run([*program, "build"], copy, env)
    published = published_folders(copy / "site") if build.returncode == 0 else []
    outcome = Outcome(name, commit, len(loaded), len(refused), _found(init.stdout), len(published),
                      len(set(loaded) & set(published)), init, build)
    outcome.left_out = sorted(set(loaded) - set(published))
    if build.returncode != 0 and init.returncode == 0:  # what stopped it: how much would publish without that
        kept = run([*program, "build", "--keep-going", "--no-site", "--out", str(work / f"{name}-kept")], copy, env)
        if kept.returncode == 0:
            outcome.keep_going = len(set(loaded) & set(published_folders(work / f"{name}-kept")))
    if init.returncode == 0 and outcome.left_out:
        outcome.reasons = _reasons(outcome, copy, program, env)
    return outcome


def published_folders(site: Path) -> list[str]:
    """The repository folder of every skill the build published (its detail document's ``source_path``)."""
    index = json.loads((site / "api/v1/index.json").read_text(encoding="utf-8"))
    folders = []
    for entry in index["skills"]:
        detail = json.loads((site / "api/v1/skills" / f"{entry['name']}.json").read_text(encoding="utf-8"))
        folders.append(detail["provenance"]["source_path"])
    return folders


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def _found(init_output: str) -> int | None:
    match = re.search(r"^Found (\d+) skills?\b", init_output, re.MULTILINE)
    return int(match.group(1)) if match else None


def _reasons(outcome: Outcome, copy: Path, program: list[str], env: dict[str, str]) -> list[tuple[str, int]]:
    """Why each left-out skill that agents load was left out: the rules of its errors under ``skillreg validate``
    (which judges skills as the build does); "not found" when discovery does not find it; "build stopped" when
    it has no error but the build as a whole failed."""
    checked = run([*program, "validate", "--format", "json"], copy, env)
    try:
        report = json.loads(checked.stdout)
    except ValueError:
        return [(f"validate failed: {checked.last_error()}", len(outcome.left_out))]
    errors: dict[str, set[str]] = {}
    for finding in report.get("diagnostics", []):
        if finding.get("severity") == "error":
            errors.setdefault(_skill_of(finding), set()).add(str(finding.get("code")))
    seen = found_folders(copy)
    counts: Counter[str] = Counter()
    for skill in outcome.left_out:
        if skill in errors:
            counts.update(errors[skill])
        elif outcome.build.returncode != 0:
            counts["build stopped"] += 1
        else:
            counts["not found" if skill not in seen else "no error"] += 1
    return counts.most_common()


def found_folders(copy: Path) -> set[str]:
    """The skills skillreg's discovery finds in ``copy`` with its registry.yaml: only to say why a skill agents
    load was left out (the count of what agents load never uses it)."""
    from builder.core.config import load_config
    from builder.core.discovery import discover

    config = load_config(copy / "registry.yaml")
    return {skill.path for skill in discover(copy, config.locations).skills}


def _skill_of(finding: dict[str, object]) -> str:
    """The skill a finding is about: its ``skill`` field, else the folder of its file."""
    skill = finding.get("skill")
    if isinstance(skill, str) and skill:
        return skill
    file = str(finding.get("file") or "")
    return file.rsplit("/", 1)[0] if "/" in file else file


# --------------------------------------------------------------------------------------------------- reporting

def table(outcomes: Sequence[Outcome]) -> Iterator[str]:
    yield "| repository | commit | agents load | found | published | share | left out: skills by rule |"
    yield "| --- | --- | ---: | ---: | ---: | ---: | --- |"
    for o in outcomes:
        reasons = ", ".join(f"{rule} {n}" for rule, n in o.reasons[:TOP_REASONS]) or "-"
        if o.build.returncode != 0:
            kept = f"; --keep-going publishes {o.keep_going}" if o.keep_going is not None else ""
            reasons = f"build stopped ({o.build.last_error()[:100]}){kept}; {reasons}"
        if o.init.returncode != 0:
            reasons = f"init failed ({o.init.last_error()[:80]})"
        found = "-" if o.found is None else str(o.found)
        yield (f"| {o.repository} | {o.commit} | {o.agents_load} | {found} | {o.published} | {o.share:.1f}% | "
               f"{reasons} |")


def verdict(outcomes: Sequence[Outcome]) -> Iterator[str]:
    load = sum(o.agents_load for o in outcomes)
    published = sum(o.published_loaded for o in outcomes)
    overall = 100.0 * published / load if load else 100.0
    lowest = min(outcomes, key=lambda o: o.share)
    tracebacks = [o.repository for o in outcomes if o.traceback]
    yield f"Overall: {published} of {load} skills agents load published ({overall:.1f}%; goal >= {GOAL_OVERALL:g}%)"
    yield f"Lowest: {lowest.repository} {lowest.share:.1f}% (goal >= {GOAL_EACH:g}% each)"
    yield f"Tracebacks: {', '.join(tracebacks) or 'none'}"
    met = overall >= GOAL_OVERALL and all(o.share >= GOAL_EACH for o in outcomes) and not tracebacks
    yield f"Goal {'met' if met else 'NOT met'}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.adoption", description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, metavar="REPO", help="a git checkout of a skills repository")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every figure as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the copies (their path is printed)")
    args = parser.parse_args(argv)
    for repo in args.repos:
        if not (repo / ".git").exists():
            parser.error(f"{repo} is not a git checkout")
    work = Path(tempfile.mkdtemp(prefix="skillreg-adoption-"))
    try:
        outcomes = []
        for repo in args.repos:
            outcomes.append(adopt(repo, work))
            print(f"{repo}: done", file=sys.stderr)
        ours = _git(Path(__file__).parent, "rev-parse", "--short=12", "HEAD")
        lines = [f"`python -m bench.adoption` on {now()[:10]} with skillreg at {ours}",
                 "", *table(outcomes), "", *verdict(outcomes)]
        print("\n".join(lines))
        if args.json:
            document = {"date": now(), "machine": machine_info(), "outcomes": [asdict(o) for o in outcomes]}
            args.json.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    finally:
        if args.keep:
            print(f"Copies kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
