"""The shape of publisher/'s code, held by tests so it does not drift back: every function
fits on a screen (at most 60 lines, from its `def` to its last line, docstring included), so a
long one is split where a name explains each part."""

import ast
from pathlib import Path

PUBLISHER = Path(__file__).resolve().parents[2] / "publisher"
FUNCTION_MAX_LINES = 60


def function_lengths(source: str) -> dict[str, int]:
    """The number of lines of each function of a module (methods and nested ones too), by name."""
    return {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None
    }


def long_functions() -> dict[str, int]:
    """Path in publisher/ and name (`cli/main.py:run`) -> lines, of each function over FUNCTION_MAX_LINES."""
    found = {}
    for path in sorted(PUBLISHER.rglob("*.py")):
        for name, lines in function_lengths(path.read_text(encoding="utf-8")).items():
            if lines > FUNCTION_MAX_LINES:
                found[f"{path.relative_to(PUBLISHER)}:{name}"] = lines
    return found


def test_every_function_in_publisher_is_at_most_60_lines():
    assert long_functions() == {}, f"functions over {FUNCTION_MAX_LINES} lines: split each where a name explains a part"


def test_the_testing_guide_states_the_same_limit():
    text = " ".join((PUBLISHER.parent / "docs" / "testing.md").read_text(encoding="utf-8").split())
    assert f"every function in `publisher/` is at most {FUNCTION_MAX_LINES} lines" in text


def test_the_length_check_counts_from_def_to_the_last_line():
    source = 'def short():\n    """Doc."""\n    return 1\n\n\nclass A:\n    async def method(self):\n'
    source += "        x = 1\n" * 60
    assert function_lengths(source) == {"short": 3, "method": 61}
