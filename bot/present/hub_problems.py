"""Words for Hub repos: why a repo could not be used, and what an answer read from the Hub notes.

Kept apart from the answer's other phrases so the Hub's wording lives in one place; every key is
spelled out in full (a test checks each is used and defined).
"""

from __future__ import annotations

from bot.estimate.hub import COUNT_TOLERANCE, HubFailure, HubModel
from bot.estimate.models import close_matches
from bot.estimate.tensors import CountedModel, Packing, PartName, TensorCount
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


# What a config without a usable model_type (none, a list, an object, markup) is named by: the field.
_NO_FAMILY = ("model_type",)
_UNNAMED_KEYS: dict[str, str] = {
    "not_a_decoder": "hub.not_a_decoder_unnamed",
    "undeclared_family": "hub.undeclared_unnamed",
}


def _sentence(failure: HubFailure, w: Words, repo: str) -> str:
    kind = failure.kind
    if kind in _UNNAMED_KEYS and failure.fields == _NO_FAMILY:
        return w(_UNNAMED_KEYS[kind], repo=repo)
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


def hub_notes(model: HubModel, w: Words, brief: bool = False) -> list[str]:
    """What an answer for a Hub repo adds: where its count came from, what no declaration knows, a
    count of its layout that its tensors contradict, and how a packed checkpoint was counted.
    ``brief`` leaves out where the count came from (the commit), which Details keeps."""
    if model.source != "hub":
        return []
    commit = (model.hub_revision or "main")[:SHORT_COMMIT]
    family = model.model_type  # a plain short name or None (bot.estimate.hub keeps no other)
    tensors = model.tensors
    if isinstance(model, CountedModel):
        read_from = model.tensors.read_from
        source = "hub.tensors_source" if read_from == "headers" else "hub.stored_source"
        notes = [] if brief else [w(source, commit=commit)]
        key = "hub.tensors_only_brief" if brief else "hub.tensors_only"
        notes.append(w(key, family=f"`{family or '?'}`", count=w.count(model.tensors.total)))
        return notes + _packing_notes(model.tensors, w, brief)
    notes = [] if brief else [w("hub.source", commit=commit)]
    if tensors is not None:
        # The layout counts the text model only; the towers and projectors are the tensors' to say.
        text = tensors.total - tensors.towers - tensors.part("projector")
        counted = model.parameter_count
        if abs(text - counted) > COUNT_TOLERANCE * counted:
            key = "hub.tensors_differ_brief" if brief else "hub.tensors_differ"
            notes.append(w(key, counted=w.count(counted), tensors=w.count(tensors.total)))
        notes += _packing_notes(tensors, w, brief)
    elif model.hub_stored_params is not None:
        notes.append(
            w(
                "hub.count_differs_brief" if brief else "hub.count_differs",
                stored=w.count(model.hub_stored_params),
                counted=w.count(model.parameter_count),
            )
        )
    return notes


_PACKING_NAMES: dict[Packing, str] = {
    "fp8": "FP8",
    "mxfp4": "MXFP4",
    "gptq": "GPTQ",
    "awq": "AWQ",
    "bitsandbytes_4bit": "bitsandbytes 4-bit",
    "bitsandbytes_8bit": "bitsandbytes 8-bit",
}


def _packing_notes(tensors: TensorCount, w: Words, brief: bool = False) -> list[str]:
    if tensors.packing is None:
        return []
    if tensors.packing == "unknown":
        return [w("hub.packing_unknown_brief" if brief else "hub.packing_unknown")]
    name = _PACKING_NAMES[tensors.packing]
    stored = w.count(tensors.stored_elements)
    key = "hub.unpacked_brief" if brief else "hub.unpacked"
    return [w(key, packing=name, count=w.count(tensors.total), stored=stored)]


# Every part's label, spelled out in full (the catalogue test finds each key).
_PART_KEYS: dict[PartName, str] = {
    "embeddings": "tensor_part.embeddings",
    "layers": "tensor_part.layers",
    "experts": "tensor_part.experts",
    "lm_head": "tensor_part.lm_head",
    "other": "tensor_part.other",
    "vision": "tensor_part.vision",
    "audio": "tensor_part.audio",
    "projector": "tensor_part.projector",
    "mtp": "tensor_part.mtp",
}


def tensor_parts(model: HubModel, w: Words) -> str | None:
    """Details' split of a repo's tensors by part (None where they were not read)."""
    tensors = model.tensors
    if tensors is None or not tensors.parts:
        return None
    parts = [w(_PART_KEYS[part], count=w.count(count)) for part, count in tensors.parts]
    if tensors.tied_embeddings:
        parts.append(w("tensor_part.tied"))
    return w("hub.parts", parts=", ".join(parts), shards=w.plain(tensors.shards))
