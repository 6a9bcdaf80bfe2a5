"""The benchmark's own commands, loaded only by ``benchmarks/interactions.py`` (``extra_extensions``).

- ``/noop`` answers with a ``/vram`` answer's JSON (``/vram params:7 optimizer:adam8bit
  activations:20``: embed and controls), rendered once at the first ``/noop`` (not at load, which is
  part of the bot's cold start), through the bot's own send path
  (:func:`bot.runtime.send.send_answer`, discord.py's public ``send_message``), so each answer
  computes no estimate and renders nothing: the part of ``/vram``'s cost that is sending an answer of
  that size.
- ``/noop_options``, the same with ``/vram``'s options declared (:func:`bot.runtime.cog.with_vram_options`)
  and sent ``/vram``'s three: what discord.py itself does with a command of that many options (reads
  each, fills the defaults) is then on both sides, and the difference is the bot's own work.
- ``/bench_stages``: with ``VRAM_BENCH_STAGES=1`` in the bot's environment, :func:`install_stage_timers`
  wraps the stages of an answer (validate, estimate, render, controls, chart, send) with thread CPU
  timers, and this command answers with their totals as JSON (and starts them afresh). The timers
  cost a little CPU themselves, so the benchmark uses them only in a bot process of their own.
- ``/bench_collect`` runs a full garbage collection, which ``benchmarks/instructions.py`` asks for
  before each count, so that every count starts from the same collector state (otherwise a full
  collection that the previous one's garbage made due lands in this one's).
"""

from __future__ import annotations

import contextvars
import functools
import gc
import json
import os
import time
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.estimate.request import parse_request
from bot.present.custom_ids import COMPARE, ESTIMATE
from bot.present.i18n import Language
from bot.runtime import send
from bot.runtime.cog import with_vram_options
from bot.runtime.replies import NO_PINGS

STAGES_ENV = "VRAM_BENCH_STAGES"


@functools.cache
def _answer() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The answer's JSON, once: each /noop hands it to the send path as /vram hands its freshly
    rendered one. Rendered at the first /noop, so that the bot's cold start does not include it."""
    from bot.estimate.core import estimate
    from bot.present.answer import render_embed
    from bot.present.controls import render_controls

    request = parse_request(params=7.0, optimizer="adam8bit", activations=20.0)
    return render_embed(estimate(request)), render_controls(request, ESTIMATE, Language.EN)


# -- the stage timers (bench only) ------------------------------------------------------------------

# Which command's task is running, so that discord.py's send is charged to the right command.
_command: contextvars.ContextVar[str] = contextvars.ContextVar("bench_command", default="?")
_stages: dict[str, dict[str, list[int]]] = {}  # command -> stage -> [thread CPU ns, calls]
_timing = False

P = ParamSpec("P")
R = TypeVar("R")


def _charge(stage: str, nanoseconds: int) -> None:
    total = _stages.setdefault(_command.get(), {}).setdefault(stage, [0, 0])
    total[0] += nanoseconds
    total[1] += 1


def _timed(stage: str, function: Callable[P, R]) -> Callable[P, R]:
    # Thread CPU time, not wall time: an await in between (the HTTP round trip) is not our cost.
    @functools.wraps(function)
    def timed(*args: P.args, **kwargs: P.kwargs) -> R:
        started = time.thread_time_ns()
        try:
            return function(*args, **kwargs)
        finally:
            _charge(stage, time.thread_time_ns() - started)

    return timed


def _timed_async(
    stage: str, function: Callable[P, Coroutine[Any, Any, R]]
) -> Callable[P, Coroutine[Any, Any, R]]:
    @functools.wraps(function)
    async def timed(*args: P.args, **kwargs: P.kwargs) -> R:
        started = time.thread_time_ns()
        try:
            return await function(*args, **kwargs)
        finally:
            # During the await the loop may run other tasks; the benchmark sends one at a time.
            _charge(stage, time.thread_time_ns() - started)

    return timed


def _validating(function: Callable[P, R]) -> Callable[P, R]:
    """The command's parse_request (bot.present.interactions, which the cog reads a /vram with), which
    starts every /vram answer: marks the task as /vram's."""
    timed = _timed("validate", function)

    @functools.wraps(function)
    def marked(*args: P.args, **kwargs: P.kwargs) -> R:
        _command.set("vram")
        return timed(*args, **kwargs)

    return marked


def _clicking(
    function: Callable[[discord.Interaction, str, str, str | None], Coroutine[Any, Any, None]],
) -> Callable[[discord.Interaction, str, str, str | None], Coroutine[Any, Any, None]]:
    """The controls' answer_control, which starts every click's answer: marks the task as the
    click's ("compare" for Compare's)."""

    @functools.wraps(function)
    async def marked(
        interaction: discord.Interaction, view_name: str, state: str, optimizer: str | None = None
    ) -> None:
        _command.set("compare" if view_name == COMPARE else "click")
        await function(interaction, view_name, state, optimizer)

    return marked


def install_stage_timers() -> None:
    """Wrap each stage of a /vram answer where the runtime looks it up (module globals, at call time)."""
    global _timing
    from bot.present import chart, interactions, views
    from bot.runtime import controls

    # Through vars(): the modules import these names for their own use, not to export them.
    found, message, runtime = vars(interactions), vars(views), vars(controls)
    found["parse_request"] = _validating(found["parse_request"])
    message["estimate"] = _timed("estimate", message["estimate"])
    for name, render in list(message["RENDERERS"].items()):  # the same dict the runtime reads
        message["RENDERERS"][name] = _timed("render", render)
    message["render_controls"] = _timed("controls", message["render_controls"])
    # send_view imports compare_png from its module when a Compare answers, so it finds this one.
    vars(chart)["compare_png"] = _timed("chart", chart.compare_png)
    # Sending, the same function for every command: the JSON as discord.py's Embed and View, then
    # discord.py's send_message / edit_message (which also parses the message Discord echoes back).
    vars(send)["send_answer"] = runtime["send_answer"] = _timed_async("send", send.send_answer)
    runtime["answer_control"] = _clicking(runtime["answer_control"])
    gc.callbacks.append(_time_collections)
    _timing = True


_collecting_since = 0


def _time_collections(phase: str, info: dict[str, int]) -> None:
    """The garbage collector's CPU, charged to the command whose task triggered the collection."""
    global _collecting_since
    if phase == "start":
        _collecting_since = time.thread_time_ns()
    else:
        _charge("gc", time.thread_time_ns() - _collecting_since)


# -- the commands -------------------------------------------------------------------------------------


class PingCog(commands.Cog):
    @app_commands.command(name="noop", description="A /vram answer's JSON, sent as /vram sends (benchmark)")
    async def noop(self, interaction: discord.Interaction) -> None:
        if _timing:
            _command.set("noop")
        embed, controls = _answer()
        await send.send_answer(interaction, embed, controls, edit=False, allowed_mentions=NO_PINGS)

    @app_commands.command(name="noop_options", description="/noop with /vram's options declared (benchmark)")
    @with_vram_options
    async def noop_options(self, interaction: discord.Interaction, /, **options: Any) -> None:
        if _timing:
            _command.set("noop_options")
        embed, controls = _answer()
        await send.send_answer(interaction, embed, controls, edit=False, allowed_mentions=NO_PINGS)

    @app_commands.command(name="bench_stages", description="The stage timers' totals (benchmark only)")
    async def bench_stages(self, interaction: discord.Interaction) -> None:
        _command.set("bench_stages")
        report = json.dumps(_stages, separators=(",", ":"))
        _stages.clear()
        await interaction.response.send_message(report, allowed_mentions=NO_PINGS)

    @app_commands.command(name="bench_collect", description="A full garbage collection (benchmark only)")
    async def bench_collect(self, interaction: discord.Interaction) -> None:
        gc.collect()
        await interaction.response.send_message("collected", allowed_mentions=NO_PINGS)


async def setup(bot: commands.Bot) -> None:
    if os.environ.get(STAGES_ENV) == "1":
        install_stage_timers()
    await bot.add_cog(PingCog())
