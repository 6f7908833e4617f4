"""What every measurement shares: the run's context, repeated timing, timed subprocesses with their peak memory,
machine facts and the two output formats."""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from .corpus import REPO, cached_corpus, measure_shape, shape_summary
from .real_corpus import first_skills

JSON_VERSION = 3  # 2: rows carry their target; 3: the corpus shape
TRASH_PREFIX = ".trash-"


class BenchError(Exception):
    """A measurement could not be made fairly (e.g. the corpus is not valid under one of the tools)."""


@dataclass(frozen=True)
class Target:
    """A goal from the issues, shown beside the figure it applies to: ``<``, ``<=`` or ``>=`` a value."""

    op: str
    value: float

    def met(self, figure: float) -> bool:
        if self.op == "<":
            return figure < self.value
        if self.op == "<=":
            return figure <= self.value
        if self.op == ">=":
            return figure >= self.value
        raise ValueError(f"unknown target operator {self.op!r}")

    def __str__(self) -> str:
        return f"{self.op} {self.value:g}"


@dataclass(frozen=True)
class Row:
    """One figure: ``runs`` holds every repetition; the table shows their median, min and max.

    A figure that cannot vary between runs (a size, a request count) has one run.
    """

    measurement: str
    subject: str
    n: int
    unit: str
    runs: tuple[float, ...]
    note: str = ""
    target: Target | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def max(self) -> float:
        return max(self.runs)

    def to_json(self) -> dict[str, object]:
        target = None if self.target is None else {"op": self.target.op, "value": self.target.value,
                                                   "met": self.target.met(self.median)}
        return {"measurement": self.measurement, "subject": self.subject, "n": self.n, "unit": self.unit,
                "median": self.median, "min": self.min, "max": self.max, "runs": list(self.runs),
                "note": self.note, "target": target}


@dataclass
class BenchContext:
    """Handed to every measurement: where corpora are cached, how many repetitions, quick or full, and the shape
    of the generated corpora (``synthetic`` or ``real``, see bench/corpus.py).

    ``api_builds`` holds the API outputs (``skillreg build --no-site``) made in this run, by corpus size, so a
    measurement that only reads one (sizes, site, client) reuses it instead of building again.
    """

    cache_dir: Path
    quick: bool = False
    repeat: int = 5
    seed: int = 0
    shape: str = "synthetic"
    skills: int | None = None  # --skills: the corpus size of the measurements that take one (validate)
    log: Callable[[str], None] = field(default=lambda message: print(message, file=sys.stderr, flush=True))
    api_builds: dict[int, Path] = field(default_factory=dict)
    measured_shapes: dict[int, dict[str, float]] = field(default_factory=dict)
    real: Path | None = None  # --corpus: the prepared real skills (bench/real_corpus.py) every measurement uses
    site: bool = True  # False (--no-site): the trust measurement builds its output without the website

    def corpus(self, n: int) -> Path:
        """A folder of ``n`` generated skills, made once per (n, seed, shape) and reused by every measurement.

        A real-shaped corpus has its shape measured and logged the first time this run uses it.
        """
        if self.real is not None:
            return first_skills(self.real, n)
        started = time.perf_counter()
        folder = cached_corpus(self.cache_dir, n, self.seed, self.shape)
        elapsed = time.perf_counter() - started
        if elapsed > 0.5:
            self.log(f"  generated {n:,} skills in {elapsed:.1f} s: {folder}")
        if self.shape == "real" and n not in self.measured_shapes and n >= 2:
            self.measured_shapes[n] = measure_shape(folder)
            self.log(f"  real-shaped corpus of {shape_summary(self.measured_shapes[n])}")
        return folder

    def registry(self, n: int) -> Path:
        """The registry.yaml that builds the corpus of ``n`` skills (it sits beside the corpus's skills/)."""
        return self.corpus(n).parent / "registry.yaml"

    @property
    def out_dir(self) -> Path:
        """Where build outputs go: a folder on the same disk as the corpora, used by one run at a time."""
        return self.cache_dir / "out"

    # Deleting a 10,000-skill output (150,000 files) takes minutes on this disk, and the disk activity would
    # disturb every measurement made meanwhile. Outputs are therefore renamed into a trash folder (instant)
    # and deleted by a detached process once the run is over; the next run waits for that to finish.

    @property
    def _trash(self) -> Path:
        return self.cache_dir / f"{TRASH_PREFIX}{os.getpid()}"

    def discard(self, path: Path) -> None:
        """Move an output out of the way now; it is deleted after the run (at once when off this disk)."""
        if not (path.exists() or path.is_symlink()):
            return
        try:
            self._trash.mkdir(parents=True, exist_ok=True)
            os.rename(path, self._trash / f"{time.monotonic_ns()}-{path.name}")
        except OSError:  # another file system, such as tmpfs, where deleting is quick
            remove_tree(path)

    def clear_leftovers(self) -> None:
        """Wait for an earlier run's outputs to finish being deleted; take over whatever an earlier run left."""
        if not self.cache_dir.is_dir():
            return
        for pid_file in sorted(self.cache_dir.glob(f"{TRASH_PREFIX}*.pid")):
            trash = pid_file.with_suffix("")
            pid = pid_file.read_text(encoding="ascii").strip()
            if trash.exists() and pid.isdigit() and Path(f"/proc/{pid}").exists():
                self.log(f"  waiting for an earlier run's outputs to be deleted: {trash}")
                while trash.exists() and Path(f"/proc/{pid}").exists():
                    time.sleep(1)
            pid_file.unlink(missing_ok=True)
        for leftover in sorted(self.cache_dir.glob(f"{TRASH_PREFIX}*")):
            if leftover != self._trash:
                self.discard(leftover)
        self.discard(self.out_dir)

    def delete_outputs(self) -> None:
        """Start deleting this run's outputs in a detached process; ``clear_leftovers`` waits for it."""
        self.discard(self.out_dir)
        if not self._trash.exists():
            return
        try:
            deleter = subprocess.Popen([sys.executable, "-c", "import shutil, sys; shutil.rmtree(sys.argv[1], True)",
                                        str(self._trash)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            shutil.rmtree(self._trash, ignore_errors=True)
            return
        self._trash.with_name(self._trash.name + ".pid").write_text(f"{deleter.pid}\n", encoding="ascii")


def default_cache_dir() -> Path:
    return Path(os.environ.get("SKILLREG_BENCH_CACHE") or Path(tempfile.gettempdir()) / "skillreg-bench")


def timed(func: Callable[[], object]) -> float:
    """Seconds one call of ``func`` takes, with garbage from earlier runs collected first."""
    gc.collect()
    started = time.perf_counter()
    func()
    return time.perf_counter() - started


def interleaved(subjects: Sequence[Callable[[], object]], repeat: int) -> list[list[float]]:
    """Seconds per run of each subject, alternating subjects within each repetition.

    Alternating spreads the machine's noise (other jobs on two shared cores) over all subjects instead of
    letting one subject run entirely during a busy spell.
    """
    runs: list[list[float]] = [[] for _ in subjects]
    for _ in range(repeat):
        for k, subject in enumerate(subjects):
            runs[k].append(timed(subject))
    return runs


@dataclass(frozen=True)
class Finished:
    """A command that ran to completion: wall-clock seconds, CPU time, peak memory, and what it printed."""

    seconds: float
    max_rss: int  # bytes: the largest single process of the command's tree (kernel accounting, exact)
    tree_rss: int  # bytes: the largest sum of PSS over the command's processes at one moment (sampled)
    output: str
    cpu_seconds: float = 0.0  # user + system time of the command and every process it waited for


# The command runs under this small fresh interpreter, which times it and reads its resource usage. Linux carries
# a process's peak RSS over fork and exec, so a command the benchmark started itself would report at least the
# benchmark's own size (about 1 GB once it has validated 60,000 skills in process); started from a process of a
# few megabytes it reports its own. RUSAGE_CHILDREN covers the command and every process it waited for.
_WRAPPER = """\
import resource, subprocess, sys, time
started = time.perf_counter()
code = subprocess.call(sys.argv[2:])
seconds = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w", encoding="ascii") as fh:
    fh.write(f"{code} {seconds!r} {usage.ru_maxrss * 1024} {usage.ru_utime + usage.ru_stime!r}\\n")
"""


def run_process(command: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
                timeout: float = 1800, exits: Sequence[int] = (0,)) -> Finished:
    """Run ``command`` and measure it; an exit code not in ``exits`` is a BenchError.

    Seconds, CPU time and the largest process's peak RSS come from the wrapper above (``ru_maxrss`` is in
    kilobytes on Linux). Worker processes run side by side and share the pages they were forked with, so the
    whole tree is sampled as the sum of each process's PSS: a page shared by k processes counts 1/k in each.
    """
    gc.collect()
    with tempfile.TemporaryFile() as log, tempfile.TemporaryDirectory(prefix="bench-run-") as scratch:
        result = Path(scratch) / "measured"
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WRAPPER, str(result), *command], cwd=cwd,
                                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        sampler = _TreeSampler(proc.pid)
        timed_out = threading.Event()
        timer = threading.Timer(timeout, lambda: (timed_out.set(), _kill_group(proc.pid)))
        timer.start()
        try:
            proc.wait()
        except BaseException:
            _kill_group(proc.pid)
            proc.wait()
            raise
        finally:
            timer.cancel()
            sampler.stop()
        log.seek(0)
        output = log.read().decode("utf-8", "replace")
        if timed_out.is_set():
            raise BenchError(f"`{' '.join(command)}` was killed after {timeout:g} s:\n{output[-3000:]}")
        try:
            code, seconds, max_rss, cpu = result.read_text(encoding="ascii").split()
        except (OSError, ValueError):
            raise BenchError(f"`{' '.join(command)}` could not be run (wrapper exited {proc.returncode}):\n"
                             f"{output[-3000:]}") from None
    if int(code) not in exits:
        raise BenchError(f"`{' '.join(command)}` exited {code}:\n{output[-3000:]}")
    return Finished(float(seconds), int(max_rss), sampler.peak, output, float(cpu))


def _kill_group(pid: int) -> None:
    """Kill the wrapper and everything the command started (they share the wrapper's new session's group)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


class _TreeSampler:
    """Every 50 ms, the summed PSS of every process below the wrapper (the command and its descendants, found
    through /proc); keeps the peak. Where smaps_rollup cannot be read (an old kernel) a process counts its RSS."""

    INTERVAL = 0.05

    def __init__(self, wrapper: int) -> None:
        self.wrapper = wrapper
        self.peak = 0
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self.INTERVAL):
            self.peak = max(self.peak, sum(self._memory(pid) for pid in self._descendants()))

    def _descendants(self) -> list[int]:
        found: list[int] = []
        frontier = [self.wrapper]
        while frontier:
            for child in _children(frontier.pop()):
                if child not in found:
                    found.append(child)
                    frontier.append(child)
        return found

    def _memory(self, pid: int) -> int:
        """Bytes: the process's PSS, else its RSS; 0 once it has gone."""
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Pss:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                return int(fh.read().split()[1]) * self._page
        except (OSError, ValueError, IndexError):
            return 0

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``: the kernel's list for each of its threads."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as fh:
                found.extend(int(child) for child in fh.read().split())
        except (OSError, ValueError):
            continue
    return found


def settle() -> None:
    """Write out what earlier runs left in the page cache, so that it is not written during the next timing."""
    if hasattr(os, "sync"):
        os.sync()


def compile_bytecode() -> None:
    """Write the bytecode of this checkout's ``builder`` package, as pip does when it installs the wheel.

    The checkout is installed editable, so its modules load from the sources; where PYTHONDONTWRITEBYTECODE is
    set (as on the machine these figures come from) every measured command compiled them again, some 40 ms of
    start-up that an installed ``skillreg`` never pays. Python still checks each file's bytecode against its
    source, so an edited module is compiled afresh, never run stale.
    """
    import compileall

    compileall.compile_dir(REPO / "builder", quiet=1)


def skillreg_command() -> list[str]:
    """The installed console script next to this interpreter, else the same entry point through ``-c``."""
    script = Path(sys.executable).parent / "skillreg"
    if script.is_file():
        return [str(script)]
    found = shutil.which("skillreg")
    return [found] if found else [sys.executable, "-c", "from builder.cli.app import main; main()"]


def tree_bytes(root: Path, skip: Sequence[str] = ()) -> int:
    """Bytes of the files below ``root``, each inode once (the API hard-links files it publishes twice), leaving
    out the top-level entries named in ``skip``."""
    seen: set[tuple[int, int]] = set()
    total = 0
    stack = [Path(entry.path) for entry in os.scandir(root) if entry.name not in skip]
    while stack:
        path = stack.pop()
        st = path.lstat()
        if path.is_dir() and not path.is_symlink():
            stack.extend(Path(entry.path) for entry in os.scandir(path))
        elif (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


def remove_tree(path: Path) -> None:
    """Delete a folder (untimed housekeeping between runs); a missing one is fine."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def machine_info() -> dict[str, object]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    return {
        "cpu": cpu,
        "cores": os.cpu_count() or 0,
        "usable_cores": usable,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "packages": {name: _version(name) for name in ("skill-registry", "skills-ref", "PyYAML")},
        "commit": _git_commit(),
        "load_average": load_average(),
    }


def load_average() -> float | None:
    """The 1-minute load average: above the core count, other work competed with the measurements."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _fmt(value: float) -> str:
    if float(value).is_integer():
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def render_markdown(rows: Sequence[Row], info: dict[str, object], date: str, repeat: int, quick: bool,
                    shape: str = "synthetic") -> str:
    lines = [
        f"Benchmark {'(quick) ' if quick else ''}of {date} on {info['cpu']}, {info['cores']} cores, "
        f"{info['python']} (load average {info['load_average']} at start), "
        f"{'a corpus of real public skills' if shape == 'public' else f'{shape}-shaped corpus'}; median, min "
        "and max over the runs counted in the Runs column.",
        "",
        "| Measurement | Subject | Skills | Runs | Median | Min | Max | Unit | Target |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in rows:
        target = "" if row.target is None else f"{row.target} {'met' if row.target.met(row.median) else 'MISSED'}"
        lines.append(f"| {row.measurement} | {row.subject} | {row.n:,} | {len(row.runs)} | {_fmt(row.median)} "
                     f"| {_fmt(row.min)} | {_fmt(row.max)} | {row.unit} | {target} |")
    # One line per note; rows sharing a note (the same figure at two sizes, or two subjects) share the line.
    notes: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row.note:
            subjects = notes.setdefault((row.measurement, row.note), [])
            if row.subject not in subjects:
                subjects.append(row.subject)
    if notes:
        lines += ["", *(f"- {measurement}, {'; '.join(subjects)}: {note}"
                        for (measurement, note), subjects in notes.items())]
    return "\n".join(lines) + "\n"


def report_json(rows: Sequence[Row], info: dict[str, object], date: str, repeat: int, quick: bool,
                measurements: Sequence[str], shape: str = "synthetic",
                measured_shapes: dict[int, dict[str, float]] | None = None) -> dict[str, object]:
    """The run as JSON; ``corpus_shapes`` holds ``measure_shape``'s figures for each real-shaped corpus used, by
    its number of skills."""
    return {"version": JSON_VERSION, "date": date, "machine": info, "quick": quick, "repeat": repeat,
            "shape": shape,
            "corpus_shapes": {str(n): figures for n, figures in sorted((measured_shapes or {}).items())},
            "measurements": list(measurements), "results": [row.to_json() for row in rows]}


def write_json(path: Path, document: dict[str, object]) -> None:
    write_text(path, json.dumps(document, indent=2, sort_keys=True) + "\n")


def write_text(path: Path, text: str) -> None:
    """Write atomically: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
