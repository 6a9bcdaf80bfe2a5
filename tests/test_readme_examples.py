"""Every example in README.md holds: each ``vram-bot …`` command and each ``/vram …`` line is run.

The examples are found in the README itself, so one added later is run too:
- a ``vram-bot …`` command (in an ``sh`` block or in running text) runs in-process through
  ``bot.cli.main`` and must exit as a ``# exit N`` comment on its line says (0 without one);
- an ``sh`` block of one command followed by a plain code block: the command prints that block (line
  for line; a ``…`` line stands for any lines);
- a ``/vram …`` line is read as the bot reads a pasted command line and estimated (a Hub repo the
  bot would look up counts as read);
- a ``toml`` block is a settings file the bot starts with;
- a command written with ``…`` is a sketch, not an example. Commands this suite cannot run are in
  NOT_RUN with the tests that cover them; anything else unrunnable fails here, by name. (The Docker
  commands need a Docker engine, which CI lacks: tests/test_container.py reads the files they use.)
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.cli import main
from bot.estimate.core import estimate
from bot.estimate.request import InvalidRequest
from bot.present.command_line import UnreadableCommand, parse_command_line
from bot.runtime.settings import load_settings

README = Path(__file__).resolve().parents[1] / "README.md"
# What moved out of the README, beside the code it describes.
DOCUMENTS = ("bot/README.md", "bot/estimate/README.md", "benchmarks/README.md")

# What this suite does not run, by the command's first words, with where it is tested instead.
# (A sub-command's bare name in a sentence, `vram-bot health`, is a name, not an example.)
NOT_RUN = {
    "vram-bot": "runs the bot against Discord: tests/test_runner.py, tests/test_vram_e2e.py",
    "vram-bot http": "serves interactions until stopped: tests/test_http.py, tests/test_http_load.py",
}

_FENCE = re.compile(r"^```(\w*)$")
_SPAN = re.compile(r"`([^`]+)`")  # a code span may wrap onto the next line
# A vram-bot command in a shell line: where a command starts (the line's start, after an operator,
# `then`/`else` or variables set for it), up to an operator, a comment or the span's end; not
# `docker run --name vram-bot`.
_COMMAND = re.compile(
    r"(?:^|[;&|]\s*|\bthen\s+|\belse\s+)(?:[A-Z_]+=\S*\s+)*((?:\.venv/bin/)?vram-bot(?:\s[^;&|#`]*)?)"
)
_SUB_COMMAND_NAME = re.compile(r"^vram-bot [a-z]+$")  # `vram-bot estimate` in a sentence: a name
_EXIT = re.compile(r"#.*\bexit (\d+)")


@dataclass(frozen=True)
class Example:
    command: str  # as written, without the .venv/bin/ prefix
    exit_code: int = 0
    output: str | None = None  # the block the README shows it printing


def _blocks(text: str) -> tuple[list[tuple[str, str]], str]:
    """The fenced blocks (language, body) in order, and the running text with the blocks left out."""
    blocks: list[tuple[str, str]] = []
    prose: list[str] = []
    language: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        fence = _FENCE.match(line)
        if language is None and fence is not None:
            language, body = fence.group(1), []
        elif language is not None and line == "```":
            blocks.append((language, "\n".join(body)))
            language = None
        elif language is not None:
            body.append(line)
        else:
            prose.append(line)
    return blocks, "\n".join(prose)


def _commands(line: str) -> list[str]:
    return [found.strip().removeprefix(".venv/bin/") for found in _COMMAND.findall(line)]


def readme_examples(text: str) -> tuple[list[Example], list[str]]:
    """The README's ``vram-bot`` examples and its ``/vram`` lines."""
    blocks, prose = _blocks(text)
    examples: list[Example] = []
    for index, (language, body) in enumerate(blocks):
        if language != "sh":
            continue
        lines = [line for line in body.splitlines() if _commands(line)]
        after = blocks[index + 1] if index + 1 < len(blocks) else None
        shows_output = len(lines) == 1 and after is not None and after[0] == ""
        for line in lines:
            wanted = _EXIT.search(line)
            for command in _commands(line):
                examples.append(
                    Example(
                        command,
                        int(wanted.group(1)) if wanted else 0,
                        after[1] if shows_output and after is not None else None,
                    )
                )
    slash_lines: list[str] = []
    for span in (" ".join(found.split()) for found in _SPAN.findall(prose)):
        examples += [Example(command) for command in _commands(span)]
        if span.startswith("/vram "):
            slash_lines.append(span)
    runnable = [
        e
        for e in examples
        if "…" not in e.command and "..." not in e.command and not _SUB_COMMAND_NAME.match(e.command)
    ]
    return runnable, [line for line in slash_lines if "…" not in line]


def _not_run(command: str) -> str | None:
    words = [word for word in shlex.split(command) if "=" not in word or word.startswith("-")]
    for length in (2, 1):
        reason = NOT_RUN.get(" ".join(words[:length]))
        if reason is not None and (length == 2 or len(words) == 1):
            return reason
    return None


FOUND, SLASH_LINES = readme_examples(README.read_text(encoding="utf-8"))
EXAMPLES = [example for example in FOUND if _not_run(example.command) is None]


def _run(command: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(shlex.split(command)[1:])
        except SystemExit as exited:  # --help, --version and usage errors exit through argparse
            code = int(exited.code or 0)
    return code, out.getvalue(), err.getvalue()


def _shows(output: str, shown: str) -> bool:
    """The output prints the shown block: line for line, a "…" line standing for any lines."""
    if "…" not in shown.splitlines():
        return output.strip() == shown.strip()
    pattern = ".*".join(re.escape(part.strip("\n")) for part in re.split(r"^…$", shown, flags=re.MULTILINE))
    return re.search(pattern, output, flags=re.DOTALL) is not None


def test_the_readme_has_examples_of_each_kind() -> None:
    # The reader finds them: the answer at the top with its output, both --check outcomes, /vram lines.
    assert any(e.command == "vram-bot estimate 7 --optimizer adam8bit" and e.output for e in EXAMPLES)
    assert "vram-bot --version" in {e.command for e in EXAMPLES}  # a span that wraps a line is read too
    assert {e.exit_code for e in EXAMPLES if e.command.endswith("--check")} == {0, 1}
    assert "/vram params:7 optimizer:adam8bit" in SLASH_LINES


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.command)
def test_a_readme_command_does_what_the_readme_shows(example: Example) -> None:
    code, out, err = _run(example.command)
    assert code == example.exit_code, (
        f"{example.command}: exit {code}, README says {example.exit_code} (a command this suite cannot"
        f" run goes into NOT_RUN with the test that covers it)\n{err}"
    )
    if example.output is not None:
        assert _shows(out, example.output), f"{example.command} prints:\n{out}"


@pytest.mark.parametrize("line", SLASH_LINES)
def test_a_readme_vram_line_is_a_command_the_bot_answers(line: str) -> None:
    request = None
    try:
        request = parse_command_line(line)
    except UnreadableCommand as exc:
        cause = exc.__cause__
        problems = [p.code for p in cause.problems] if isinstance(cause, InvalidRequest) else [str(exc)]
    if request is None:
        # A Hub repo the bot looks up when asked (no network here): read, and waiting for the Hub.
        assert problems == ["unresolved_repo"], line
        return
    assert estimate(request).total_gb > 0


TOML_BLOCKS = [
    body for language, body in _blocks(README.read_text(encoding="utf-8"))[0] if language == "toml"
]


@pytest.mark.parametrize("body", TOML_BLOCKS)
def test_a_readme_settings_file_is_one_the_bot_reads(body: str, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(body, encoding="utf-8")
    settings = load_settings(config)  # a ConfigError names what is wrong
    for key in re.findall(r"^(\w+) =", body, flags=re.MULTILINE):
        assert getattr(settings, key) is not None, key


def test_not_run_names_only_commands_the_readme_shows() -> None:
    shown = {" ".join(shlex.split(e.command)[:2]) for e in FOUND if _not_run(e.command)}
    shown |= {e.command for e in FOUND if _not_run(e.command)}
    assert set(NOT_RUN) <= shown, "NOT_RUN lists a command the README no longer shows"


def test_the_reader_sees_exit_codes_outputs_and_sketches() -> None:
    text = (
        "Run `vram-bot estimate 7` or `vram-bot estimate … --check`.\n\n"
        "```sh\nvram-bot estimate 9 --check  # exit 1\n```\n\n```\nline\n…\n```\n"
    )
    examples, _ = readme_examples(text)
    assert examples == [Example("vram-bot estimate 9 --check", 1, "line\n…"), Example("vram-bot estimate 7")]
    assert _shows("a\nline\nb\n", "line\n…")
    assert not _shows("a\nb\n", "line\n…")


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a document's headings: lower case, spaces to '-', punctuation dropped."""
    headings = re.findall(r"^#+ (.+)$", markdown, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_the_readmes_links_lead_to_files_and_headings_that_exist() -> None:
    # The README links to what moved beside the code (the derivation, the benchmarks, the guide),
    # and those link back.
    documents = [README, *(README.parent / name for name in DOCUMENTS)]
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text(encoding="utf-8"))
    assert set(DOCUMENTS) <= {link.partition("#")[0] for link in links}
    for document in documents:
        for link in re.findall(r"\]\(([^)\s]+)\)", document.read_text(encoding="utf-8")):
            if "://" in link:
                continue
            path, _, anchor = link.partition("#")
            target = (document.parent / path).resolve() if path else document
            assert target.is_file(), (document.name, link)
            if anchor:
                assert anchor in _anchors(target.read_text(encoding="utf-8")), (document.name, link)
