"""``python -m bench.same_output OLD NEW``: do two ``skillreg`` programs publish the same bytes?

A change that should not alter the output (a refactor, a speed-up) is checked by building one fixed registry
with both programs and comparing every file. The registry is this repository's ``skills/`` and
``registry.yaml`` committed to a new git repository with fixed names and dates, built twice:

- ``default``: one version of each skill, the repository's own settings, website included;
- ``lean-two-versions``: a second commit changes every skill (so each publishes two versions from history) and
  registry.yaml takes the lean ``publish:`` settings;
- ``signed``: the default registry signed with TUF metadata (``--sign``), with one set of keys made by the OLD
  program's ``trust init`` and committed root; signing is deterministic (ed25519, expiry from the commit time)
  but for the timestamp, which is signed at the clock's time: both builds run under libfaketime's ``faketime``
  at one fixed time.

Each build runs cold (a fresh state folder, so no manifest and no bundle cache). Exit status 0 when every file is
the same, 1 with the paths that differ.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import yaml

from .harness import REPO, BenchError
from .scale import LEAN_PUBLISH
from .versions import _git

FIXED_DATE = "2026-01-01T12:00:00+00:00"
VARIANTS = ("default", "lean-two-versions", "signed")


def fixed_registry(root: Path, variant: str, program: str) -> Path:
    """The repository's skills in a git repository whose commits have fixed authors and dates; ``program`` makes
    the signed variant's keys."""
    repo = root / variant
    shutil.copytree(REPO / "skills", repo / "skills", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    config = yaml.safe_load((REPO / "registry.yaml").read_text(encoding="utf-8"))
    if variant == "lean-two-versions":
        config["publish"] = LEAN_PUBLISH
    if variant == "signed":
        config["trust"] = {"metadata_days": 36500}  # the fixed commit date stays far from the expiry
    (repo / "registry.yaml").write_text(yaml.safe_dump(config, sort_keys=True), encoding="utf-8")
    dated = {"GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _commit(repo, "the registry", dated)
    if variant == "lean-two-versions":
        for skill_md in sorted((repo / "skills").glob("*/SKILL.md")):
            with skill_md.open("a", encoding="utf-8") as file:
                file.write("\nA second version of this skill.\n")
        _git(repo, "add", "-A")
        _commit(repo, "every skill changed", {k: v.replace("12:00", "13:00") for k, v in dated.items()})
    if variant == "signed":
        done = subprocess.run([program, "--config", str(repo / "registry.yaml"), "trust", "init", str(keys_of(repo))],
                              cwd=repo, capture_output=True, text=True, env=_scratch_env(root / "keys-scratch"))
        if done.returncode != 0:
            raise BenchError(f"{program} trust init exited {done.returncode}:\n{done.stderr[-1500:]}")
        _git(repo, "add", "-A")
        _commit(repo, "trust: first root", {k: v.replace("12:00", "13:00") for k, v in dated.items()})
    return repo


def keys_of(repo: Path) -> Path:
    return repo.parent / f"{repo.name}-keys"


def _scratch_env(scratch: Path) -> dict[str, str]:
    state = scratch / "state"
    return {**os.environ, "SKILLREG_STATE_DIR": str(state), "XDG_STATE_HOME": str(state),
            "SKILLREG_BUNDLE_CACHE": str(scratch / "bundle-cache")}


def _commit(repo: Path, message: str, dates: dict[str, str]) -> None:
    env = {**os.environ, **dates, "GIT_AUTHOR_NAME": "Fixed", "GIT_AUTHOR_EMAIL": "fixed@example.invalid",
           "GIT_COMMITTER_NAME": "Fixed", "GIT_COMMITTER_EMAIL": "fixed@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise BenchError(f"git commit failed in {repo}: {done.stderr[-400:]}")


SIGNING_CLOCK = "2026-01-02 00:00:00"  # the time both signed builds take their timestamp at (faketime)


def build(program: str, repo: Path, out: Path, scratch: Path, sign: Path | None = None) -> None:
    signing = ["--sign", str(sign)] if sign is not None else []
    clock = []
    if sign is not None:
        faketime = shutil.which("faketime")
        if faketime is None:
            raise BenchError("the signed variant runs its builds under faketime (Debian's faketime package)")
        clock = [faketime, "-f", SIGNING_CLOCK]  # -f: the clock stands still, whatever the speed
    done = subprocess.run([*clock, program, "--config", str(repo / "registry.yaml"), "build", "--out", str(out),
                           *signing],
                          cwd=repo, capture_output=True, text=True, env=_scratch_env(scratch))
    if done.returncode != 0:
        raise BenchError(f"{program} build of {repo.name} exited {done.returncode}:\n{done.stderr[-1500:]}")


def digests(out: Path) -> dict[str, str]:
    """Every file of a build by relative path, with its SHA-256 (a symbolic link by its target)."""
    found = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def differences(old: dict[str, str], new: dict[str, str]) -> list[str]:
    lines = [f"only in OLD: {p}" for p in sorted(old.keys() - new.keys())]
    lines += [f"only in NEW: {p}" for p in sorted(new.keys() - old.keys())]
    lines += [f"differs:     {p}" for p in sorted(old.keys() & new.keys()) if old[p] != new[p]]
    return lines


def compare(old: str, new: str, variants: Sequence[str], work: Path) -> list[str]:
    report = []
    for variant in variants:
        repo = fixed_registry(work, variant, old)
        outputs = []
        for label, program in (("old", old), ("new", new)):
            out = work / f"{variant}-{label}"
            build(program, repo, out, work / f"{variant}-{label}-scratch",
                  sign=keys_of(repo) if variant == "signed" else None)
            outputs.append(digests(out))
        diff = differences(*outputs)
        report.append(f"{variant}: {len(outputs[1]):,} files, " + ("identical" if not diff else
                                                                   f"{len(diff)} difference(s)"))
        report += [f"  {line}" for line in diff[:50]] + ([f"  ... and {len(diff) - 50} more"] if len(diff) > 50
                                                          else [])
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.same_output", description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the skillreg executable before the change")
    parser.add_argument("new", help="the skillreg executable with the change")
    parser.add_argument("--only", choices=VARIANTS, action="append", help="build only this variant (repeatable)")
    args = parser.parse_args(argv)
    programs = []
    for program in (args.old, args.new):
        found = shutil.which(program)
        if found is None:
            parser.error(f"{program}: not an executable")
        programs.append(str(Path(found).absolute()))
    with tempfile.TemporaryDirectory(prefix="same-output-") as work:
        report = compare(*programs, args.only or VARIANTS, Path(work))
    print("\n".join(report))
    return 0 if all(line.endswith("identical") for line in report if not line.startswith("  ")) else 1


if __name__ == "__main__":
    sys.exit(main())
