"""A guarantee held by measuring time: linear growth on hostile input. Tests that measure time are marked
``timing`` and left out of the default run (pyproject.toml's addopts); ``python -m pytest -m timing`` runs them
on a quiet machine."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def grows_linearly(work: Callable[[int], object], size: int) -> tuple[bool, str]:
    """Whether ``work(n)`` grows with ``n`` as linear work does rather than as quadratic work, measured in CPU time
    of this process at an eighth of ``size`` and at ``size``: linear work costs 8 times as much, quadratic work 64
    times. The bound, 8 ** 1.5 (22.6), is the geometric midpoint of the two, so neither a busy machine nor a
    working set that outgrows a cache shared with another process (on a 2-core machine that alone took one
    linear render from 4.7 to 8.2 times the cost at a quarter of the size) fails a linear read, and a quadratic
    one still fails. CPU time rather than wall time, the quickest of five runs of each size, taken in turn so
    that a slow spell weighs on both sizes, and a collected heap before each, for the same reason. Below 0.08 s
    at ``size`` the work passes whatever its growth: timings that small are mostly noise. Returns the verdict and
    the two times, for the failure message."""
    small = size // 8
    best = {small: float("inf"), size: float("inf")}
    for _ in range(5):
        for n in best:
            gc.collect()
            started = time.process_time()
            work(n)
            best[n] = min(best[n], time.process_time() - started)
    part, full = best[small], best[size]
    return full < max(8 ** 1.5 * part, 0.08), f"{part:.3f} s at {small:,}, {full:.3f} s at {size:,}"
