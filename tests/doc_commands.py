"""The shell commands README.md and docs/*.md tell a reader to type, read from the docs themselves.

A fenced block tagged ``sh`` holds commands, one a line (a line ending in ``\\`` goes on on the
next); ``#`` starts a comment outside quotes. A block whose first line is a comment starting
with ``# Example`` is an example the reader fills in with their own values (their domain, their
provider's addresses): the reader sees the mark, and tests/unit/test_documented_commands.py
holds every other command to a test that runs it as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_MARK = "# Example"
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
        return first.startswith(EXAMPLE_MARK)

    @property
    def commands(self) -> tuple[str, ...]:
        """Each command as written, trailing comment and all (what the test types)."""
        return tuple(line for line in self.lines if without_comment(line))

    @property
    def bare_commands(self) -> tuple[str, ...]:
        """Each command without its comment, spaces squeezed: what the mapping names."""
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
    """The document's ``sh`` blocks, in order (``document`` named relative to ``root``)."""
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
    """The lines with each ``\\`` continuation joined to the line it continues, as the shell reads them."""
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
