"""Words for Hub repos: why a repo could not be used, and what an answer read from the Hub notes.

Kept apart from the answer's other phrases so the Hub's wording lives in one place; every key is
spelled out in full (a test checks each is used and defined).
"""

from __future__ import annotations

from bot.estimate.hub import HubFailure
from bot.estimate.models import Architecture, close_matches
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.problems import given_value
from bot.present.words import Words

SHORT_COMMIT = 7  # as git and the Hub's pages show a commit


def _fields(fields: tuple[str, ...]) -> str:
    return ", ".join(f"`{name}`" for name in fields) or "`config.json`"


# The failures said by the repo alone, and those that also name the config's fields.
_REPO_KEYS = {
    "not_found": "hub.not_found",
    "gated": "hub.gated",
    "no_config": "hub.no_config",
    "too_large": "hub.too_large",
    "malformed": "hub.malformed",
    "rate_limited": "hub.rate_limited",
    "offline": "hub.offline",
    "disabled": "hub.disabled",
}
_FIELD_KEYS = {
    "absurd": ("hub.absurd", "fields"),
    "not_a_decoder": ("hub.not_a_decoder", "family"),
    "undeclared_family": ("hub.undeclared_family", "family"),
    "unknown_architecture": ("hub.unknown_architecture", "fields"),
}


def _sentence(failure: HubFailure, w: Words, repo: str) -> str:
    kind = failure.kind
    if kind in _FIELD_KEYS:
        key, placeholder = _FIELD_KEYS[kind]
        return w(key, repo=repo, **{placeholder: _fields(failure.fields)})
    return w(_REPO_KEYS.get(kind, "hub.unavailable"), repo=repo)


# When the repo cannot be had (none such, or no Hub to ask), a preset of a similar name may be what
# the user meant, or a close enough stand-in: offer the nearest ones.
_OFFERS_PRESETS = frozenset({"not_found", "rate_limited", "unavailable", "offline", "disabled"})


def describe_hub_failure(failure: HubFailure, language: Language = DEFAULT_LANGUAGE) -> str:
    """One sentence per failure: what happened and what to do instead."""
    w = Words(language)
    sentence = _sentence(failure, w, given_value(failure.repo, w))
    if failure.kind in _OFFERS_PRESETS:
        close = close_matches(failure.repo.rsplit("/", 1)[-1], limit=3)
        if close:
            sentence += ". " + w("hub.close_presets", close=", ".join(close))
    return sentence


def hub_failure_message(failure: HubFailure, language: Language = DEFAULT_LANGUAGE) -> str:
    return Words(language)("problem.intro") + "\n• " + describe_hub_failure(failure, language)


def rate_limited_note(repo: str, language: Language = DEFAULT_LANGUAGE) -> str:
    w = Words(language)
    return w("hub.rate_limited_cached", repo=given_value(repo, w))


def hub_notes(model: Architecture, w: Words) -> list[str]:
    """What an answer for a Hub repo adds: where the shape came from, and a stored count it did not use."""
    if model.source != "hub":
        return []
    notes = [w("hub.source", commit=(model.hub_revision or "main")[:SHORT_COMMIT])]
    if model.hub_stored_params is not None:
        notes.append(
            w(
                "hub.count_differs",
                stored=w.count(model.hub_stored_params),
                counted=w.count(model.parameter_count),
            )
        )
    return notes
