"""What an interaction asks for, read the same way by both front ends (the gateway cog and the HTTP
server): the request a ``/vram`` command or a control stands for, and the model suggestions for what
is typed. No Discord I/O here: each front end reads its payload, calls these, and sends the rendered
message (:func:`bot.present.views.render_message`) its own way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from itertools import compress, repeat
from operator import is_not
from typing import Any

from bot.estimate.hub import is_repo_id
from bot.estimate.models import find_preset, preset_variant, search_presets
from bot.estimate.optimizers import Optimizer
from bot.estimate.request import PRIVATE, EstimateRequest, InvalidRequest, command_options, parse_request
from bot.estimate.value_type import value_type
from bot.estimate.weight_formats import WeightFormat
from bot.present.command_line import parse_command_line
from bot.present.custom_ids import FROM_MESSAGE, UnreadableState, unpack
from bot.present.i18n import Language, text
from bot.present.words import format_count

AUTOCOMPLETE_MAX = 25  # Discord shows at most 25 suggestions
MODEL = "model"  # the option with suggestions


@value_type  # built on every /vram: frozen=True sets each field through object.__setattr__
class Command:
    """A ``/vram`` command's options as read from its payload (``private`` apart: it decides only who
    sees the answer)."""

    options: dict[str, Any]
    private: bool

    @property
    def repo(self) -> str | None:
        """The Hub repo the command names, which must be looked up before the request is read."""
        model = self.options.get(MODEL)
        if isinstance(model, str) and find_preset(model) is None and is_repo_id(model):
            return model
        return None

    def request(self) -> EstimateRequest:
        """The request; :class:`InvalidRequest` names what is wrong (a repo not looked up included)."""
        return parse_request(**self.options)


def read_command(options: Mapping[str, Any]) -> Command:
    """The options given. Both front ends hand over every option, each one not given as the option
    table's own default object (discord.py passes a parameter's default so); those are left out, as
    Discord's payload leaves them out: the request takes the same default for an option not given,
    and validating, the command line and the controls then walk the few options given rather than
    all of them (some 0.1 M instructions a /vram, benchmarks/README.md)."""
    # In C, option by option (a comprehension over 15 options was some 30 k instructions): is each
    # value not the option's own default?
    given = map(is_not, options.values(), map(_defaults().get, options, repeat(_NOT_AN_OPTION)))
    rest = dict(compress(options.items(), given))
    private = bool(rest.pop(PRIVATE.name, PRIVATE.default))
    return Command(rest, private)


_NOT_AN_OPTION = object()


@cache
def _defaults() -> dict[str, object]:
    """Each option's default, by name."""
    return {spec.name: spec.default for spec in command_options()}


def control_request(state: str, shown_command: str | None) -> EstimateRequest:
    """The request a control carries, or, for one too long to carry (``FROM_MESSAGE``), the one its
    answer shows: ``shown_command`` is the description of the message's first embed."""
    if state != FROM_MESSAGE:
        return unpack(state)
    if not shown_command:
        raise UnreadableState("the message shows no command line")
    return parse_command_line(shown_command.split("\n", 1)[0])


def switch_optimizer(request: EstimateRequest, choice: str) -> EstimateRequest:
    """The same request with another optimizer; a custom B gives way to the optimizer picked."""
    if request.serving:  # a serving answer's select picks the weights' precision
        try:
            return request.model_copy(update={"weights": WeightFormat(choice)})
        except ValueError:
            raise UnreadableState("not a weight format") from None
    try:
        optimizer = Optimizer(choice)
    except ValueError:
        raise UnreadableState("not an optimizer") from None
    return request.model_copy(update={"optimizer": optimizer, "bytes_per_param": None})


def unresolved_repo(error: Exception) -> str | None:
    """The Hub repo an unreadable request names but nobody has looked up in this process (the
    answer was sent before a restart, or by another process)."""
    cause = error.__cause__
    if isinstance(cause, InvalidRequest):
        for problem in cause.problems:
            if problem.code == "unresolved_repo":
                return str(problem.given)
    return None


def preset_suggestions(current: str, language: Language) -> list[tuple[str, str]]:
    """The presets matching what is typed, as (name, value) suggestions."""
    return [
        (
            text(language, "choice.model", name=m.name, count=format_count(m.parameter_count, language)),
            preset_variant(m) or m.key,  # a variant's repo ID keeps its note in the answer
        )
        for m in search_presets(current, limit=AUTOCOMPLETE_MAX)
    ]


def wants_hub_search(current: str, suggested: int) -> bool:
    """A "/" says the user is typing a repo ID, so the Hub's search follows the presets."""
    return "/" in current and suggested < AUTOCOMPLETE_MAX


def model_suggestions(presets: list[tuple[str, str]], repos: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The presets first, then the Hub's repos that no preset's own suggestion stands for."""
    taken = {value for _, value in presets}
    found = [(repo, repo) for repo in repos if repo not in taken and not is_a_presets_own(repo)]
    return [*presets, *found][:AUTOCOMPLETE_MAX]


def is_a_presets_own(repo: str) -> bool:
    """A Hub suggestion the preset's own choice already stands for (its variants stay: each answers
    from the preset, saying so)."""
    found = find_preset(repo)
    return found is not None and preset_variant(found) is None
