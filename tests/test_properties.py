"""Property tests over the estimator and the rendering (hypothesis)."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import strategies as st

from bot.estimate.core import estimate
from bot.estimate.optimizers import Optimizer
from bot.estimate.request import EstimateRequest, InvalidRequest, parse_request
from bot.present.answer import render_embed
from bot.present.compare import render_compare
from bot.present.details import render_details
from bot.present.i18n import Language
from bot.present.problems import describe_problem
from tests.embed_limits import embed_limit_problems
from tests.property_runs import property_test
from tests.strategies import requests

params = st.floats(min_value=1e-6, max_value=100_000, allow_nan=False)
activations = st.floats(min_value=0, max_value=1_000_000, allow_nan=False)
optimizers = st.sampled_from([o.value for o in Optimizer])
custom_bytes = st.none() | st.floats(min_value=1e-6, max_value=64, allow_nan=False)
gpus = st.integers(min_value=1, max_value=4096)


@property_test(200, params, activations, optimizers, custom_bytes, gpus)
def test_valid_input_gives_a_consistent_estimate(
    n: float, a: float, optimizer: str, bytes_per_param: float | None, gpu_count: int
) -> None:
    result = estimate(
        parse_request(
            params=n, activations=a, optimizer=optimizer, bytes_per_param=bytes_per_param, gpus=gpu_count
        )
    )
    assert math.isfinite(result.total_gb)
    assert result.total_gb == pytest.approx(sum(result.part_gb(p) for p in result.parts) + a)
    assert result.model_states_gb == pytest.approx(n * result.bytes_per_param)
    assert result.single_gpu.fits is (result.total_gb <= 80)
    for language in Language:
        for render in (render_embed, render_compare, render_details):
            assert embed_limit_problems(render(result, language)) == []
    bigger = estimate(
        parse_request(
            params=min(n * 2, 100_000),
            activations=min(a + 1, 1_000_000),
            optimizer=optimizer,
            bytes_per_param=bytes_per_param,
        )
    )
    assert bigger.total_gb >= result.total_gb


out_of_range = st.one_of(
    st.floats(max_value=0),
    st.floats(min_value=100_000, exclude_min=True),
    st.just(math.nan),
    st.text(max_size=20),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)


@property_test(200, out_of_range)
def test_invalid_params_raise_only_the_validation_error(value: object) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(params=value)
    assert [p.option for p in caught.value.problems] == ["params"]
    for language in Language:  # every problem can be worded, in every language
        assert "`params`" in describe_problem(caught.value.problems[0], language)


@property_test(
    100, st.floats(max_value=0, exclude_max=True) | st.floats(min_value=1_000_000, exclude_min=True)
)
def test_invalid_activations_raise_only_the_validation_error(value: float) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(params=7, activations=value)
    assert [(p.code, p.option) for p in caught.value.problems] == [("out_of_range", "activations")]


anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=200),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
option_names = st.sampled_from([*EstimateRequest.model_fields, "flavour", "", "params "])


@property_test(400, st.dictionaries(option_names, anything, max_size=6))
def test_any_options_give_a_request_or_the_validation_error_and_nothing_else(
    options: dict[str, object],
) -> None:
    try:
        request = parse_request(**options)
    except InvalidRequest as exc:
        problems = exc.problems
    else:
        problems = []
        result = estimate(request)
        assert math.isfinite(result.total_gb)
        for language in Language:
            assert embed_limit_problems(render_embed(result, language)) == []
    for problem in problems:  # every problem can be worded, in every language
        for language in Language:
            assert describe_problem(problem, language).strip()


EXPONENT = re.compile(r"\d[eE][+-]?\d")


@property_test(60, requests())
def test_no_view_of_a_valid_request_shows_an_exponent(request: EstimateRequest) -> None:
    result = estimate(request)
    for language in Language:
        for render in (render_embed, render_compare, render_details):
            embed = render(result, language)
            texts = [
                embed["title"],
                embed["description"],
                *(f["name"] + f["value"] for f in embed.get("fields", [])),
            ]
            for text in texts:
                assert not EXPONENT.search(text), text
