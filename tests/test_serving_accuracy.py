"""The KV cache the serving estimate counts is transformers' own, to the byte, for every declared family.

Each declared family at a small shape (benchmarks/accuracy_serve.py) runs one forward pass on CPU with
random weights; the cache transformers returns is counted tensor by tensor and compared with
``bot.estimate.kv_cache`` for the bot's reading of the same config. Needs torch and transformers
(``pip install -e ".[measure]"``); skipped without them.
"""

from __future__ import annotations

import pytest

from benchmarks.accuracy_serve import KNOWN_GAPS, _small_configs, measure

pytestmark = [pytest.mark.accuracy, pytest.mark.usefixtures("quiet_transformers")]


@pytest.mark.parametrize("family", sorted(_small_configs()))
def test_the_cache_is_transformers_own_to_the_byte(family: str) -> None:
    row = measure(family, _small_configs()[family], working=False)
    if row.measured is None:
        pytest.skip(row.note)  # transformers needs fields the small shape does not give this family
    if family in KNOWN_GAPS:  # still off, for the reason named; once the reader learns it, drop the gap
        assert row.measured != row.estimated, f"{family} is exact now: remove it from KNOWN_GAPS"
        return
    assert row.measured == row.estimated, f"{family} ({row.kinds}): {row.measured:,} B measured"
