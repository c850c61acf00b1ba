"""The benchmarks that take seconds and need the build, on the suite's build: benchmarks/house.py
quick (it serves the site in its own process, measuring it) and benchmarks/visits.py's serving
part at a tiny size.

docs/performance.md (The house) writes its command for this checkout's figures; `make bench`
runs it as written, and tests/unit/test_benchmarks.py holds that command to the tree. Here the
same script runs with --quick (no unmeasured subscribe first), and what it prints is held to
what can be told without it: it measured both paths of a subscribe (its probe fails when a
confirmation never arrives), the app's path ran the subscribe state's own module, a page request
passed the site's wrappers, and its lines and recipe are this checkout's.
"""

from __future__ import annotations

import re

from tests.doc_commands import PROJECT_ROOT, run_benchmark

DOCS = PROJECT_ROOT / "docs"
# A guard against a hang, far above the seconds it takes: the site started once, four requests.
RUN_S = 600


def figure(output: str, label: str) -> str:
    found = re.search(rf"^{re.escape(label)}\s+(.+?)\s*$", output, re.M)
    assert found, f"no line {label!r} in:\n{output}"
    return found.group(1)


def physical_lines(folder: str) -> int:
    return sum(
        len(path.read_bytes().splitlines())
        for path in (PROJECT_ROOT / folder).rglob("*.py")
        if not any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(PROJECT_ROOT).parts)
    )


def house_quick() -> str:
    """What `benchmarks/house.py --quick` printed for this checkout."""
    return run_benchmark("benchmarks/house.py", "--quick", timeout=RUN_S)


def test_the_house_measures_both_paths_of_a_subscribe_and_this_checkouts_lines(built_site):
    output = house_quick()
    assert "(--quick: not warmed up" in output, output

    app = int(figure(output, "a. modules a subscribe crosses, app's event"))
    plain = int(figure(output, "   ... from the plain POST"))
    wrappers = int(figure(output, "b. ASGI wrappers a page request passes"))
    assert app > 0 and plain > 0 and wrappers > 0, output

    # Reflex names a state by its module and class: reflex___state____state.publisher___web___...____subscribe_state
    state = re.search(r"subscribe state (\S+)", output)
    assert state, output
    state_module = state.group(1).rsplit(".", 1)[-1].split("____")[0].replace("___", ".")
    app_modules = re.search(r"the app's event, \d+ modules:\n((?:    \S+\n)+)", output)
    assert app_modules and f"    {state_module}\n" in app_modules.group(1), (state_module, output)

    assert figure(output, "c. lines of Python in publisher/") == f"{physical_lines('publisher'):,}"
    assert figure(output, "   ... in tests/") == f"{physical_lines('tests'):,}"
    recipe = figure(output, "d. files the form-field recipe names (docs/content.md)")
    has_recipe = re.search(r"^#+ .*field", (DOCS / "content.md").read_text(encoding="utf-8"), re.M | re.I)
    assert (recipe == "no recipe") == (has_recipe is None), recipe


def test_the_visits_serving_part_measures_on_and_off_and_counts_every_view_it_served(built_site):
    """benchmarks/visits.py's serving part at a tiny size: both servers start, counting on and off
    are each measured, and the counting server counts every view it served, the other none."""
    output = run_benchmark(
        "benchmarks/visits.py", "--part", "serve", "--requests", "40", "--concurrency", "8", timeout=RUN_S
    )
    for mode in ("off", "on"):
        assert re.search(rf"^counting {mode}: +\d+ requests/s .* p95 +[\d.]+ ms, errors 0$", output, re.M), output
    assert "counted with counting on: 80 views of 80 served, 8 visitors; with counting off: 0 views" in output
