"""Fuzzing the gateway's INTERACTION_CREATE payloads: a field missing, added or mistyped at any depth
of a command, an autocomplete or a click, sent to the real bot through the fake Discord's gateway.

Whatever the payload, the bot either answers it or logs it once at WARNING and drops it; it logs no
ERROR (no "Task exception was never retrieved"), never the payload's token, and answers the next one.
Runs with the other fuzzing (``pytest -m fuzz``; ``VRAM_FUZZ_EXAMPLES=N`` for longer).
"""

from __future__ import annotations

import copy
import gc
import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.test_fuzz import FUZZ, Live, json_values
from tests.test_fuzz import live as live  # the module's running bot

pytestmark = pytest.mark.fuzz

Path = tuple[str | int, ...]


def paths(value: Any, at: Path = ()) -> list[Path]:
    """Every key and index in a JSON document, outermost first (the document itself excluded)."""
    found: list[Path] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        found.append((*at, key))
        found += paths(inner, (*at, key))
    return found


def mutate(payload: dict[str, Any], path: Path, operation: str, value: Any, extra_key: str) -> None:
    *parents, last = path
    container: Any = payload
    for key in parents:
        container = container[key]
    if operation == "delete":
        del container[last]
    elif operation == "replace":
        container[last] = value
    elif isinstance(container[last], dict):  # "add": an unexpected field beside the others
        container[last][extra_key] = value
    else:
        container[last] = [container[last], value]


def sample_payload(live: Live, kind: str) -> dict[str, Any]:
    fake = live.fake
    if kind == "command":
        return fake.slash_interaction("vram", fake.command_options("vram", params=7, optimizer="sgd"))
    if kind == "autocomplete":
        options = [{"name": "model", "type": 3, "value": "lla", "focused": True}]
        return {**fake.slash_interaction("vram", options), "type": 4}
    answer = live.run(fake.invoke("vram", params=7))
    button = answer.message["components"][1]["components"][0]["custom_id"]
    return fake.component_interaction(answer.message, button)


mutations = st.tuples(st.sampled_from(["delete", "replace", "add"]), json_values, st.text(max_size=8))


@FUZZ
@given(kind=st.sampled_from(["command", "autocomplete", "click"]), choice=st.data())
def test_any_interaction_payload_is_answered_or_dropped_and_the_bot_serves_on(
    live: Live, caplog: pytest.LogCaptureFixture, kind: str, choice: st.DataObject
) -> None:
    payload = copy.deepcopy(sample_payload(live, kind))
    token = payload["token"]
    for _ in range(choice.draw(st.integers(min_value=1, max_value=3), label="mutations")):
        places = paths(payload)
        if places:
            path = choice.draw(st.sampled_from(places), label="path")
            mutate(payload, path, *choice.draw(mutations, label="mutation"))
    caplog.clear()
    caplog.set_level(logging.INFO)
    live.run(live.fake.dispatch("INTERACTION_CREATE", payload))
    after = live.run(live.fake.invoke("vram", params=7))  # served in order: the fuzzed one came first
    assert "= **112.0 GB**" in after.embed["description"]
    gc.collect()  # an unretrieved task exception is logged when its task is collected
    records = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [m for level, m in records if level >= logging.ERROR] == []
    assert len([m for _, m in records if m.startswith("Dropped a gateway event")]) <= 1
    assert [m for _, m in records if token in m] == []
