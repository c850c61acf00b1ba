"""benchmarks/house.py on the suite's build: both paths of a subscribe measured, the state's
module on the app's path, and this checkout's lines and recipe; benchmarks/release_flip.py at a tiny size."""

from __future__ import annotations

import re

from publisher.rules import release_rules
from tests.doc_commands import run_benchmark
from tests.release_book import test_book
from tests.support import DOCS

RUN_S = 600
PATH_MAX = (15, 17)  # the modules a subscribe may cross: from the app's event, from the plain POST


def figure(output: str, label: str) -> str:
    found = re.search(rf"^{re.escape(label)}\s+(.+?)\s*$", output, re.M)
    assert found, f"no line {label!r} in:\n{output}"
    return found.group(1)


def test_the_house_measures_both_paths_of_a_subscribe_and_this_checkouts_lines(built_site):
    output = run_benchmark("benchmarks/house.py", timeout=RUN_S)

    app = int(figure(output, "a. modules a subscribe crosses, app's event"))
    plain = int(figure(output, "   ... from the plain POST"))
    wrappers = int(figure(output, "b. ASGI wrappers a page request passes"))
    assert 0 < app <= PATH_MAX[0] and 0 < plain <= PATH_MAX[1] and wrappers > 0, output
    assert f"at most {PATH_MAX[0]} of our modules from the app's event, {PATH_MAX[1]} from the plain POST" in (
        DOCS / "performance.md"
    ).read_text(encoding="utf-8")

    # Reflex names a state by its module and class: reflex___state____state.publisher___web___...____subscribe_state
    state = re.search(r"subscribe state (\S+)", output)
    assert state, output
    state_module = state.group(1).rsplit(".", 1)[-1].split("____")[0].replace("___", ".")
    app_modules = re.search(r"the app's event, \d+ modules:\n((?:    \S+\n)+)", output)
    assert app_modules and f"    {state_module}\n" in app_modules.group(1), (state_module, output)

    # What it counts: tests/unit/test_house_benchmark.py.
    for label in ("c. lines of Python in publisher/", "   ... in tests/"):
        assert re.fullmatch(r"\d{1,3}(,\d{3})*", figure(output, label)), output
    recipe = figure(output, "d. files the form-field recipe names (docs/content.md)")
    assert re.fullmatch(r"\d+ files|no recipe", recipe), output


def test_release_flip_serves_both_builds_the_forthcoming_book_coming_and_measures_each_page(built_site):
    book = test_book()
    # Twice the time: it may build the release copy first (tests/release_book.py).
    output = run_benchmark(
        "benchmarks/release_flip.py", "--requests", "60", "--concurrency", "6", "--rounds", "2", timeout=2 * RUN_S
    )

    coming = release_rules.coming_words(book)
    for shown in ("(a) /: 200", "(a) /books/coloring-book: 200", "(b) /books/coloring-book: 200"):
        assert re.search(rf"^{re.escape(shown)}, [\d,]+ bytes, no 'Coming' line$", output, re.M), output
    for shown in ("(b) /: 200", f"(b) {book.page_path}: 200"):
        assert re.search(rf"^{re.escape(shown)}, [\d,]+ bytes, says '{re.escape(coming)}'$", output, re.M), output
    performance = (DOCS / "performance.md").read_text(encoding="utf-8")
    documented = re.search(r"benchmarks/release_flip\.py (.+)$", performance, re.M)
    helped = " ".join(run_benchmark("benchmarks/release_flip.py", "--help", timeout=RUN_S).split())
    sizes = re.findall(r"\[(--[\w-]+) (\d+)\]", documented.group(1) if documented else "")
    assert len(sizes) == 3 and all(re.search(rf"{o} [A-Z]+ [^(]*\({n}\)", helped) for o, n in sizes), helped
    measured = r" +\d+ requests/s \(median of rounds\), p50 +[\d.]+ ms, p95 +[\d.]+ ms, errors 0$"
    for label in ("(a) /", "(b) /", "(a) /books/coloring-book", f"(b) {book.page_path}", "(b) /books/coloring-book"):
        assert re.search(rf"^{re.escape(label)}{measured}", output, re.M), output
