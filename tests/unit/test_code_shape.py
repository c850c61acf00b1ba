"""The shape of publisher/'s code: every function at most 60 lines, every module's name its own,
and a module of the site imported under its own name, never `import ... as ...`."""

import ast
from collections import defaultdict
from pathlib import Path

from tests.support import DOCS, PROJECT_ROOT

PUBLISHER = PROJECT_ROOT / "publisher"
IMPORTING_FOLDERS = ("publisher", "tests", "benchmarks", "scripts", "alembic")
FUNCTION_MAX_LINES = 60


def function_lengths(source: str) -> dict[str, int]:
    return {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None
    }


def test_every_function_in_publisher_is_at_most_60_lines_as_the_testing_guide_says():
    long = {  # `cli/main.py:run` -> its lines
        f"{path.relative_to(PUBLISHER)}:{name}": lines
        for path in sorted(PUBLISHER.rglob("*.py"))
        for name, lines in function_lengths(path.read_text(encoding="utf-8")).items()
        if lines > FUNCTION_MAX_LINES
    }
    assert long == {}, f"functions over {FUNCTION_MAX_LINES} lines: split each where a name explains a part"
    text = " ".join((DOCS / "testing.md").read_text(encoding="utf-8").split())
    assert f"every function in `publisher/` is at most {FUNCTION_MAX_LINES} lines" in text


def module_names(package: Path) -> dict[str, list[str]]:
    """Each module's and package's name under ``package`` -> where they are (`limits/tabs.py`)."""
    places = defaultdict(list)
    for path in sorted(package.rglob("*.py")):
        if path.name != "__init__.py":
            places[path.stem].append(str(path.relative_to(package)))
    for path in sorted(package.rglob("__init__.py")):
        if path.parent != package:
            places[path.parent.name].append(str(path.parent.relative_to(package)) + "/")
    return dict(places)


def shared_names(package: Path) -> dict[str, list[str]]:
    return {name: places for name, places in module_names(package).items() if len(places) > 1}


def test_no_two_modules_in_publisher_share_a_name():
    shared = shared_names(PUBLISHER)
    assert shared == {}, "modules (or packages) of one name in several places: name each for what it holds"


def aliased_imports(source: str) -> list[str]:
    """Each `import publisher... as x` and `from publisher... import y as x` of a module, as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name} as {a.asname}" for a in node.names if a.asname and _ours(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module or ""):
            found += [f"from {node.module} import {a.name} as {a.asname}" for a in node.names if a.asname]
    return found


def _ours(module: str) -> bool:
    return module == "publisher" or module.startswith("publisher.")


def test_no_module_of_the_site_is_imported_under_another_name():
    files = [
        *PROJECT_ROOT.glob("*.py"),
        *(path for folder in IMPORTING_FOLDERS for path in (PROJECT_ROOT / folder).rglob("*.py")),
    ]
    aliased = [
        f"{path.relative_to(PROJECT_ROOT)}: {line}"
        for path in sorted(files)
        for line in aliased_imports(path.read_text(encoding="utf-8"))
    ]
    assert aliased == [], "imported under another name: import it under its own (rename a module that clashes)"


def test_the_checks_see_what_they_check(tmp_path):
    source = 'def short():\n    """Doc."""\n    return 1\n\n\nclass A:\n    async def method(self):\n'
    source += "        x = 1\n" * 60
    assert function_lengths(source) == {"short": 3, "method": 61}
    for place in ("one/queue.py", "queue/__init__.py", "queue/jobs.py", "two/jobs.py", "two/__init__.py"):
        (tmp_path / place).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / place).write_text("")
    (tmp_path / "one" / "__init__.py").write_text("")
    assert shared_names(tmp_path) == {"queue": ["one/queue.py", "queue/"], "jobs": ["queue/jobs.py", "two/jobs.py"]}
    source = (
        "import publisher.content.site as site\nfrom publisher.content import books as words\n"
        "from publisher.rules import limits\nimport sqlalchemy as sa\nfrom . import x as y\n"
    )
    assert aliased_imports(source) == [
        "import publisher.content.site as site",
        "from publisher.content import books as words",
    ]
