"""Every command README.md and docs/*.md tell a reader to type is run as written by a test (one
that reads its block: ``block_under``), by the Makefile (`make test`'s stages, `make bench`), by
RUN_ELSEWHERE's file, or its block is marked ``# Example``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.doc_commands import (
    STAGES_SCRIPT,
    ShellBlock,
    bench_commands,
    block_under,
    documents,
    make_recipe,
    run_by_make_test,
    shell_blocks,
    stages_make_test_runs,
)
from tests.support import PROJECT_ROOT

TESTS = PROJECT_ROOT / "tests"
READS_A_BLOCK = re.compile(r'block_under\(\s*DOCS\s*/\s*"([\w.-]+\.md)",\s*"([^"]+)"\s*\)')

# Commands run as written by a file other than a test: the file, and the text in it that runs it.
RUN_ELSEWHERE: dict[str, tuple[str, str]] = {
    "make run": ("tests/development/conftest.py", 'MAKE_RUN = ["make", "--no-print-directory", "run"]'),
    "make test": ("Makefile", f"@{STAGES_SCRIPT} "),
    "pip install -e '.[build]'": ("Makefile", "-m pip install --quiet --no-compile -e '.[build]'"),
    "pip install -e '.[build,test]'": ("Makefile", "-m pip install --quiet --no-compile -e '.[build,test]'"),
    "pip install '.[postgres]'": ("Dockerfile", "p['dependencies'] + p['optional-dependencies']['postgres']"),
}


def all_blocks() -> list[ShellBlock]:
    return [block for document in documents() for block in shell_blocks(document)]


def blocks_read_by_tests() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if path == Path(__file__):
            continue  # its own examples
        for document, words in READS_A_BLOCK.findall(path.read_text(encoding="utf-8")):
            found.setdefault((f"docs/{document}", words), []).append(str(path.relative_to(PROJECT_ROOT)))
    return found


def run_by_a_test(block: ShellBlock, read: dict[tuple[str, str], list[str]]) -> list[str]:
    return [
        test
        for (document, words), tests in read.items()
        if document == block.document and block_under(PROJECT_ROOT / document, words).line == block.line
        for test in tests
    ]


def unaccounted() -> list[str]:
    read = blocks_read_by_tests()
    benched = bench_commands()
    missing = []
    for block in all_blocks():
        if block.is_example or run_by_a_test(block, read):
            continue
        missing += [
            f"{block.document}:{block.line}: {command}"
            for command in block.bare_commands
            if not (command in RUN_ELSEWHERE or run_by_make_test(command) or command in benched)
        ]
    return missing


def test_every_documented_command_is_run_by_a_test_or_the_makefile_or_marked_and_every_block_read_exists():
    missing = unaccounted()
    assert not missing, (
        "commands the docs tell a reader to type that no test (nor `make test`'s stages, nor `make bench`) runs "
        "as written: run their block from a test (tests/doc_commands.py block_under), or start the block with "
        "'# Example: <whose values>'\n" + "\n".join(missing)
    )
    for (document, words), tests in blocks_read_by_tests().items():
        headings = [block.heading for block in shell_blocks(PROJECT_ROOT / document)]
        assert any(words.lower() in heading.lower() for heading in headings), (document, words, tests)


@pytest.mark.parametrize("command", sorted(RUN_ELSEWHERE))
def test_what_runs_a_command_elsewhere_still_runs_it_and_the_docs_still_say_it(command):
    path, text = RUN_ELSEWHERE[command]
    assert text in (PROJECT_ROOT / path).read_text(encoding="utf-8"), f"{path} no longer runs `{command}`"
    documented = {bare for block in all_blocks() for bare in block.bare_commands}
    assert command in documented, f"`{command}` is in no doc any more: drop it from RUN_ELSEWHERE"


def test_examples_are_marked_where_the_reader_sees_them():
    examples = [block for block in all_blocks() if block.is_example]
    assert examples, "no block is marked as an example?"
    for block in examples:
        first = next(line for line in block.lines if line.strip())
        assert re.match(r"# Example: \S", first.strip()), f"{block.document}:{block.line}: say whose values: {first}"


def test_the_check_sees_what_it_checks(tmp_path: Path):
    document = tmp_path / "guide.md"
    document.write_text(
        "# Guide\n\n## Run it\n\n```sh\nmake run   # serve\ndocker run \\\n  -e A='x # y' image\n```\n\n"
        "## Yours\n\n```sh\n# Example: your domain\ncurl https://example.com\n```\n"
    )
    run, yours = shell_blocks(document, root=tmp_path)
    assert run.bare_commands == ("make run", "docker run -e A='x # y' image")
    assert run.commands == ("make run   # serve", "docker run -e A='x # y' image")
    assert (run.document, run.heading, run.is_example, yours.is_example) == ("guide.md", "Run it", False, True)
    assert READS_A_BLOCK.findall('block_under(DOCS / "guide.md", "Run it")') == [("guide.md", "Run it")]
    makefile = tmp_path / "Makefile"
    makefile.write_text(
        "BIN := $(abspath .venv)/bin\nSTAGES ?= services site\nx: y\n\techo x\n"
        "test: setup\n\t@echo first\n\t@scripts/test-stages.sh --all lint \\\n\t\tunit,dev+docs $(STAGES)\n"
        "# the end of the recipe\ntest-unit:\n\t$(BIN)/python -m pytest tests/unit\n"
        "bench: build\n\t$(BIN)/python benchmarks/house.py\n\t-$(BIN)/python benchmarks/visits.py --part flush\n"
    )
    assert make_recipe("test", makefile) == ("echo first", "scripts/test-stages.sh --all lint unit,dev+docs $(STAGES)")
    assert stages_make_test_runs(makefile) == ("lint", "unit", "dev", "docs", "services", "site")
    assert run_by_make_test("make test-site", makefile) and not run_by_make_test("make test-container", makefile)
    assert bench_commands(makefile) == (
        ".venv/bin/python benchmarks/house.py",
        ".venv/bin/python benchmarks/visits.py --part flush",
    )


def test_the_stages_make_test_runs_are_run_as_make_test_stage():
    stages = stages_make_test_runs()
    assert "unit" in stages, stages
    for stage in stages:
        make_recipe(f"test-{stage}")  # a target of that name, which the stages script makes
    script = (PROJECT_ROOT / STAGES_SCRIPT).read_text(encoding="utf-8")
    assert re.search(r'\bmake [^\n]*"test-\$', script), f"{STAGES_SCRIPT} no longer runs `make test-<stage>`"
    assert run_by_make_test("make test-unit") and run_by_make_test("make test-unit   # one stage")
    assert not run_by_make_test("make test-unit -j2") and not run_by_make_test("make test-nothing")
    assert not run_by_make_test("make bench") and not run_by_make_test("make test")
