"""Every command README.md and docs/*.md tell a reader to type is run by a test as written, or
the doc marks it as an example that needs the reader's own values.

A command is a line of a fenced ``sh`` block (tests/doc_commands.py). It is accounted for when:

- its block starts with ``# Example``: the reader sees that it needs their values (their domain,
  their provider, their book), and nothing here runs it; or
- a test reads its block from the doc (``block_under(DOCS / "NAME.md", "heading words")``) and
  runs each command of it through the shell as written: found by reading the tests; or
- it is in RUN_ELSEWHERE: run by the Makefile, a test helper or the Dockerfile, whose text
  must still hold what runs it; or
- it is `make test-<stage>` for a stage `make test` runs (scripts/test-stages.sh runs each as
  `make test-<stage>`): the suite itself runs it as written; or
- it is a command `make bench` runs (the Makefile's bench recipe, ``$(BIN)`` read as
  ``.venv/bin``): a benchmark at its real size, minutes, never part of `make test`; what it names
  is held to the tree by tests/unit/test_benchmarks.py, and a smoke test runs the same script on
  a tiny input (tests/*/test_benchmarks.py).

A new command that is none of these fails here, naming its doc and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.doc_commands import (
    PROJECT_ROOT,
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

TESTS = PROJECT_ROOT / "tests"
# A test that runs a doc's block: block_under(DOCS / "deploying.md", "embedded local gateway").
READS_A_BLOCK = re.compile(r'block_under\(\s*DOCS\s*/\s*"([\w.-]+\.md)",\s*"([^"]+)"\s*\)')

# Commands run as written (or, for installs, exactly as the Makefile and the Dockerfile need them)
# by something other than a test reading the doc: the file that runs it, and the text in it that does.
RUN_ELSEWHERE: dict[str, tuple[str, str]] = {
    # `make run` with free ports on loopback: tests/development runs it for every dev-server test.
    "make run": ("tests/development/conftest.py", 'MAKE_RUN = ["make", "--no-print-directory", "run"]'),
    # The command that runs every test, this one included: each stage through the stages script.
    "make test": ("Makefile", f"@{STAGES_SCRIPT} "),
    # make setup, run by `make run`, `make build` and `make test`, installs exactly this.
    "pip install -e '.[build]'": ("Makefile", "-m pip install --quiet --no-compile -e '.[build]'"),
    "pip install -e '.[build,test]'": ("Makefile", "-m pip install --quiet --no-compile -e '.[build,test]'"),
    # The image's runtime stage: the dependencies and the postgres extra, then the package itself.
    "pip install '.[postgres]'": ("Dockerfile", "p['dependencies'] + p['optional-dependencies']['postgres']"),
}


def all_blocks() -> list[ShellBlock]:
    return [block for document in documents() for block in shell_blocks(document)]


def blocks_read_by_tests() -> dict[tuple[str, str], list[str]]:
    """(doc, heading words) -> the test files that run that block, from the tests' own text."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if path == Path(__file__):
            continue  # its own examples
        for document, words in READS_A_BLOCK.findall(path.read_text(encoding="utf-8")):
            found.setdefault((f"docs/{document}", words), []).append(str(path.relative_to(PROJECT_ROOT)))
    return found


def run_by_a_test(block: ShellBlock, read: dict[tuple[str, str], list[str]]) -> list[str]:
    """The tests that run this block: the first block under a heading with their words is this one."""
    return [
        test
        for (document, words), tests in read.items()
        if document == block.document and block_under(PROJECT_ROOT / document, words).line == block.line
        for test in tests
    ]


def run_by_the_makefile(command: str, benched: tuple[str, ...]) -> bool:
    """Whether the Makefile runs ``command`` as written: RUN_ELSEWHERE's, a stage of `make test`,
    or a benchmark of `make bench` (``benched``, its commands)."""
    return command in RUN_ELSEWHERE or run_by_make_test(command) or command in benched


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
            if not run_by_the_makefile(command, benched)
        ]
    return missing


def test_every_documented_command_is_run_by_a_test_or_the_makefile_or_marked_as_an_example():
    missing = unaccounted()
    assert not missing, (
        "commands the docs tell a reader to type that no test (nor `make test`'s stages, nor `make bench`) runs "
        "as written: run their block from a test (tests/doc_commands.py block_under), or start the block with "
        "'# Example: <whose values>'\n" + "\n".join(missing)
    )


def test_every_block_a_test_names_is_in_the_docs():
    """A heading renamed would leave its test reading another block, or none."""
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


def test_the_stages_make_test_runs_are_run_as_make_test_stage():
    """`make test-unit` in a doc counts as run because `make test` runs exactly that command."""
    stages = stages_make_test_runs()
    assert "unit" in stages, stages
    for stage in stages:
        make_recipe(f"test-{stage}")  # a target of that name, which the stages script makes
    script = (PROJECT_ROOT / STAGES_SCRIPT).read_text(encoding="utf-8")
    assert re.search(r'\bmake [^\n]*"test-\$', script), f"{STAGES_SCRIPT} no longer runs `make test-<stage>`"
    assert run_by_make_test("make test-unit") and run_by_make_test("make test-unit   # one stage")
    assert not run_by_make_test("make test-unit -j2") and not run_by_make_test("make test-nothing")
    assert not run_by_make_test("make bench") and not run_by_make_test("make test")


def test_the_makefile_is_read_as_make_reads_it(tmp_path: Path):
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
