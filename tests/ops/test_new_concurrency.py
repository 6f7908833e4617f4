"""``skillreg new`` and ``skillreg import`` run at once for one name: one wins, whole; the others say it exists.

Real processes, started together; each round checks the folder is exactly one writer's files and that no
temporary folder is left in ``skills/``: the registry's skills folder holds up under concurrent writers.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write_tree

from builder.ops.scaffold import skills_lock

pytestmark = pytest.mark.slow  # real processes racing

WRITERS = 8
ROUNDS = 2
TEXT = "---\nname: {name}\ndescription: Imported {i}. Use when testing concurrent imports.\n---\n# Imported\n\nStep {i}.\n"


def start(registry: Path, args: list[str], stdin: bytes | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "builder.cli.app", "--config", str(registry / "registry.yaml"), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=registry)


def finish(process: subprocess.Popen[bytes], stdin: bytes | None) -> tuple[int, str, str]:
    out, err = process.communicate(stdin, timeout=60)
    return process.returncode, out.decode(), err.decode()


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", {"registry.yaml": "title: Concurrent\n", "skills/.keep": ""})


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_writers_of_one_name_at_once_leave_one_whole_folder(registry: Path, round_: int) -> None:
    name = f"same-{round_}"
    texts = [TEXT.format(name=name, i=i).encode() for i in range(WRITERS)]
    jobs: list[tuple[subprocess.Popen[bytes], bytes | None]] = []
    for i in range(WRITERS):  # half import, half new, interleaved
        if i % 2:
            jobs.append((start(registry, ["new", name, "--description", f"Made {i}. Use when testing new."]), None))
        else:
            jobs.append((start(registry, ["import", "-"]), texts[i]))
    results = [finish(process, stdin) for process, stdin in jobs]
    folder = registry / "skills" / name
    winners = [i for i, (code, out, _) in enumerate(results) if out.startswith("Created ")]
    assert len(winners) == 1, results
    for i, (code, out, err) in enumerate(results):
        if i in winners:
            continue
        hint = "pick another name or edit that skill" if i % 2 else "refusing to overwrite it"
        assert (code, out, err) == (2, "", f"Error: {folder}: already exists; {hint}\n"), (i, results[i])
    made = files_of(folder)
    (winner,) = winners
    if winner % 2:
        assert list(made) == ["SKILL.md"] and f"Made {winner}." in made["SKILL.md"].decode()
        assert sorted(p.name for p in folder.iterdir()) == ["SKILL.md", "references", "scripts"]
    else:
        assert made == {"SKILL.md": texts[winner]}
    assert sorted(p.name for p in (registry / "skills").iterdir()) == [".keep", name]  # no temporary folder
    assert oct(folder.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _first_line(process: subprocess.Popen[bytes], timeout: float) -> str:
    """The first line the process writes to its standard error, waiting at most ``timeout`` seconds for it."""
    assert process.stderr is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        assert selector.select(timeout), f"nothing on standard error after {timeout} s"
    return process.stderr.readline().decode().rstrip("\n")


def test_a_writer_waits_for_the_lock_and_then_finds_the_folder(registry: Path) -> None:
    """Holding the lock as another writer would: the import waits (saying so), then refuses the existing name."""
    skills = registry / "skills"
    source = write_tree(registry, {"late.txt": TEXT.format(name="late", i=0)}) / "late.txt"
    with skills_lock(skills):
        process = start(registry, ["import", str(source)])
        write_tree(skills, {"late/SKILL.md": "made while the import waited\n"})
        # The lock is let go only once the import has said it waits: however slowly a busy machine starts it.
        waiting = _first_line(process, timeout=60)
        assert process.poll() is None  # still waiting for the lock
    code, out, err = finish(process, None)
    assert (code, out) == (2, "")
    assert [waiting, *err.splitlines()] == [f"Waiting for another `skillreg new` or `import` into {skills}/ to finish...",
                                f"Error: {skills / 'late'}: already exists; refusing to overwrite it"]
    assert (skills / "late/SKILL.md").read_text() == "made while the import waited\n"


def test_a_killed_holder_never_blocks(registry: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from builder.ops.scaffold import skills_lock\n"
        f"with skills_lock(Path({str(registry / 'skills')!r})):\n    print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    holder.kill()
    holder.wait()
    code, out, _ = finish(start(registry, ["new", "after-kill"]), None)
    assert (code, out.splitlines()[0]) == (0, f"Created {registry / 'skills/after-kill'}/SKILL.md")


def test_a_linked_lock_file_is_not_followed(registry: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("SKILLREG_STATE_DIR", str(state))
    with skills_lock(registry / "skills"):
        pass
    (lock,) = state.glob("skills/*/lock")
    lock.unlink()
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    lock.symlink_to(victim)
    env = {**os.environ, "SKILLREG_STATE_DIR": str(state)}
    result = subprocess.run([sys.executable, "-m", "builder.cli.app", "--config", str(registry / "registry.yaml"), "new",
                             "linked"], capture_output=True, text=True, env=env, cwd=registry, timeout=60)
    assert (result.returncode, result.stderr) == (
        2, f"Error: {lock}: is a symbolic link; a lock file is never followed: delete the link\n")
    assert victim.read_text() == "keep\n"
    assert not (registry / "skills/linked").exists()
