"""The docs stay true to the tree: the layout names only paths that exist, the README stays a
front door, and every relative link in the docs leads to a file."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 200

# A backticked path under one of these folders names a part of the layout.
LAYOUT_FOLDERS = ("publisher/", "tests/", "benchmarks/", "scripts/", "docs/", "assets/", "alembic/")
# Folders searched for a bare file name (`tabs.py`) that is not at the top level.
SEARCHED_FOLDERS = ("publisher", "tests", "benchmarks", "scripts", "docs", "assets", "alembic")
BARE_FILE = re.compile(r"^(Makefile|Dockerfile|Containerfile|[\w.-]+\.[A-Za-z0-9]+|[\w.-]+/)$")
PLACEHOLDER = re.compile(r"[*<>{}\[\]$]|\.\.\.")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
MARKDOWN_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


def without_fenced_code(text: str) -> str:
    """The text with the lines of fenced code blocks blanked (their words are not links)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else line)
    return "\n".join(lines)


def section(text: str, title_word: str) -> str:
    """The first section whose heading contains the word, up to the next heading of its level or above."""
    lines = text.splitlines()
    fenced = False
    start = level = None
    for number, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if not match:
            continue
        if start is None and title_word.lower() in match.group(2).lower():
            start, level = number, len(match.group(1))
        elif start is not None and len(match.group(1)) <= level:
            return "\n".join(lines[start:number])
    assert start is not None, f"no heading with {title_word!r}"
    return "\n".join(lines[start:])


def named_paths(text: str) -> set[str]:
    """Every path the text names in backticks, each backticked span being the path and nothing else;
    and, in fenced code (a tree drawn as text), each line's first word when it is such a path."""
    candidates = set(CODE_SPAN.findall(without_fenced_code(text)))
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced and line.split():
            word = line.split()[0]
            if word.startswith(LAYOUT_FOLDERS):
                candidates.add(word)
    paths = set()
    for candidate in candidates:
        candidate = candidate.strip()
        if not candidate or any(c.isspace() for c in candidate) or PLACEHOLDER.search(candidate):
            continue
        candidate = candidate.split("::")[0]  # a test's node id names its file
        if candidate.startswith(LAYOUT_FOLDERS) or BARE_FILE.match(candidate):
            paths.add(candidate)
    return paths


def exists(path: str) -> bool:
    target = ROOT / path
    if path.endswith("/"):
        return target.is_dir()
    if target.exists():
        return True
    if "/" in path:
        return False
    # A bare file name: at the top level, or a module the text names by its file name.
    return any(next((ROOT / folder).rglob(path), None) for folder in SEARCHED_FOLDERS)


def layout_texts() -> dict[str, str]:
    texts = {"README.md (layout)": section(README.read_text(encoding="utf-8"), "layout")}
    architecture = DOCS / "architecture.md"
    if architecture.exists():
        texts["docs/architecture.md"] = architecture.read_text(encoding="utf-8")
    return texts


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def test_the_layout_section_names_paths():
    assert len(named_paths(layout_texts()["README.md (layout)"])) >= 10


@pytest.mark.parametrize("name", sorted(layout_texts()))
def test_every_path_the_layout_names_exists(name):
    missing = sorted(path for path in named_paths(layout_texts()[name]) if not exists(path))
    assert missing == [], f"{name} names paths that do not exist"


def test_the_readme_is_a_front_door_of_at_most_200_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the manual goes in docs/"


@pytest.mark.parametrize("document", markdown_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file(document):
    broken = []
    for target in MARKDOWN_LINK.findall(without_fenced_code(document.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # another site, an email address, or a heading on the same page
        path = target.split("#")[0].split("?")[0]
        if not (document.parent / path).exists():
            broken.append(target)
    assert broken == [], f"{document.relative_to(ROOT)} links to files that do not exist"


def test_the_checks_see_what_they_check(tmp_path):
    text = "\n".join(
        [
            "## Layout",
            "- `publisher/web/`: pages; `publisher/no_such.py` and `Makefile` and `make run` and `tests/*.py`",
            "```",
            "tests/unit/      no servers",
            "```",
            "## Next",
            "- `publisher/not_in_layout.py`",
        ]
    )
    layout = section(text, "layout")
    assert named_paths(layout) == {"publisher/web/", "publisher/no_such.py", "Makefile", "tests/unit/"}
    assert [path for path in sorted(named_paths(layout)) if not exists(path)] == ["publisher/no_such.py"]
    links = MARKDOWN_LINK.findall("[a](docs/x.md#y) ![b](docs/home.png) [c](https://reflex.dev)")
    assert links == ["docs/x.md#y", "docs/home.png", "https://reflex.dev"]
