"""Spread per-skill work over processes when there is enough of it to pay for starting them.

The pool's modules (concurrent.futures, multiprocessing, ctypes: some 15 ms of imports) are imported only when
the work is spread, so a command with a few items starts without them.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")

# Below this many items one process is faster: starting workers and sending results back costs more.
PARALLEL_THRESHOLD = 200


def default_jobs(count: int) -> int:
    return min(os.cpu_count() or 1, 8) if count >= PARALLEL_THRESHOLD else 1


_PR_SET_PDEATHSIG = 1  # prctl option: a signal the kernel sends this process when its parent exits


def _exit_with_parent(parent: int) -> None:
    """A worker whose parent was killed would wait for work forever; this one ends with it. On Linux the kernel
    sends the worker SIGKILL when the parent exits (prctl PR_SET_PDEATHSIG: nothing runs in the worker for it);
    elsewhere a thread checks the parent twice a second."""
    import ctypes
    import signal
    import threading

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        armed = sys.platform == "linux" and libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError, TypeError):
        armed = False
    if armed:
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            threading.Event().wait(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="skillreg-parent-watch", daemon=True).start()


def _start_worker(parent: int, initializer: Callable[..., Any], *initargs: Any) -> None:
    _exit_with_parent(parent)
    initializer(*initargs)


def _pool(jobs: int, initializer: Callable[..., Any], initargs: tuple[Any, ...]) -> ProcessPoolExecutor:
    """``jobs`` workers, forked on Linux whatever Python's default (forkserver from 3.14), so that each starts
    with everything this process has imported instead of importing it again; what each imports when it starts
    is imported here once, before the fork."""
    import ctypes  # noqa: F401  (each worker's _exit_with_parent)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start_worker,
                               initargs=(os.getpid(), initializer, *initargs))


def run_parallel(func: Callable[[T], R], items: Sequence[T], *, initializer: Callable[..., Any],
                 initargs: tuple[Any, ...], jobs: int | None = None,
                 on_progress: Callable[[int, int], None] | None = None) -> list[R]:
    """``[func(item) for item in items]`` in order, after ``initializer(*initargs)`` in every worker."""
    total = len(items)
    jobs = default_jobs(total) if jobs is None else jobs
    results: list[R] = []
    if jobs <= 1:
        initializer(*initargs)
        for item in items:
            results.append(func(item))
            if on_progress:
                on_progress(len(results), total)
        return results
    chunksize = max(1, min(64, total // (jobs * 8) or 1))
    with _pool(jobs, initializer, initargs) as pool:
        for result in pool.map(func, items, chunksize=chunksize):
            results.append(result)
            if on_progress:
                on_progress(len(results), total)
    return results


def iter_parallel(func: Callable[[T], R], items: Sequence[T], *, initializer: Callable[..., Any],
                  initargs: tuple[Any, ...], jobs: int | None = None, ahead: int = 4) -> Iterator[R]:
    """``func(item) for item in items``, in order, with at most ``ahead`` tasks per worker sent and not yet
    consumed: unlike ``run_parallel`` the results are not all held at once, so a caller that streams them
    keeps its memory bounded whatever the number of items."""
    total = len(items)
    jobs = default_jobs(total) if jobs is None else jobs
    if jobs <= 1:
        initializer(*initargs)
        for item in items:
            yield func(item)
        return
    with _pool(jobs, initializer, initargs) as pool:
        pending: collections.deque[Future[R]] = collections.deque()
        for item in items:
            pending.append(pool.submit(func, item))
            if len(pending) >= jobs * ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


# -- speed tricks: each says what it saves; re-measure them when the code around them changes ------------------

def collect_as_usual() -> None:
    """A worker forked while the parent had paused the collector (``paused_collector``) collects as usual."""
    gc.enable()


_FIELD_DEFAULTS: dict[type, tuple[dict[str, Any], dict[str, Callable[[], Any]]]] = {}


def frozen_without_init(cls: type[T], **values: Any) -> T:
    """``cls(**values)`` for a frozen dataclass without ``__post_init__``, made without its ``__init__`` (which
    sets each field with one ``object.__setattr__``): a rebuild at 60,000 skills makes three of these per skill."""
    if cls not in _FIELD_DEFAULTS:
        known = dataclasses.fields(cls)  # type: ignore[arg-type]
        _FIELD_DEFAULTS[cls] = (
            {f.name: f.default for f in known if f.default is not dataclasses.MISSING},
            {f.name: f.default_factory for f in known if f.default_factory is not dataclasses.MISSING})
    defaults, factories = _FIELD_DEFAULTS[cls]
    made = object.__new__(cls)
    made.__dict__.update(defaults, **{name: make() for name, make in factories.items() if name not in values},
                         **values)
    return made


def frozen_with(value: T, **changes: Any) -> T:
    """``dataclasses.replace(value, **changes)`` for a frozen dataclass without ``__post_init__``, made without its
    ``__init__``: a validation run renames the skill of each of its findings, some four per skill."""
    made = object.__new__(type(value))
    made.__dict__.update(value.__dict__, **changes)
    return made


class PausedCollector:
    """Python's cyclic collector, paused while a process makes and reads many small objects none of which is in
    a cycle (a build's per-skill records): its full collections would walk the whole heap again and again.
    ``resume`` and ``pause`` bracket the phases that make cyclic garbage (forking workers, the website);
    ``keep`` leaves every object made so far out of later collections."""

    def __init__(self) -> None:
        self.collecting = gc.isenabled()
        self.frozen = gc.get_freeze_count()

    def keep(self) -> None:
        if not gc.get_freeze_count():
            gc.freeze()

    def resume(self) -> None:
        if self.collecting:
            gc.enable()

    def pause(self) -> None:
        gc.disable()

    def restore(self) -> None:
        """The collector as it was before (a caller's own frozen objects are left as they are)."""
        if not self.frozen:
            gc.unfreeze()
        if self.collecting:
            gc.enable()


_PAUSED: list[PausedCollector] = []  # the collector ``paused_collector`` paused, while it is


@contextlib.contextmanager
def paused_collector() -> Iterator[PausedCollector]:
    """The collector paused for the with-block, and restored as it was on any exit."""
    collector = PausedCollector()
    collector.pause()
    _PAUSED.append(collector)
    try:
        yield collector
    finally:
        _PAUSED.remove(collector)
        collector.restore()


@contextlib.contextmanager
def collecting_for_phase() -> Iterator[None]:
    """Inside ``paused_collector``, the collector runs again for a phase that makes cyclic garbage (forking
    workers, writing the website), and is paused after it. The objects made before the first such phase (the
    records a build reads first and keeps to its end) are left out of every later collection. Outside
    ``paused_collector`` nothing changes."""
    if not _PAUSED:
        yield
        return
    collector = _PAUSED[-1]
    collector.keep()
    collector.resume()
    try:
        yield
    finally:
        collector.pause()
