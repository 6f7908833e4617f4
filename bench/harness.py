"""What every measurement shares: the run's context, repeated timing, machine facts and the two output formats."""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Callable, Sequence

from .corpus import REPO, cached_corpus

JSON_VERSION = 1


class BenchError(Exception):
    """A measurement could not be made fairly (e.g. the corpus is not valid under one of the tools)."""


@dataclass(frozen=True)
class Row:
    """One figure: ``runs`` holds every repetition; the table shows their median, min and max."""

    measurement: str
    subject: str
    n: int
    unit: str
    runs: tuple[float, ...]
    note: str = ""

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
        return {"measurement": self.measurement, "subject": self.subject, "n": self.n, "unit": self.unit,
                "median": self.median, "min": self.min, "max": self.max, "runs": list(self.runs),
                "note": self.note}


@dataclass
class BenchContext:
    """Handed to every measurement: where corpora are cached, how many repetitions, quick or full."""

    cache_dir: Path
    quick: bool = False
    repeat: int = 5
    seed: int = 0
    log: Callable[[str], None] = field(default=lambda message: print(message, file=sys.stderr, flush=True))

    def corpus(self, n: int) -> Path:
        """A folder of ``n`` generated skills, made once per (n, seed) and reused by every measurement."""
        started = time.perf_counter()
        folder = cached_corpus(self.cache_dir, n, self.seed)
        elapsed = time.perf_counter() - started
        if elapsed > 0.5:
            self.log(f"  generated {n:,} skills in {elapsed:.1f} s: {folder}")
        return folder


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
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def render_markdown(rows: Sequence[Row], info: dict[str, object], date: str, repeat: int, quick: bool) -> str:
    lines = [
        f"Benchmark {'(quick) ' if quick else ''}of {date} on {info['cpu']}, {info['cores']} cores, "
        f"{info['python']} (load average {info['load_average']} at start); median, min and max of {repeat} runs.",
        "",
        "| Measurement | Subject | Skills | Median | Min | Max | Unit |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        lines.append(f"| {row.measurement} | {row.subject} | {row.n:,} | {_fmt(row.median)} | {_fmt(row.min)} "
                     f"| {_fmt(row.max)} | {row.unit} |")
    notes = [f"- {row.subject}: {row.note}" for row in rows if row.note]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def report_json(rows: Sequence[Row], info: dict[str, object], date: str, repeat: int, quick: bool,
                measurements: Sequence[str]) -> dict[str, object]:
    return {"version": JSON_VERSION, "date": date, "machine": info, "quick": quick, "repeat": repeat,
            "measurements": list(measurements), "results": [row.to_json() for row in rows]}


def write_json(path: Path, document: dict[str, object]) -> None:
    """Write atomically: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(document, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
