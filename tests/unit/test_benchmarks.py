"""`make bench` runs every benchmark as docs/performance.md writes it, `make test` none; the smoke
tests of the benchmarks that need no process (the others: tests/services, tests/embedded)."""

from __future__ import annotations

import re

import pytest

from tests.doc_commands import (
    STAGES_SCRIPT,
    bench_commands,
    make_recipe,
    make_variables,
    shell_blocks,
    stages_make_test_runs,
)
from tests.support import PROJECT_ROOT

BENCHMARKS = PROJECT_ROOT / "benchmarks"
PERFORMANCE = PROJECT_ROOT / "docs" / "performance.md"
OPTIONAL = re.compile(r"\s*\[[^\]]*\]")  # a usage line's optional part: `[--runs 3]`


def benchmark_of(command: str) -> str:
    words = command.split()
    assert words[0] == ".venv/bin/python" and words[1].startswith("benchmarks/"), command
    return words[1].removeprefix("benchmarks/")


def test_make_bench_runs_every_benchmark_once_as_performance_md_writes_it():
    assert make_variables()["VENV"] == ".venv" and make_variables()["BIN"] == "$(abspath $(VENV))/bin"
    run = [benchmark_of(command) for command in bench_commands()]
    assert sorted(run) == sorted(path.name for path in BENCHMARKS.glob("*.py")), run
    documented = {OPTIONAL.sub("", command) for block in shell_blocks(PERFORMANCE) for command in block.bare_commands}
    for command in bench_commands():
        assert command in documented, f"`make bench` runs `{command}`, which docs/performance.md does not write"


@pytest.mark.parametrize("command", bench_commands())
def test_each_command_of_make_bench_names_its_script_and_options_it_takes(command: str):
    script = BENCHMARKS / benchmark_of(command)
    source = script.read_text(encoding="utf-8")
    assert '__name__ == "__main__"' in source, f"{script.name} does not run as a script"
    for option in (word.split("=")[0] for word in command.split()[2:] if word.startswith("--")):
        assert f'"{option}"' in source, f"{script.name} takes no {option}: `{command}`"


def test_make_test_never_runs_a_benchmark():
    stages = stages_make_test_runs()
    assert "bench" not in stages and stages, stages
    recipes = [*make_recipe("test"), *(line for stage in stages for line in make_recipe(f"test-{stage}"))]
    assert not [line for line in recipes if "bench" in line], recipes
    assert "bench" not in (PROJECT_ROOT / STAGES_SCRIPT).read_text(encoding="utf-8")


def test_hostile_bounces_classifies_each_hostile_report_on_a_tiny_input(benchmark, capsys):
    """Each report classified as the site's reader would, reading at most 100 recipients of one."""
    benchmark("hostile_bounces").main(["--sizes", "20,150", "--short-lines", "20000"])
    output = capsys.readouterr().out
    measured = r"[\d.]+ MB +[\d.]+ s CPU +peak +\d+ MB"
    for named, read in ((20, 20), (150, 100)):
        assert re.search(rf"^qmail, {named} addresses +{measured} +bounce: {read} read of {named} named$", output, re.M)
        assert re.search(rf"^DSN, {named} recipients +{measured} +bounce: {read} read of {named} named$", output, re.M)
    assert re.search(rf"^0.02 MB of short lines +{measured} +unclassified: 0 read of 0 named$", output, re.M), output


def test_rate_limits_times_a_hit_in_each_store_on_a_tiny_input(benchmark, capsys):
    benchmark("rate_limits").main(["--keys", "10,200", "--hits", "20", "--no-redis"])
    output = capsys.readouterr().out
    for store in ("site, in process", "limits as shipped"):
        for keys in (10, 200):
            timed = rf"^{store} +{keys} live keys +[\d.]+ µs a hit +p99 +[\d.]+ µs +\(20 hits\)$"
            assert re.search(timed, output, re.M), output
    for keys in (10, 200):
        assert re.search(rf"^site, its sweep +{keys} live keys +[\d.]+ ms once a minute$", output, re.M), output
