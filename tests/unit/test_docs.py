"""The docs stay true to the tree: the layout names only paths that exist, the README stays a
front door, every relative link in the docs leads to a file, and every path a comment, a
docstring or a doc names is in the tree."""

import ast
import importlib
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 200

# A backticked path under one of these folders names a part of the layout.
LAYOUT_FOLDERS = ("publisher/", "tests/", "benchmarks/", "scripts/", "docs/", "assets/", "alembic/")
# Folders searched for a bare file name (a module named by its file alone) not at the top level.
SEARCHED_FOLDERS = ("publisher", "tests", "benchmarks", "scripts", "docs", "assets", "alembic")
BARE_FILE = re.compile(r"^(Makefile|Dockerfile|Containerfile|[\w.-]+\.[A-Za-z0-9]+|[\w.-]+/)$")
PLACEHOLDER = re.compile(r"[*<>{}\[\]$]|\.\.\.")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
MARKDOWN_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# A name in the code, written as its module's path, a dot, and the name (a method after its class).
CODE_NAME = re.compile(r"^(?P<module>publisher(?:/\w+)+)\.(?P<names>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")


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
    if target.exists() or names_code(path):
        return True
    if "/" in path:
        return False
    # A bare file name: at the top level, or a module the text names by its file name.
    return any(next((ROOT / folder).rglob(path), None) for folder in SEARCHED_FOLDERS)


def names_code(path: str) -> bool:
    """Whether ``path`` is a module's function, class or method, as a doc may write it
    (`publisher/returns/bounce_mailbox.read_once`), and the code has it."""
    match = CODE_NAME.match(path)
    if match is None or not (ROOT / f"{match['module']}.py").is_file():
        return False
    found: object = importlib.import_module(match["module"].replace("/", "."))
    for name in match["names"].split("."):
        found = getattr(found, name, None)
        if found is None:
            return False
    return True


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


# --- Every path a comment, a docstring or a doc names (the rule: the test's docstring) ------

# Folders whose Python files' comments and docstrings are read, with the top level's (rxconfig.py).
CHECKED_CODE = ("publisher", "tests", "benchmarks", "scripts", "alembic")
PATH_SUFFIXES = ("py", "md", "sh", "toml", "ini", "yaml", "txt", "eml")
NAMED_PATH = re.compile(
    r"(?<![\w./~:@*$\"'-])"
    r"([\w.-]+(?:/[\w.-]+)*\.(?:" + "|".join(PATH_SUFFIXES) + r")"
    r"|(?:" + "|".join(SEARCHED_FOLDERS) + r")/(?:[\w.-]+/)*)"
    r"(?![\w/*-])"
)
# Written by the build into .web/, served by the site: not files of the repository.
BUILT_FILES = frozenset({"robots.txt"})
# The browser's own files (assets/*.js, assets/*.css): their comments are read too.
CHECKED_ASSETS = ("js", "css")
# A comment in them: `// ...` at a line's start or after a space, or `/* ... */`.
SCRIPT_COMMENT = re.compile(r"(?:^|(?<=\s))//([^\n]*)|/\*(.*?)\*/", re.M | re.S)


def ignored_folders() -> tuple[str, ...]:
    """The plain folders .gitignore lists (`benchmarks/results/`): what is there is output."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return tuple(line.strip("/") + "/" for line in lines if line.endswith("/") and not PLACEHOLDER.search(line))


def comment_and_docstring_lines(source: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every comment and every docstring line of a module, as written."""
    docstrings = {
        (node.value.lineno, node.value.col_offset)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
        elif token.type == tokenize.STRING and token.start in docstrings:
            for offset, line in enumerate(token.string.splitlines()):
                yield token.start[0] + offset, line


def script_comment_lines(source: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of every comment of a script or a stylesheet."""
    for match in SCRIPT_COMMENT.finditer(source):
        first = source.count("\n", 0, match.start()) + 1
        for offset, line in enumerate((match.group(1) or match.group(2) or "").splitlines()):
            yield first + offset, line


def paths_named_in(text: str) -> list[str]:
    """The paths of this repository a line of text names (the rule: the test below)."""
    ignored = ignored_folders()
    return [
        path for path in NAMED_PATH.findall(text) if path not in BUILT_FILES and not (path + "/").startswith(ignored)
    ]


def named_path_exists(path: str, named_in: Path) -> bool:
    """Whether a path named in a file is there, from the root, from publisher/ or beside that file."""
    for base in (ROOT, ROOT / "publisher", named_in.parent):
        target = base / path
        if target.is_dir() if path.endswith("/") else target.is_file():
            return True
    return named_in.suffix == ".md" and "/" not in path and exists(path)


def naming_files() -> list[Path]:
    code = [*ROOT.glob("*.py"), *(path for folder in CHECKED_CODE for path in (ROOT / folder).rglob("*.py"))]
    assets = (path for suffix in CHECKED_ASSETS for path in (ROOT / "assets").rglob(f"*.{suffix}"))
    return markdown_files() + sorted(code) + sorted(assets)


def missing_named_paths(path: Path) -> list[str]:
    """`file:line: path` for each path the file's prose names that is not in the tree."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        lines: Iterator[tuple[int, str]] | enumerate[str] = enumerate(source.splitlines(), 1)
    elif path.suffix == ".py":
        lines = comment_and_docstring_lines(source)
    else:
        lines = script_comment_lines(source)
    return [
        f"{path.relative_to(ROOT)}:{number}: {named}"
        for number, line in lines
        for named in paths_named_in(line)
        if not named_path_exists(named, path)
    ]


def test_every_path_a_comment_or_a_doc_names_exists():
    """README.md, docs/*.md (every line), the comments and docstrings of every Python file
    at the top level and under CHECKED_CODE, and the comments of the scripts and stylesheets
    under assets/ name only paths that are in the tree. The rule,
    kept explicit so a reader can predict it:

    - A path is a word ending in .py .md .sh .toml .ini .yaml .txt or .eml
      (`server/middleware.py`, `alembic.ini`), or a top-level folder of the repo written with
      its slash (`publisher/web/pages/`). Other words (`site.js`, `Node.js`) are not paths.
    - Not a path: a word starting with `/`, `~`, `.` or `$` (`/proc/...`, `~/.cache/...`,
      `.web/build/client`); a part of a URL; a word in quotes (a value, `"qmail-hard.eml"`); a
      glob (`*_copy.py`); what the build writes (BUILT_FILES); what lies under a folder
      .gitignore lists (`benchmarks/results/`).
    - It must exist from the repo's root, from publisher/ (`rules/bounces.py`), or from the
      folder of the module naming it (a package's docstring naming its own modules). In the
      docs, a bare file name may also be anywhere in the layout: a sentence names its folder
      (docs/architecture.md's row of `publisher/server/` names its modules by file name).
    - Another project's file is named by its module (`reflex.app`), not by a path.

    Each path missing is named with the file and line that name it.
    """
    missing = [entry for path in naming_files() for entry in missing_named_paths(path)]
    assert not missing, "paths named that are not in the tree:\n" + "\n".join(missing)


def test_the_path_check_sees_what_it_checks():
    line = (
        "see server/middleware.py and `publisher/web/pages/` and tests/unit/test_docs.py::test_x, "
        "then alembic.ini; not /proc/self/status, ~/.cache/x.py, .web/build/client, site.js, "
        'https://example.com/a/b.py, "qmail-hard.eml", *_copy.py, robots.txt, benchmarks/results/x/'
    )
    assert paths_named_in(line) == [
        "server/middleware.py",
        "publisher/web/pages/",
        "tests/unit/test_docs.py",
        "alembic.ini",
    ]
    module = ROOT / "publisher" / "gateway" / "__init__.py"
    assert named_path_exists("server/middleware.py", module)
    assert named_path_exists("publisher/web/", module)
    assert named_path_exists("client.py", module)  # beside the module
    assert not named_path_exists("database.py", module)  # it is in publisher/storage/
    assert not named_path_exists("hosting/tabs.py", module)
    assert named_path_exists("production.py", DOCS / "architecture.md")
    source = '"""Names a/one.py\n\nand b/two.py."""\n\nX = "c/three.py"  # d/four.py\n'
    assert list(comment_and_docstring_lines(source)) == [
        (1, '"""Names a/one.py'),
        (2, ""),
        (3, 'and b/two.py."""'),
        (5, "# d/four.py"),
    ]
    script = '// Names a/one.py\nconst x = "/\\//g"; // b/two.py\n/* c/three.py\n   d/four.py */ f("e/five.py");\n'
    assert list(script_comment_lines(script)) == [
        (1, " Names a/one.py"),
        (2, " b/two.py"),
        (3, " c/three.py"),
        (4, "   d/four.py "),
    ]
