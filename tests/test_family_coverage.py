"""Every decoder-only LM transformers ships is counted exactly or refused with a reason, never miscounted.

Each model_type's default config, written as the config.json a Hub repo holds, goes through the bot's
Hub reader and is compared with the model built on the meta device (benchmarks/family_coverage.py,
which also writes the table in benchmarks/ACCURACY.md). Needs torch and transformers
(``pip install -e ".[measure]"``); skipped without them.
"""

from __future__ import annotations

import pytest

from benchmarks.family_coverage import TOLERANCE, Row, all_rows, check
from bot.estimate.families import FAMILIES, MULTIMODAL, family

pytestmark = [pytest.mark.accuracy, pytest.mark.usefixtures("quiet_transformers")]

# Why the reader may refuse a config; "not built" rows are transformers' own default configs that
# transformers cannot build (nothing to compare with).
REASONS = ("undeclared_family", "not_a_decoder")


def _described(rows: list[Row]) -> str:
    return "; ".join(f"{r.model_type} ({r.variant}): {r.counted} of {r.built}, {r.reason}" for r in rows)


# Each declaration by its own model_type (an alias such as kimi_k2 is no config class of transformers).
@pytest.mark.parametrize(
    "model_type", sorted({f.model_type for f in FAMILIES} | {m.model_type for m in MULTIMODAL})
)
def test_a_declared_family_counts_its_default_config_exactly_with_every_switch(model_type: str) -> None:
    rows = check(model_type)
    assert rows[0].variant == "default"
    if rows[0].status == "not built" and rows[0].reason.startswith("ImportError"):
        # Gemma 3n's vision tower is a timm model: without timm there is nothing to build.
        pytest.skip(f"{model_type}: {rows[0].reason}")
    declared = family(model_type)
    if rows[0].status == "not built" and declared is not None and not declared.standalone:
        # mm: a text model transformers builds only inside its multimodal class (Qwen-VL's, GLM-4V's):
        # its wrapper's row holds it, whole.
        assert any(m.text_model_type == model_type for m in MULTIMODAL), model_type
        pytest.skip(f"{model_type}: built inside its multimodal model only")
    wrong = [r for r in rows if r.status not in ("exact", "refused")]
    assert not wrong, _described(wrong)
    # The default is counted; a variant may be refused only for a switch the family says it does not
    # model (StableLM's and Phi's qk_layernorm).
    assert rows[0].status == "exact", _described(rows[:1])
    refused = [r for r in rows if r.status == "refused"]
    assert all(r.reason.startswith("undeclared_family") and " with " in r.reason for r in refused)


def test_no_causal_lm_of_transformers_is_silently_miscounted() -> None:
    rows = all_rows()
    assert len({r.model_type for r in rows}) > 100  # the enumeration found transformers' families
    miscounted = [r for r in rows if r.status == "miscount"]
    assert not miscounted, _described(miscounted)
    refused = [r for r in rows if r.status == "refused"]
    assert all(r.reason.split(":")[0] in REASONS for r in refused), _described(refused)
    exact = [r for r in rows if r.status == "exact"]
    assert all(abs(r.counted / r.built - 1) <= TOLERANCE for r in exact if r.counted and r.built)
