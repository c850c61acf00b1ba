"""The docs stay true to the tree: every path a doc (its layout too), a comment or a docstring names
exists, every relative link leads to a file, and the README stays a front door."""

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.doc_commands import documents
from tests.support import DOCS, PROJECT_ROOT

# Folders searched for a bare file name (a module named by its file alone) not at the top level.
SEARCHED_FOLDERS = ("publisher", "tests", "benchmarks", "scripts", "docs", "assets", "alembic")
PLACEHOLDER = re.compile(r"[*<>{}\[\]$]|\.\.\.")
MARKDOWN_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def without_fenced_code(text: str) -> str:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else line)
    return "\n".join(lines)


def test_the_readme_is_a_front_door_of_at_most_200_lines_with_a_layout():
    text = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, "README.md is too long: the manual goes in docs/"
    assert len(set(paths_named_in(text))) >= 10  # and its layout names the parts


@pytest.mark.parametrize("document", documents(), ids=lambda path: str(path.relative_to(PROJECT_ROOT)))
def test_every_relative_link_leads_to_a_file(document):
    broken = []
    for target in MARKDOWN_LINK.findall(without_fenced_code(document.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # another site, an email address, or a heading on the same page
        path = target.split("#")[0].split("?")[0]
        if not (document.parent / path).exists():
            broken.append(target)
    assert broken == [], f"{document.relative_to(PROJECT_ROOT)} links to files that do not exist"


# Folders whose Python files' comments and docstrings are read, with the top level's (rxconfig.py).
CHECKED_CODE = ("publisher", "tests", "benchmarks", "scripts", "alembic")
PATH_SUFFIXES = ("py", "md", "sh", "toml", "ini", "yaml", "txt", "eml")
NAMED_PATH = re.compile(
    r"(?<![\w./~:@*$\"'-])"
    r"([\w.-]+(?:/[\w.-]+)*\.(?:" + "|".join(PATH_SUFFIXES) + r")"
    r"|(?:" + "|".join(SEARCHED_FOLDERS) + r")/(?:[\w-]+(?:/[\w-]+)*/?)?|Dockerfile)"
    r"(?![\w/*-]|\.\w)"
)
# Written by the build, not files of the repository.
BUILT_FILES = frozenset({"robots.txt"})
CHECKED_ASSETS = ("js", "css")
SCRIPT_COMMENT = re.compile(r"(?:^|(?<=\s))//([^\n]*)|/\*(.*?)\*/", re.M | re.S)


def ignored_folders() -> tuple[str, ...]:
    """The plain folders .gitignore lists (`benchmarks/results/`): what is there is output."""
    lines = (PROJECT_ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
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
    for match in SCRIPT_COMMENT.finditer(source):
        first = source.count("\n", 0, match.start()) + 1
        for offset, line in enumerate((match.group(1) or match.group(2) or "").splitlines()):
            yield first + offset, line


def paths_named_in(text: str) -> list[str]:
    ignored = ignored_folders()
    return [
        path for path in NAMED_PATH.findall(text) if path not in BUILT_FILES and not (path + "/").startswith(ignored)
    ]


def named_path_exists(path: str, named_in: Path) -> bool:
    for base in (PROJECT_ROOT, PROJECT_ROOT / "publisher", named_in.parent):
        target = base / path
        if target.is_dir() if path.endswith("/") else target.exists():
            return True
    bare = named_in.suffix == ".md" and "/" not in path
    return bare and any(next((PROJECT_ROOT / folder).rglob(path), None) for folder in SEARCHED_FOLDERS)


def missing_named_paths(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        lines: Iterator[tuple[int, str]] | enumerate[str] = enumerate(source.splitlines(), 1)
    elif path.suffix == ".py":
        lines = comment_and_docstring_lines(source)
    else:
        lines = script_comment_lines(source)
    return [
        f"{path.relative_to(PROJECT_ROOT)}:{number}: {named}"
        for number, line in lines
        for named in paths_named_in(line)
        if not named_path_exists(named, path)
    ]


def test_every_path_a_comment_or_a_doc_names_exists():
    """A path (a word ending in PATH_SUFFIXES, a path under a top-level folder, Dockerfile; not quoted,
    not after `/ ~ . $`, not a glob) exists from the root, from publisher/ or beside the file naming it."""
    code = [
        *PROJECT_ROOT.glob("*.py"),
        *(path for folder in CHECKED_CODE for path in (PROJECT_ROOT / folder).rglob("*.py")),
    ]
    assets = [path for suffix in CHECKED_ASSETS for path in (PROJECT_ROOT / "assets").rglob(f"*.{suffix}")]
    missing = [entry for path in documents() + sorted(code) + sorted(assets) for entry in missing_named_paths(path)]
    assert not missing, "paths named that are not in the tree:\n" + "\n".join(missing)


def test_the_checks_see_what_they_check():
    line = (
        "see server/middleware.py and `publisher/web/pages/` and tests/unit/test_docs.py::test_x, then "
        "alembic.ini, publisher/cli  │  Dockerfile; not tests/support.RedisServer, /proc/self/status, ~/.cache/x.py, "
        '.web/build/client, site.js, https://example.com/a/b.py, "qmail-hard.eml", *_copy.py, robots.txt, '
        "benchmarks/results/x/"
    )
    assert paths_named_in(line) == [
        "server/middleware.py",
        "publisher/web/pages/",
        "tests/unit/test_docs.py",
        "alembic.ini",
        "publisher/cli",
        "Dockerfile",
    ]
    module = PROJECT_ROOT / "publisher" / "mail" / "__init__.py"
    found = ("server/middleware.py", "publisher/web/", "publisher/web", "outbox.py")  # the last: beside the module
    missing = ("publisher/hosting", "tables.py", "hosting/tabs.py")  # the second: only in publisher/storage/
    assert [path for path in (*found, *missing) if named_path_exists(path, module)] == list(found)
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
    links = MARKDOWN_LINK.findall("[a](docs/x.md#y) ![b](docs/home.png) [c](https://reflex.dev)")
    assert links == ["docs/x.md#y", "docs/home.png", "https://reflex.dev"]
