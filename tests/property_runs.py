"""A property test of the default suite runs twice: briefly there, at length with the fuzzing.

The default suite stays quick (README: under 15 s on two cores) on a tenth of a property's examples;
``pytest -m fuzz`` (a CI step of its own) runs the same property on all of them, times
VRAM_FUZZ_EXAMPLES / 30 when that is set, as tests/test_fuzz.py does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis.strategies import SearchStrategy

QUICK_SHARE = 10  # the default suite's run: a tenth of the examples, at least 10
SCALE = int(os.environ.get("VRAM_FUZZ_EXAMPLES", "30")) / 30


def property_test(
    examples: int, *strategies: SearchStrategy[Any]
) -> Callable[[Callable[..., None]], Callable[[str], None]]:
    """``@settings(max_examples=examples, deadline=None) @given(*strategies)``, as two tests:
    ``[quick]`` in the default suite and ``[long]`` (marked fuzz) with all the examples."""

    def decorate(test: Callable[..., None]) -> Callable[[str], None]:
        counts = {"quick": max(examples // QUICK_SHARE, 10), "long": max(round(examples * SCALE), 1)}
        # One @given per run: hypothesis allows one settings object per wrapped test.
        runs = {
            depth: settings(max_examples=count, deadline=None)(given(*strategies)(test))
            for depth, count in counts.items()
        }

        @pytest.mark.parametrize("depth", ["quick", pytest.param("long", marks=pytest.mark.fuzz)])
        def run(depth: str) -> None:
            runs[depth]()

        run.__name__, run.__qualname__, run.__doc__ = test.__name__, test.__qualname__, test.__doc__
        run.__module__ = test.__module__
        return run

    return decorate
