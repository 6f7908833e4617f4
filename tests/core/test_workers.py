"""The worker pool: results in order, errors carried back, and workers forked with what this process holds."""

from __future__ import annotations

import os
import sys

import pytest

from builder.core.workers import iter_parallel, run_parallel

_HELD: list[str] = []  # filled by a test in this process only: a worker sees it only when forked from here


def _held(_: int) -> tuple[list[str], bool]:
    return list(_HELD), "builder.validate.checks" in sys.modules


def _square(n: int) -> int:
    if n < 0:
        raise ValueError(f"negative: {n}")
    return n * n


def _pid(_: int) -> int:
    return os.getpid()


def _nothing() -> None:
    pass


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux, whatever Python's default")
def test_workers_start_with_what_this_process_holds() -> None:
    import builder.validate.checks  # noqa: F401  (imported here: a forked worker has it without importing it)

    _HELD.append("set in the parent after start-up")
    try:
        results = run_parallel(_held, list(range(4)), initializer=_nothing, initargs=(), jobs=2)
        streamed = list(iter_parallel(_held, list(range(4)), initializer=_nothing, initargs=(), jobs=2))
    finally:
        _HELD.clear()
    assert results == streamed == [(["set in the parent after start-up"], True)] * 4


@pytest.mark.parametrize("spread", [run_parallel, lambda *a, **k: list(iter_parallel(*a, **k))])
def test_results_come_in_order_from_other_processes_and_errors_come_back(spread: object) -> None:
    assert callable(spread)
    items = list(range(300))
    assert spread(_square, items, initializer=_nothing, initargs=(), jobs=2) == [n * n for n in items]
    assert os.getpid() not in set(spread(_pid, items, initializer=_nothing, initargs=(), jobs=2))
    with pytest.raises(ValueError, match="negative: -3"):
        spread(_square, [1, 2, -3, 4], initializer=_nothing, initargs=(), jobs=2)
