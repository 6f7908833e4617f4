"""Builds hold their output: concurrent builds of one output take turns, a second one says it waits or, with
--no-wait, stops at once; a lock left by a killed process never blocks; a build killed part way is rolled back by
the next one."""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers.build import SKILLS, all_files, leftovers, make_registry, skillreg, start_skillreg

from builder.core.config import load_config
from builder.publish.build import BuildOptions, build
from builder.publish.transaction import output_place

pytestmark = pytest.mark.slow  # real processes racing

BUILD = ["build", "--out", "out", "--no-site"]
HOLD_LOCK = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from builder.publish.transaction import output_lock
    with output_lock(Path(sys.argv[1])):
        print("held", flush=True)
        sys.stdin.readline()
""")


def wait_until(condition, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def edit(repo: Path, name: str, line: str) -> None:
    md = repo / "skills" / name / "SKILL.md"
    md.write_text(md.read_text() + f"\n{line}\n")


def no_leftovers(repo: Path, out: str = "out") -> bool:
    """Nothing of the build machinery beside the output; replaced trees are deleted by detached processes."""
    trash = output_place(repo / out).trash_records
    return not leftovers(repo, out) and not (trash.exists() and any(trash.iterdir()))


def concurrent_builds(repo: Path, count: int) -> list[subprocess.CompletedProcess[str]]:
    procs = [start_skillreg(BUILD, repo) for _ in range(count)]
    done = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    return done


def test_four_concurrent_builds_into_one_output_take_turns(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS[:2])
    assert skillreg(BUILD, repo).returncode == 0
    for round_ in range(3):
        edit(repo, SKILLS[round_ % 2], f"Edited in round {round_}.")
        for done in concurrent_builds(repo, 4):
            assert done.returncode == 0, done.stderr
            assert "Traceback" not in done.stderr and "Built 2 skills into out/" in done.stdout
        wait_until(lambda: no_leftovers(repo))
        fresh = tmp_path / f"fresh-{round_}"
        build(load_config(repo / "registry.yaml"), fresh, BuildOptions(site=False))
        assert all_files(repo / "out") == all_files(fresh)


@pytest.fixture
def holder(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A process holding the output lock of ``repo/out`` through the builder's own code, until told to stop."""
    repo = make_registry(tmp_path / "repo", SKILLS[:1])
    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(repo / "out")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        yield repo, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_a_second_build_says_it_waits_then_builds(holder) -> None:  # type: ignore[no-untyped-def]
    repo, lock_holder = holder
    waiting = start_skillreg(BUILD, repo)
    try:
        assert waiting.stderr is not None
        ready, _, _ = select.select([waiting.stderr], [], [], 30)
        assert ready, "no waiting message"
        assert waiting.stderr.readline() == f"Waiting for another build of out/ to finish (process {lock_holder.pid})...\n"
        assert waiting.poll() is None and not (repo / "out").exists()
        lock_holder.stdin.close()  # the other build is done
        stdout, stderr = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 0, stderr
    assert stdout.startswith("Built 1 skill into out/") and "Traceback" not in stderr


def test_no_wait_exits_at_once_with_a_message(holder) -> None:  # type: ignore[no-untyped-def]
    repo, lock_holder = holder
    done = skillreg(BUILD + ["--no-wait"], repo)
    assert done.returncode == 1
    assert done.stderr == (f"Error: another build of out is running (process {lock_holder.pid}); nothing was "
                           "changed. Run the build again when it has finished\n")
    assert not (repo / "out").exists()


def test_a_lock_held_by_a_killed_process_never_blocks(holder) -> None:  # type: ignore[no-untyped-def]
    repo, lock_holder = holder
    lock_holder.send_signal(signal.SIGKILL)
    lock_holder.wait()
    done = skillreg(BUILD + ["--no-wait"], repo)
    assert done.returncode == 0, done.stderr
    assert (repo / "out/api/v1/index.json").is_file()


def test_a_symbolic_link_in_place_of_the_lock_file_is_not_followed(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS[:1])
    place = output_place(repo / "out")
    place.state.mkdir(parents=True)
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me\n")
    (place.state / "lock").symlink_to(target)
    done = skillreg(BUILD, repo)
    assert done.returncode == 2
    assert done.stderr == (f"Error: {place.state / 'lock'}: is a symbolic link; a lock file is never followed: "
                           "delete the link\n")
    assert target.read_text() == "keep me\n" and not (repo / "out").exists()


KILLED_PART_WAY = textwrap.dedent("""\
    import os, signal, sys
    from builder.publish import build; from builder.cli import app as cli
    real, count, limit = os.rename, [0], int(sys.argv[1])
    def rename(src, dst):
        count[0] += 1
        if count[0] == limit:
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst)
    build.os.rename = rename
    sys.argv = ["skillreg", "build", "--out", "out", "--no-site"]
    cli.main()
""")


@pytest.mark.parametrize("renames", [2, 5, 8])
def test_a_build_killed_part_way_is_rolled_back_by_the_next(tmp_path: Path, renames: int) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS)
    assert skillreg(BUILD, repo).returncode == 0
    before = all_files(repo / "out")
    edit(repo, SKILLS[0], "An added line.")
    edit(repo, SKILLS[1], "An added line.")
    killed = subprocess.run([sys.executable, "-c", KILLED_PART_WAY, str(renames)], cwd=repo, capture_output=True,
                            timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert output_place(repo / "out").journal.exists() and all_files(repo / "out") != before
    done = skillreg(BUILD + ["-v"], repo)
    assert done.returncode == 0, done.stderr
    assert f"Written: {SKILLS[0]}, {SKILLS[1]}" in done.stdout
    wait_until(lambda: no_leftovers(repo))
    fresh = tmp_path / "fresh"
    build(load_config(repo / "registry.yaml"), fresh, BuildOptions(site=False))
    assert all_files(repo / "out") == all_files(fresh)


KILLED_WITH_WORKERS = textwrap.dedent("""\
    import os, signal, sys, time
    from pathlib import Path
    from builder.publish import build, skill_output
    from builder.core.config import load_config
    real = skill_output._build_one
    def slow(*task):
        time.sleep(0.2)
        return real(*task)
    skill_output._build_one = slow  # the forked workers run this too
    def killed(done, total):
        os.kill(os.getpid(), signal.SIGKILL)
    build.build(load_config(Path("registry.yaml")), Path("out"),
                build.BuildOptions(site=False, jobs=2, on_progress=killed))
""")


def processes_with(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if marker.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_workers_of_a_killed_build_neither_hold_the_lock_nor_linger(tmp_path: Path) -> None:
    """A flock belongs to the open file, which forked workers share: the workers drop their copy, and end
    when their parent is gone; the next build removes the staging folder the killed one left."""
    repo = make_registry(tmp_path / "repo", SKILLS)
    marker = f"# {tmp_path}"
    # Workers that linger keep the output pipes open: the timeout turns that into a failure, not a hang.
    killed = subprocess.run([sys.executable, "-c", KILLED_WITH_WORKERS + marker], cwd=repo, capture_output=True,
                            text=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    done = skillreg(BUILD + ["--no-wait"], repo)
    assert done.returncode == 0, done.stderr
    wait_until(lambda: not processes_with(marker))
    assert skillreg(BUILD, repo).returncode == 0
    wait_until(lambda: no_leftovers(repo))
    fresh = tmp_path / "fresh"
    build(load_config(repo / "registry.yaml"), fresh, BuildOptions(site=False))
    assert all_files(repo / "out") == all_files(fresh)


def test_serve_rebuilds_wait_for_the_lock_and_say_so(holder) -> None:  # type: ignore[no-untyped-def]
    from builder.ops.serve import ServeEvent, serve

    repo, lock_holder = holder
    events: list[ServeEvent] = []
    stop = threading.Event()

    def on_event(event: ServeEvent) -> None:
        events.append(event)
        if event.kind == "serving":
            stop.set()

    thread = threading.Thread(target=serve, args=(load_config(repo / "registry.yaml"), repo / "out"),
                              kwargs={"port": 0, "on_event": on_event, "stop": stop, "site": False})
    thread.start()
    try:
        wait_until(lambda: bool(events))
        assert (events[0].kind, events[0].holder) == ("waiting", lock_holder.pid)
        assert not (repo / "out").exists()
    finally:
        lock_holder.stdin.close()
        thread.join(timeout=60)
    assert [e.kind for e in events] == ["waiting", "built", "serving"]
