"""Every commit from the one that added this file on follows the convention of docs/guides/contributing-code.md:
a subject of at most 72 characters, capitalised, without a final full stop, and a body that says why. (A hook in
.git/hooks would not survive a clone; this test does.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from helpers import REPO, missing

MAX_SUBJECT = 72
# Subjects that describe instead of command: "Added X", "Fixes Y", "Updating Z".
NOT_IMPERATIVE = re.compile(r"^(Add|Fix|Mov|Chang|Updat|Remov|Renam|Split|Us|Mak|Improv)(ed|es|s|ing)\b")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def _commits_since_this_file() -> list[tuple[str, str, str]]:
    """(hash, subject, body) of every commit, merges left out, from the one that added this file to HEAD."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout (an unpacked sdist)")
    rel = Path(__file__).resolve().relative_to(REPO).as_posix()
    added = _git("log", "--follow", "--format=%H", "--", rel).split()
    if not added:
        pytest.skip(f"{rel} is not committed yet")
    first = added[-1]
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        missing("the history is shallow: .ci/run unshallows it", "a shallow clone may lack the history to check")
    parents = _git("rev-list", "--parents", "-n", "1", first).split()[1:]
    span = f"{parents[0]}..HEAD" if parents else "HEAD"
    log = _git("log", "--no-merges", "--format=%H%x00%s%x00%b%x1e", span)
    return [tuple(entry.strip("\n").split("\0", 2)) for entry in log.split("\x1e") if entry.strip()]  # type: ignore[misc]


def problems(subject: str, body: str) -> list[str]:
    found = []
    if len(subject) > MAX_SUBJECT:
        found.append(f"subject has {len(subject)} characters (at most {MAX_SUBJECT})")
    if not subject[:1].isupper():
        found.append("subject does not start with a capital letter")
    if subject.endswith("."):
        found.append("subject ends with a full stop")
    if NOT_IMPERATIVE.match(subject):
        found.append("subject is not in the imperative")
    if not body.strip():
        found.append("no body saying why")
    return found


def test_every_commit_since_this_file_follows_the_convention() -> None:
    wrong = [f"{sha[:10]} {subject!r}: {'; '.join(found)}" for sha, subject, body in _commits_since_this_file()
             if (found := problems(subject, body))]
    assert wrong == []


@pytest.mark.parametrize(("subject", "body", "expected"), [
    ("Split the registry client's cache", "Why.", []),
    ("split the cache", "Why.", ["subject does not start with a capital letter"]),
    ("Split the cache.", "Why.", ["subject ends with a full stop"]),
    ("Added a cache", "Why.", ["subject is not in the imperative"]),
    ("Split the cache", "", ["no body saying why"]),
    ("S" * 73, "Why.", ["subject has 73 characters (at most 72)"]),
])
def test_the_convention_names_each_problem(subject: str, body: str, expected: list[str]) -> None:
    assert problems(subject, body) == expected
