"""The largest batch follows the need's line (``bot.estimate.core._largest_fitting``) and answers
exactly as plain bisection does, for the estimate's own needs and for any need that grows with b."""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

from hypothesis import strategies as st

from bot.estimate import core
from bot.estimate.core import MAX_BATCH, estimate
from bot.estimate.request import EstimateRequest
from tests.property_runs import property_test
from tests.strategies import requests


def bisection(need: Callable[[int], float], capacity: float) -> int | None:
    """The largest b ≤ MAX_BATCH with need(b) ≤ capacity, by bisection over every b (the reference)."""
    if need(1) > capacity:
        return None
    low, high = 1, MAX_BATCH
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if need(middle) <= capacity else (low, middle - 1)
    return low


def counted(need: Callable[[int], float]) -> tuple[Callable[[int], float], list[int]]:
    asked: list[int] = []

    def counting(batch: int) -> float:
        assert 1 <= batch <= MAX_BATCH
        asked.append(batch)
        return need(batch)

    return counting, asked


# The largest of some affine needs (convex, as a step's moments make it), plus steps that make it
# anything that grows with b (not convex), in GB.
lines = st.lists(st.tuples(st.floats(0, 100), st.floats(0, 10)), min_size=1, max_size=4)
steps = st.lists(st.tuples(st.integers(1, MAX_BATCH), st.floats(0, 50)), max_size=3)
capacities = st.floats(0, 2000) | st.sampled_from([24.0, 80.0, 141.0, 192.0])


@property_test(400, lines, steps, capacities)
def test_any_growing_need_gets_bisections_answer(
    pieces: list[tuple[float, float]], jumps: list[tuple[int, float]], capacity: float
) -> None:
    def need(batch: int) -> float:
        line = max(start + per_sequence * batch for start, per_sequence in pieces)
        return line + sum(height for at, height in jumps if batch >= at)

    counting, asked = counted(need)
    assert core._largest_fitting(counting, capacity) == bisection(need, capacity)
    # Convex: 1, the top, two per line followed, and two where rounding misses by one (the b the line
    # gave, then the one below it: 0.2 + 0.2 b at 33 GB is 33.00000000000001 at b = 164). A slope is
    # bytes per sequence in GB, so at least a byte (1e-9) where there is one: a finer line is finer than
    # a double's spacing near its start (2 + 2.2e-16 b rounds to a staircase of ulps), not convex.
    if not jumps and all(slope == 0 or slope >= 1e-9 for _, slope in pieces):
        assert len(asked) <= 4 + 2 * len(pieces)
        assert len(set(asked)) == len(asked)  # no need asked twice


@property_test(100, requests().filter(lambda request: request.model is not None))
def test_every_estimate_has_bisections_largest_batch(request: EstimateRequest) -> None:
    found = estimate(request).largest_batch
    with mock.patch.object(core, "_largest_fitting", bisection):
        assert estimate(request).largest_batch == found
