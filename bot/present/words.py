"""Words and numbers in the reader's language, bound once per answer: ``w("field.total")``, ``w.gb(84)``.

Every word comes from the string catalogue of the reader's language (:mod:`bot.present.i18n`), every
catalogue key is spelled out where it is used, and every number is formatted for the language.
"""

from __future__ import annotations

import re
from functools import cache

from bot.estimate.optimizers import Optimizer, Precision
from bot.estimate.sharding import Strategy
from bot.present.i18n import DEFAULT_LANGUAGE, Language, digit_swaps, templates

# The catalogue keys of names that come from the estimate.
OPTIMIZER_NAME_KEYS: dict[Optimizer, str] = {
    Optimizer.ADAM: "method.adam",
    Optimizer.ADAM8BIT: "method.adam8bit",
    Optimizer.SGD: "method.sgd",
    Optimizer.PAGED_ADAM8BIT: "optimizer.paged_adam8bit",
    Optimizer.ADAFACTOR: "optimizer.adafactor",
    Optimizer.LION: "optimizer.lion",
    Optimizer.MUON: "optimizer.muon",
}
# Outside the seed's mixed precision, Adam is plain Adam; the setup is named beside it.
OPTIMIZER_PLAIN_NAME_KEYS: dict[Optimizer, str] = {
    Optimizer.ADAM: "method.adam_plain",
    Optimizer.ADAM8BIT: "method.adam8bit",
    Optimizer.SGD: "method.sgd",
    Optimizer.PAGED_ADAM8BIT: "optimizer.paged_adam8bit",
    Optimizer.ADAFACTOR: "optimizer.adafactor",
    Optimizer.LION: "optimizer.lion",
    Optimizer.MUON: "optimizer.muon",
}
PRECISION_NAME_KEYS: dict[Precision, str] = {
    Precision.MIXED: "precision.mixed",
    Precision.AMP: "precision.amp",
    Precision.BF16: "precision.bf16",
}
STRATEGY_NAME_KEYS: dict[Strategy, str] = {
    "data parallel": "strategy.data_parallel",
    "ZeRO-1": "strategy.zero1",
    "ZeRO-2": "strategy.zero2",
    "ZeRO-3": "strategy.zero3",
}


# Memory below this is shown as "< 0.01 GB": nothing a GPU plan can tell apart from zero.
SMALLEST_GB = 0.01
# Digits after the point for a number that would otherwise need an exponent.
FIXED_DECIMALS = 12


def _fixed(value: float) -> str:
    """A number without an exponent: large ones whole, small ones to 12 decimals, else "< 0.000…1"."""
    if abs(value) >= 1:
        return format(value, ",.0f")
    text = format(value, f",.{FIXED_DECIMALS}f").rstrip("0")
    if text.rstrip(".") in ("0", "-0"):
        return "< " + format(10.0**-FIXED_DECIMALS, f".{FIXED_DECIMALS}f")
    return text


class Words:
    """The catalogue and number formats of one language, bound for short call sites: ``w("key")``."""

    __slots__ = ("_digits", "_templates", "language")

    def __init__(self, language: Language = DEFAULT_LANGUAGE) -> None:
        self.language = language
        self._templates = templates(language)  # bound once: an embed looks up some 30 strings
        # Python formats numbers the English way; other languages swap the separators afterwards.
        self._digits = digit_swaps(language)

    def __call__(self, key: str, /, **values: object) -> str:
        return self._templates[key].fill(values)

    def num(self, value: float, spec: str = "g") -> str:
        """``value`` formatted by ``spec`` for the language, and never with an exponent: a reader
        should not have to decode 1e-06; what is too small to show says so."""
        text = format(value, spec)
        if "e" in text or "E" in text:
            text = _fixed(value)
        return text if self._digits is None else text.translate(self._digits)

    def short(self, value: float) -> str:
        """Short, exact-looking numbers: 7, 0.5, 70.6, 405, 1,234,567."""
        if 0.001 <= value < 999.99:
            # Most sizes, so the shortest path: six digits in this range have no exponent and no
            # thousands to group (grouping costs a third of the format).
            text = format(value, ".6g")
            return text if self._digits is None else text.translate(self._digits)
        return self.num(value, ",.6g" if abs(value) < 1e6 else ",.0f")

    def plain(self, value: float) -> str:
        """1000000 as "1,000,000", not "1e+06"."""
        return self.num(value, ",.0f") if float(value).is_integer() else self.num(value, ",")

    def gb(self, value: float) -> str:
        return f"{self.amount(value)} GB"

    def amount(self, value: float) -> str:
        """A figure in GB without its unit, where the unit is written once at the end of a sum."""
        if value >= 1 or value <= -1:
            # Nearly every figure, so the shortest path: a fixed-point format never has an exponent,
            # and below 999 there are no thousands to group (grouping costs a third of the format).
            text = format(value, ".1f" if -999 < value < 999 else ",.1f")
            return text if self._digits is None else text.translate(self._digits)
        if value == 0:
            return "0"
        if abs(value) < SMALLEST_GB:
            return f"< {self.num(SMALLEST_GB)}"
        return self.num(value, ".2g")

    def short_gb(self, value: float, space: str = " ") -> str:
        """GB as the answer's breakdown and LoRA line show them: as :meth:`amount`, but whole from
        100 GB on (1,342 GB), where a tenth says nothing and costs a phone's columns. ``space`` goes
        between the number and "GB"."""
        if value >= 100 or value <= -100:
            text = format(value, ",.0f")  # fixed-point: never an exponent
        elif value >= 1 or value <= -1:
            text = format(value, ".1f")  # as amount(), without the second call
        else:
            return f"{self.amount(value)}{space}GB"
        return f"{text if self._digits is None else text.translate(self._digits)}{space}GB"

    def a(self, formatted: str) -> str:
        """A formatted number with the English article its sound needs: "a 7", "an 8", "an 80", "an 11".

        English picks "a" or "an" by how the number is spoken, so the catalogue cannot write it: its
        English templates take the number with its article ("{a_capacity} GB card"). German's article
        depends on the noun's case and gender, not on the number, so it stays in the German text and
        the number comes bare.
        """
        if self.language is not Language.EN:
            return formatted
        return f"{'an' if _an_before(formatted) else 'a'} {formatted}"

    def count(self, count: float) -> str:
        """A parameter count as 41.9M or 8.03B (41,9 Mio. / 8,03 Mrd. in German)."""
        if count >= 1e9:
            return self("count.billion", n=self.num(count / 1e9, ",.3g"))
        if count >= 1e6:
            return self("count.million", n=self.num(count / 1e6, ",.3g"))
        return self.num(count, ",.0f")


@cache
def words_for(language: Language) -> Words:
    """One shared :class:`Words` per language, for the answer, which every ``/vram`` renders."""
    return Words(language)


def _an_before(formatted: str) -> bool:
    """Whether an English number is spoken starting with a vowel: eight…, eighteen…, eleven…

    8, 80, 800, 8.5 ("eight…"); 11 and 18 and the thousands and millions that start with them (11,000:
    "eleven thousand"); but 110 is "a hundred and ten" and 1,800 "one thousand eight hundred".
    """
    whole = re.sub(r"[^0-9]", "", formatted.split(".")[0])
    if not whole:
        return False
    return whole[0] == "8" or (len(whole) % 3 == 2 and whole[:2] in ("11", "18"))


def format_count(count: float, language: Language = DEFAULT_LANGUAGE) -> str:
    return Words(language).count(count)


def optimizer_name(optimizer: Optimizer, w: Words, precision: Precision = Precision.MIXED) -> str:
    """ "Mixed-precision Adam" in the seed's setup; "Adam, pure bf16" in another."""
    if precision is Precision.MIXED:
        return w(OPTIMIZER_NAME_KEYS[optimizer])
    method = w(OPTIMIZER_PLAIN_NAME_KEYS[optimizer])
    return w("method.with_setup", method=method, setup=w(PRECISION_NAME_KEYS[precision]))


def precision_name(precision: Precision, w: Words) -> str:
    return w(PRECISION_NAME_KEYS[precision])


def strategy_name(strategy: Strategy, w: Words) -> str:
    return w(STRATEGY_NAME_KEYS[strategy])
