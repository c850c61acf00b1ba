"""The shell commands README.md and docs/*.md tell a reader to type (fenced ``sh`` blocks; one
starting with ``# Example`` needs the reader's own values), and what the Makefile runs."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support import PROJECT_ROOT, readers_environment

HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


@dataclass(frozen=True)
class ShellBlock:
    document: str  # relative to the project's root, e.g. docs/deploying.md
    line: int  # of its opening fence
    heading: str  # of the section it is in
    lines: tuple[str, ...]  # as written, each command joined with its continuation lines

    @property
    def is_example(self) -> bool:
        first = next((line.strip() for line in self.lines if line.strip()), "")
        return first.startswith("# Example")

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(line for line in self.lines if without_comment(line))

    @property
    def bare_commands(self) -> tuple[str, ...]:
        return tuple(bare for bare in (without_comment(line) for line in self.lines) if bare)


def without_comment(line: str) -> str:
    """The command of a line, without a ``#`` comment (outside quotes, at the start of a word)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            line = line[:index]
            break
    return " ".join(line.split())


def documents() -> list[Path]:
    return [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]


def shell_blocks(document: Path, root: Path = PROJECT_ROOT) -> list[ShellBlock]:
    blocks: list[ShellBlock] = []
    heading = ""
    fence_line, language, body = 0, None, []
    for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            if language is None:
                fence_line, language, body = number, stripped[3:].strip() or "text", []
            else:
                if language == "sh":
                    blocks.append(ShellBlock(str(document.relative_to(root)), fence_line, heading, tuple(joined(body))))
                language = None
            continue
        if language is not None:
            body.append(line)
        elif match := HEADING.match(line):
            heading = match.group(2).strip()
    return blocks


def joined(lines: list[str]) -> list[str]:
    """Each ``\\`` continuation joined to the line it continues, as the shell reads them."""
    result: list[str] = []
    pending = ""
    for line in lines:
        if without_comment(line).endswith("\\"):
            pending += line.rstrip()[:-1].rstrip() + " "
            continue
        result.append(pending + (line.strip() if pending else line))
        pending = ""
    if pending:
        result.append(pending.rstrip())
    return result


def block_under(document: Path, heading_words: str) -> ShellBlock:
    """The first ``sh`` block of the section whose heading contains ``heading_words``."""
    found = [block for block in shell_blocks(document) if heading_words.lower() in block.heading.lower()]
    assert found, f"{document.name} has no sh block under a heading with {heading_words!r}"
    return found[0]


MAKEFILE = PROJECT_ROOT / "Makefile"
STAGES_SCRIPT = "scripts/test-stages.sh"
MAKE_VARIABLE = re.compile(r"^([A-Za-z_]\w*)\s*(?::=|\?=|=)\s*(.*?)\s*$")


def make_recipe(target: str, makefile: Path = MAKEFILE) -> tuple[str, ...]:
    """``target``'s recipe as make hands it to the shell: continuations joined, no ``@``."""
    lines = makefile.read_text(encoding="utf-8").splitlines()
    rule = re.compile(rf"^{re.escape(target)}\s*:(?![:=])")
    start = next((number for number, line in enumerate(lines) if rule.match(line)), None)
    assert start is not None, f"{makefile.name} has no target {target!r}"
    recipe = itertools.takewhile(lambda line: line.startswith("\t"), lines[start + 1 :])
    return tuple(command.lstrip("@-") for command in joined([line.strip() for line in recipe]))


def make_variables(makefile: Path = MAKEFILE) -> dict[str, str]:
    found = (MAKE_VARIABLE.match(line) for line in makefile.read_text(encoding="utf-8").splitlines())
    return {match.group(1): match.group(2) for match in found if match}


def stages_make_test_runs(makefile: Path = MAKEFILE) -> tuple[str, ...]:
    """The stages `make test` runs as `make test-<stage>` (scripts/test-stages.sh; a step ``a,b+c``: lanes)."""
    variables = make_variables(makefile)
    for command in make_recipe("test", makefile):
        words = re.sub(r"\$\(([A-Za-z_]\w*)\)", lambda ref: variables.get(ref.group(1), ""), command).split()
        script = next((index for index, word in enumerate(words) if word.endswith(STAGES_SCRIPT)), None)
        if script is not None:
            steps = [re.split(r"[+,]", word) for word in words[script + 1 :] if not word.startswith("-")]
            return tuple(stage for step in steps for stage in step if re.fullmatch(r"[a-z][a-z-]*", stage))
    return ()


def run_by_make_test(command: str, makefile: Path = MAKEFILE) -> bool:
    """Whether ``command`` is `make test-<stage>` for a stage `make test` runs (the suite runs it)."""
    words = without_comment(command).split()
    return (
        len(words) == 2
        and words[0] == "make"
        and words[1].startswith("test-")
        and words[1].removeprefix("test-") in stages_make_test_runs(makefile)
    )


def bench_commands(makefile: Path = MAKEFILE) -> tuple[str, ...]:
    """The commands `make bench` runs, as the docs write them: ``$(BIN)`` is the venv's ``.venv/bin``."""
    return tuple(command.replace("$(BIN)/", ".venv/bin/") for command in make_recipe("bench", makefile))


def run_benchmark(*arguments: str, timeout: float) -> str:
    """What a benchmark printed, run as a reader starts it; it must exit 0 (each fails its own checks)."""
    done = subprocess.run(
        [sys.executable, *arguments],
        cwd=PROJECT_ROOT,
        env=readers_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{arguments} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done.stdout
