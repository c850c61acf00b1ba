"""benchmarks/visits.py, what counting costs (docs/performance.md, Visits): what it sends and flushes.

Its serving part starts two production servers (`make bench` runs it) and its flush part writes
to databases (tests/services/test_benchmarks.py runs it at a tiny size); here, without either,
what it measures with: a launch day's batch, its visitors' addresses and user agents; and its
user agents' part, which runs in this process, at a tiny size.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from datetime import date
from pathlib import Path

import pytest

from publisher.rules import visit_rules

ROOT = Path(__file__).resolve().parents[2]
DAY = date(2026, 11, 27)


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("visits_benchmark", ROOT / "benchmarks" / "visits.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_a_launch_day_is_100000_views_by_30000_visitors_and_serving_2_rounds_of_6000_at_300_connections(bench):
    """The sizes docs/performance.md (Visits) states its figures at."""
    assert (bench.LAUNCH_DAY_VIEWS, bench.LAUNCH_DAY_VISITORS) == (100_000, 30_000)
    assert (bench.ROUNDS, bench.REQUESTS, bench.CONCURRENCY) == (2, 6000, 300)
    assert bench.CHECKS == 3000


def test_the_user_agents_are_browsers_never_seen_forged_giants_and_the_worst_still_read(bench):
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


def test_the_batch_holds_every_view_once_and_every_visitor_of_the_day(bench):
    batch = bench.launch_day(2_000, 500, DAY)

    assert bench.page_views(batch) == 2_000
    assert sum(count for (_, kind, _), count in batch.views.items() if kind == "page") == 2_000
    assert len({visitor for (_, kind, _, visitor) in batch.seen if kind == "site"}) == 500
    assert sum(count for (_, kind, _), count in batch.views.items() if kind == "source") == 500  # landings
    assert sum(count for (_, kind, _), count in batch.views.items() if kind == "buy") == 500 // 20  # one in 20
    assert {day for day, *_ in batch.views} == {DAY}
    assert all(len(visitor) == 16 for *_, visitor in batch.seen)  # the size of a visitor id
    assert bench.launch_day(2_000, 500, DAY).seen == batch.seen  # the same batch every run


def test_each_connection_is_another_address_and_a_browser_not_a_bot(bench):
    addresses = {bench.loopback_address(n) for n in range(bench.CONCURRENCY * 4)}
    assert len(addresses) == bench.CONCURRENCY * 4
    assert all(address.startswith("127.") and not address.endswith((".0", ".1")) for address in addresses)
    assert not any(visit_rules.is_bot(agent) for agent in bench.DESKTOP_AGENTS)


def test_new_agents_are_browsers_never_seen_before_on_every_request(bench):
    agents = {bench.agent_of(n, f"on0.{n}.{request}") for n in range(3) for request in range(4)}
    assert len(agents) == 12
    assert not any(visit_rules.is_bot(agent) for agent in agents)
    assert bench.agent_of(1, None) == bench.DESKTOP_AGENTS[1]
