"""benchmarks/house.py as docs/performance.md (The house) tells a reader to type it: this
checkout's figures, from the suite's build, by its own interpreter.

The block is read from the doc and run through the shell from the project's root, as written,
without the site's variables (the tool sets its own: a throwaway database, its SMTP server).
What it prints is held to what can be told here without it: it measured both paths of a
subscribe (its probe fails when a confirmation never arrives), the app's path ran the subscribe
state's own module, and its lines and recipe are this checkout's.
"""

from __future__ import annotations

import os
import re
import subprocess

from tests.doc_commands import PROJECT_ROOT, block_under

DOCS = PROJECT_ROOT / "docs"
# Starting the site twice on a loaded machine, two subscribes on each path.
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


def test_the_house_runs_as_written_and_measures_this_checkout(built_site):
    (command,) = block_under(DOCS / "performance.md", "The house").commands
    theirs = {key: value for key, value in os.environ.items() if not key.startswith(("PUBLISHER_", "REFLEX_"))}
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=PROJECT_ROOT,
        env=theirs,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_S,
        check=False,
    )
    assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    output = done.stdout

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
