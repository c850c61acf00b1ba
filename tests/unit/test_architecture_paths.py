"""docs/architecture.md, "Three paths in": every function a narration names is in the code.

A narration names each function in backticks as `package/module.function` under publisher/
(a class's method after its class), and a module at the top of publisher/ without it
(`mailing_list.sign_up`: the docs tests read a backticked `publisher/...` as a path). The
modules are read as source (ast), not imported: a name is there when its module defines it
at the top level, or, after a class, in the class's body.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "publisher"

SECTION = "## Three paths in"
MOST_STEPS = 10
OWN_NARRATIONS = ("A subscribe, from the press to the SMTP send", "A contact message")
BOUNCE_NARRATION = "A bounce, from the mailbox to the reader's status"
# `web/submissions.send`, `mailing_list.sign_up`, `gateway/embedded.EmbeddedList.subscribe`
NAMED_FUNCTION = re.compile(r"`([a-z_]+(?:/[a-z_]+)*\.[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)`")
STEP = re.compile(r"^\d+\. ", re.M)
FILE_SUFFIXES = (".py", ".md", ".toml", ".txt", ".sh", ".yaml", ".ini")


def narrations(text: str) -> dict[str, str]:
    """Each narration of the section, by its heading (### ...)."""
    start = text.index(f"\n{SECTION}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    parts = re.split(r"^### (.+)$", section, flags=re.M)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2], strict=True)}


def named_functions(text: str) -> list[str]:
    """The names a narration gives in backticks as `package/module.function`, every one that is
    not a file (`PUBLISHER_NOTIFY_TO` and `docs/architecture.md` are not names)."""
    return [name for name in NAMED_FUNCTION.findall(text) if not name.endswith(FILE_SUFFIXES)]


def module_file(module: str) -> Path | None:
    for candidate in (PACKAGE / f"{module}.py", PACKAGE / module.removesuffix("/__init__") / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def module_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _defined_in(body: list[ast.stmt], name: str) -> ast.stmt | None:
    """The statement of ``body`` that defines ``name``: a def, a class or an assignment."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return node
    return None


def missing_part(name: str) -> str | None:
    """Why ``name`` is not in the code (its module, or the first part not defined); None when it is."""
    module, _, attributes = name.partition(".")
    path = module_file(module)
    if path is None:
        return f"{name}: no module publisher/{module}"
    body: list[ast.stmt] = module_tree(path).body
    for part in attributes.split("."):
        node = _defined_in(body, part)
        if node is None:
            return f"{name}: {part} is not defined in {path.relative_to(ROOT)}"
        body = node.body if isinstance(node, ast.ClassDef) else []
    return None


def test_the_section_has_the_three_narrations_and_each_takes_at_most_ten_steps():
    found = narrations(ARCHITECTURE.read_text(encoding="utf-8"))
    assert set(found) >= {*OWN_NARRATIONS, BOUNCE_NARRATION}, sorted(found)
    for heading in OWN_NARRATIONS:
        assert 1 <= len(STEP.findall(found[heading])) <= MOST_STEPS, heading
        assert named_functions(found[heading]), heading
    for heading, body in found.items():
        assert len(STEP.findall(body)) <= MOST_STEPS, heading


@pytest.mark.parametrize("heading", [*OWN_NARRATIONS, BOUNCE_NARRATION])
def test_every_function_a_narration_names_is_in_the_code(heading):
    body = narrations(ARCHITECTURE.read_text(encoding="utf-8")).get(heading, "")
    missing = [why for name in named_functions(body) if (why := missing_part(name)) is not None]
    assert not missing, f"{heading}: names that are not in the code:\n" + "\n".join(missing)


def test_the_check_sees_a_name_that_is_not_there():
    text = (
        "1. `web/submissions.send` then `gateway/embedded.EmbeddedList.subscribe` and "
        "`mailing_list.sign_up`, `gateway/__init__.configured_gateway`; not `PUBLISHER_NOTIFY_TO` "
        "nor `docs/architecture.md`.\n2. `web/submissions.no_such_function`, `no_such_module.send`, "
        "`gateway/embedded.EmbeddedList.no_such_method`, `web/submissions.send.inner`"
    )
    names = named_functions(text)
    assert names == [
        "web/submissions.send",
        "gateway/embedded.EmbeddedList.subscribe",
        "mailing_list.sign_up",
        "gateway/__init__.configured_gateway",
        "web/submissions.no_such_function",
        "no_such_module.send",
        "gateway/embedded.EmbeddedList.no_such_method",
        "web/submissions.send.inner",
    ]
    assert [missing_part(name) is None for name in names] == [True] * 4 + [False] * 4
    assert len(STEP.findall(text)) == 2
