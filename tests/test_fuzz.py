"""Fuzzing everything that reads outside input: option and autocomplete payloads and custom_ids sent to
the real bot through the fake Discord, the custom_id and command-line readers, and config files.

Each property runs briefly by default (a few dozen examples, so the suite stays quick); run it longer
by hand with ``VRAM_FUZZ_EXAMPLES=2000 .venv/bin/python -m pytest -m fuzz``. CI runs it as a step of
its own (``pytest -m fuzz``). Hypothesis
keeps what it found in ``.hypothesis/`` and tries it first next time.

The bot runs on an event loop in a thread of its own, so that hypothesis (which calls plain functions)
can drive it: each example is one interaction sent to the live bot and one answer waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.estimate.request import EstimateRequest, command_options
from bot.present.command_line import UnreadableCommand, parse_command_line
from bot.present.custom_ids import UnreadableState, unpack
from bot.runtime.interaction_shape import interaction_problem
from bot.runtime.settings import ConfigError, Settings, load_settings
from tests.fake_discord import FakeDiscord
from tests.running import start_bot

pytestmark = pytest.mark.fuzz

EXAMPLES = int(os.environ.get("VRAM_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
T = TypeVar("T")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
option_names = st.sampled_from([spec.name for spec in command_options()]) | st.text(max_size=12)
option_types = st.sampled_from([3, 4, 5, 10]) | st.integers(min_value=-1, max_value=12) | json_values
options = st.lists(
    st.fixed_dictionaries(
        {"name": option_names, "type": option_types, "value": json_values},
        optional={"focused": st.booleans()},
    ),
    max_size=6,
)


@dataclass
class Live:
    """The fake Discord and the bot, on a loop in another thread."""

    fake: FakeDiscord
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 15) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)


@pytest.fixture(scope="module")
def live(discord_endpoints: None) -> Iterator[Live]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fuzzed-bot", daemon=True)
    thread.start()
    fake = FakeDiscord()
    live = Live(fake, loop)
    live.run(fake.start())
    bot, task = live.run(start_bot(fake))
    try:
        yield live
    finally:
        live.run(bot.close())
        live.run(asyncio.wait_for(task, 10))
        live.run(fake.stop())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def errors_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The ERROR records of this bot's own code. discord.py itself logs the payloads it cannot read
    (an option value it fails to convert ends its task; an autocomplete for an option without one),
    which Discord never sends: the cog answers them all the same, and the test checks the answer."""
    ours = [r for r in caplog.records if r.name.startswith("bot.")]
    return [r.getMessage() for r in ours if r.levelno >= logging.ERROR]


@FUZZ
@given(options=options, autocomplete=st.booleans())
def test_any_payload_gets_an_answer_and_logs_no_error(
    live: Live, caplog: pytest.LogCaptureFixture, options: list[dict[str, Any]], autocomplete: bool
) -> None:
    caplog.clear()
    interaction = live.fake.slash_interaction("vram", options)
    if autocomplete:
        interaction["type"] = 4
    if interaction_problem(interaction) is not None:
        # What discord.py would trip over (an autocomplete's focused option with no option type) is
        # dropped at the gateway with one warning: no answer to wait for, and the bot serves on.
        live.run(live.fake.dispatch("INTERACTION_CREATE", interaction))
        assert live.run(live.fake.invoke("vram", params=7)).embed
        assert errors_in(caplog) == []
        return
    callback = live.run(live.fake.send_interaction(interaction))
    assert callback.type == (8 if autocomplete else 4)
    assert callback.data.get("allowed_mentions", {"parse": []}) == {"parse": []}
    if not autocomplete:
        assert callback.ephemeral or callback.data["embeds"]
    assert errors_in(caplog) == []


@FUZZ
@given(state=st.text(max_size=120), view=st.sampled_from(["est", "cmp", "det", "opt", "shr", "xyz", ""]))
def test_any_custom_id_gets_an_answer_and_logs_no_error(
    live: Live, caplog: pytest.LogCaptureFixture, state: str, view: str
) -> None:
    caplog.clear()
    answer = live.run(live.fake.invoke("vram", params=7))
    custom_id = f"vram:{view}:{state}"[:100]
    # The answer's own select (row 0) or first button (row 1), carrying the fuzzed custom_id.
    row = 0 if view == "opt" else 1
    message = dict(answer.message)
    rows = [dict(r) for r in message["components"]]
    rows[row]["components"] = [{**rows[row]["components"][0], "custom_id": custom_id}]
    message["components"] = [rows[row]]
    values = ["sgd"] if view == "opt" else None
    click = live.fake.component_interaction(message, custom_id, values=values, user="bob")
    callback = live.run(live.fake.send_interaction(click))
    assert callback.type == 4
    assert callback.ephemeral
    assert errors_in(caplog) == []


@settings(max_examples=EXAMPLES * 10, deadline=None)
@given(st.text(max_size=120))
def test_the_readers_return_a_request_or_say_it_is_unreadable(text: str) -> None:
    for read, unreadable in ((unpack, UnreadableState), (parse_command_line, UnreadableCommand)):
        with contextlib.suppress(unreadable):
            assert isinstance(read(text), EstimateRequest)


toml_values = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str),
    st.booleans().map(lambda b: str(b).lower()),
    st.text(max_size=20).map(lambda t: '"' + t.replace("\\", "").replace('"', "") + '"'),
    st.lists(st.integers(min_value=-3, max_value=70_000), max_size=3).map(str),
    st.text(max_size=20),  # anything at all, broken TOML included
)
toml_keys = st.sampled_from(sorted(Settings.model_fields)) | st.sampled_from(["token", "", "Log_Level"])


@settings(
    max_examples=EXAMPLES * 5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(toml_keys, toml_values), max_size=5))
def test_any_config_file_gives_settings_or_one_clear_error(
    tmp_path: Path, lines: list[tuple[str, str]]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text("\n".join(f"{key} = {value}" for key, value in lines) + "\n", encoding="utf-8")
    try:
        assert isinstance(load_settings(path, env={}), Settings)
    except ConfigError as exc:
        message = str(exc)
        assert message.strip()
        assert "\n" not in message  # one line for the operator
