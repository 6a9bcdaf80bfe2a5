"""The layers stay pure, and every catalogue key is spelled out where it is used.

- The estimate (numbers) and the presentation (words, embed JSON, terminal text) never import
  discord.py or the Discord runtime, and the estimate never imports words; the offline preview runs
  without discord.py loaded at all.
- A catalogue key appears in the code as a whole string literal (never built with an f-string), so
  a key used but missing, or defined but unused, is found by reading the source.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from bot.present.i18n import Language, catalogue
from tests.fresh_python import FreshSteps

PROJECT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(PROJECT / "bot").rglob("*.py"), *(PROJECT / "cogs").rglob("*.py")])
KEY_SHAPE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
# Strings shaped like a key that are not one: the chart's file name (``attachment://compare.png``).
NOT_KEYS = {"compare.png"}

FORBIDDEN = {
    # The numbers and the words never reach the network: Hub lookups live in bot/hub_lookup.py and
    # bot/runtime/hub_client.py, and hand their result over as an Architecture.
    "bot/estimate": ("discord", "bot.runtime", "cogs", "bot.present", "huggingface_hub", "bot.hub_lookup"),
    "bot/present": ("discord", "bot.runtime", "cogs", "huggingface_hub", "bot.hub_lookup"),
    "bot/preview.py": ("discord", "bot.runtime", "cogs"),
}


@functools.lru_cache(maxsize=256)
def parsed(source: str) -> ast.Module:
    """A source's tree, parsed once for the checkers of both kinds (a third of a CPU second for the
    bot's sources)."""
    return ast.parse(source)


def imported_modules(source: str) -> set[str]:
    """Every module a source imports, at any depth (function-level imports included)."""
    found: set[str] = set()
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def forbidden_imports(source: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        module
        for module in imported_modules(source)
        if any(module == prefix or module.startswith(f"{prefix}.") for prefix in forbidden)
    )


def test_the_checker_sees_an_import_inside_a_function() -> None:
    source = "def f():\n    from discord import Embed\n    import bot.runtime.errors\n"
    assert forbidden_imports(source, ("discord", "bot.runtime")) == ["bot.runtime.errors", "discord"]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_the_pure_layers_import_no_discord(layer: str) -> None:
    path = PROJECT / layer
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    assert files
    for file in files:
        assert forbidden_imports(file.read_text(encoding="utf-8"), FORBIDDEN[layer]) == [], file


def test_the_offline_preview_runs_without_discord_loaded(fresh_steps: FreshSteps) -> None:
    # A fresh interpreter's `vram-bot estimate 7 --optimizer sgd` (tests/fresh_python.py).
    step = fresh_steps.step("estimate")
    assert step.loaded_of("discord") == []
    assert "/vram params:7 optimizer:sgd" in step.stdout


def keys_in(source: str, sections: set[str]) -> tuple[set[str], list[str]]:
    """The catalogue-shaped string literals of a source, and the f-strings that build a key."""
    used: set[str] = set()
    built: list[str] = []
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY_SHAPE.match(node.value):
            if node.value.split(".", 1)[0] in sections and node.value not in NOT_KEYS:
                used.add(node.value)
        elif isinstance(node, ast.JoinedStr) and node.values:
            start = node.values[0]
            head = str(start.value) if isinstance(start, ast.Constant) else ""
            if head.split(".", 1)[0] in sections and "." in head and " " not in head:
                built.append(ast.unparse(node))
    return used, built


def test_the_key_checker_sees_a_built_key() -> None:
    used, built = keys_in('w("field.total")\nw(f"part.{name}")\n', {"field", "part"})
    assert used == {"field.total"}
    assert built == ["f'part.{name}'"]


def test_every_key_is_spelled_out_used_and_defined() -> None:
    defined = set(catalogue(Language.EN))
    sections = {key.split(".", 1)[0] for key in defined}
    used: set[str] = set()
    built: list[str] = []
    for file in SOURCES:
        file_used, file_built = keys_in(file.read_text(encoding="utf-8"), sections)
        used |= file_used
        built += [f"{file.relative_to(PROJECT)}: {text}" for text in file_built]
    assert built == [], "catalogue keys built with f-strings"
    assert sorted(used - defined) == [], "used but missing from the catalogue"
    assert sorted(defined - used) == [], "defined but never used"


def test_the_bot_starts_without_importing_huggingface_hub(fresh_steps: FreshSteps) -> None:
    """huggingface_hub costs about a tenth of a second to import: the bot's start-up leaves it to the
    first Hub lookup or to the warm-up after READY (bot.runtime.hub_client.warm_up)."""
    # In a fresh interpreter (tests/fresh_python.py), after the offline preview and a refused measure.
    assert fresh_steps.step("import the bot").loaded_of("huggingface_hub", "httpx2") == []
    warmed = fresh_steps.step("warm_up")
    assert warmed.loaded_of("huggingface_hub") != []
    assert warmed.loaded_of("bot.hub_lookup") == ["bot.hub_lookup (by 'warm_up')"]


# What the bot imports before READY (python -m bot: the command line, the runner, the cog); the
# answer's modules and the family declarations load after READY (bot.runtime.controls.warm_up_answers),
# where first needed.
START_MODULES = ("bot.cli", "bot.runtime.runner", "cogs.vram")
AFTER_READY = (
    "bot.estimate.core",
    "bot.present.views",
    "bot.estimate.families",
    "bot.estimate.family_traits",
)


def _module_file(module: str) -> Path | None:
    base = PROJECT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def import_time_imports(source: str) -> set[str]:
    """The project modules a source imports when it is imported: its top level and class bodies,
    without function bodies and ``if TYPE_CHECKING:`` blocks (``from bot.estimate import
    hybrid_saved`` names the module bot.estimate.hybrid_saved)."""
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.ClassDef):
                visit(node.body)

    visit(parsed(source).body)
    # A module imports its packages first.
    found |= {".".join(name.split(".")[:i]) for name in list(found) for i in range(1, name.count(".") + 1)}
    return {name for name in found if _module_file(name) is not None}


def imported_at_start(*roots: str) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        file = _module_file(module)
        if module in seen or file is None:
            continue
        seen.add(module)
        todo += import_time_imports(file.read_text(encoding="utf-8"))
    return seen


def test_the_import_walk_skips_functions_and_type_checking_blocks() -> None:
    source = (
        "from typing import TYPE_CHECKING\nfrom bot.estimate import options\n"
        "if TYPE_CHECKING:\n    from bot.estimate.core import Estimate\n"
        "def f():\n    from bot.present.views import render_message\n"
        "class C:\n    from bot.estimate.models import Architecture\n"
    )
    assert import_time_imports(source) == {
        "bot",
        "bot.estimate",
        "bot.estimate.options",
        "bot.estimate.models",
    }


def test_the_bot_reaches_ready_without_the_answers_modules() -> None:
    """The estimator, the renderers and the family declarations are an answer's work, imported after
    READY (the cold start, benchmarks/README.md): a module-level import of them on the start path
    brings them back."""
    started = imported_at_start(*START_MODULES)
    assert {"bot.cli", "bot.runtime.cog", "bot.estimate.request"} <= started  # the walk follows imports
    assert sorted(started & set(AFTER_READY)) == []
    from bot.runtime.controls import ANSWER_MODULE

    assert ANSWER_MODULE in AFTER_READY  # what the warm-up after READY imports
