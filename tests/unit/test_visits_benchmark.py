"""benchmarks/visits.py without servers or databases (tests/services/test_benchmarks.py runs its flush
part): the sizes docs/performance.md states, its user agents, and its user agents' part at a tiny size."""

from __future__ import annotations

import re

import pytest

from publisher.rules import visit_rules


@pytest.fixture
def bench(benchmark):
    return benchmark("visits")


def test_the_sizes_the_docs_state_and_the_user_agents_browsers_never_seen_forged_giants_and_the_worst_still_read(bench):
    assert (bench.LAUNCH_DAY_VIEWS, bench.LAUNCH_DAY_VISITORS) == (100_000, 30_000)
    assert (bench.ROUNDS, bench.REQUESTS, bench.CONCURRENCY, bench.CHECKS) == (2, 6000, 300, 3000)
    assert not any(visit_rules.is_bot(agent) for agent in bench.agents_of("ordinary", 3))
    short = bench.agents_of("never seen, short", 50)
    assert len(set(short)) == 50 and not any(visit_rules.is_bot(agent) for agent in short)
    long = bench.agents_of("adversarial, long", 4)
    assert len(set(long)) == 4 and all(len(agent) == 512 for agent in long)
    worst = bench.agents_of("worst still read", 10)
    assert len(set(worst)) == 10 and all(len(agent) == visit_rules.USER_AGENT_MAX == 512 for agent in worst)
    assert worst[0].startswith("Mozilla/5.0 (" + "a" * 490) and worst[1].isalpha()  # issue 48's two shapes
    assert worst[2].count("x64 ") > 120 and worst[3].count("Safari/1 ") > 55  # words the list removes first
    assert re.fullmatch(r"[\w /;.-]+", worst[4]) and not worst[4].isalpha()  # pieces of the list's own patterns


def test_the_user_agents_part_prints_each_kinds_rate_side_by_side(bench, capsys):
    assert bench.main(["--part", "agents", "--checks", "20"]) == 0
    output = capsys.readouterr().out
    assert "20 views of each kind" in output
    for kind in bench.AGENT_KINDS:
        pattern = rf"^{re.escape(kind)}: +[\d,]+ views/s, p50 +[\d.]+ µs, p95 +[\d.]+ µs, slowest +[\d.]+ µs$"
        assert re.search(pattern, output, re.M), output
    assert re.search(r"^adversarial long against never-seen short: [\d.]+ x$", output, re.M), output
