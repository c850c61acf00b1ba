"""`make build` (scripts/build.py) builds again exactly when an input or the build's output changed."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from tests.support import PROJECT_ROOT


@pytest.fixture
def build(tmp_path: Path, monkeypatch) -> ModuleType:
    """scripts/build.py on a small project of the test's own; its build steps recorded, not run."""
    spec = importlib.util.spec_from_file_location("build_script", PROJECT_ROOT / "scripts" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (tmp_path / "publisher").mkdir()
    (tmp_path / "publisher" / "page.py").write_text("TITLE = 'Home'\n")
    (tmp_path / "assets").mkdir()
    (tmp_path / "rxconfig.py").write_text("config = None\n")
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "STAMP", tmp_path / ".web" / "build-stamp")
    module.ran = []

    def run(command, cwd, env, check):
        module.ran.append(Path(command[0]).name)
        if module.ran[-1] == "publisher-serve":  # what a build leaves
            for output in module.OUTPUTS:
                (tmp_path / output).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / output).write_text(f"{output} of {env.get('REFLEX_DEPLOY_URL')}")
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(module.subprocess, "run", run)
    monkeypatch.setenv("REFLEX_DEPLOY_URL", "https://books.example.com")
    return module


def test_the_same_inputs_build_once_and_a_changed_file_address_or_output_again(build, monkeypatch):
    assert build.main() == 0
    assert build.main() == 0
    assert build.ran == ["reflex", "publisher-serve"]
    (build.ROOT / "publisher" / "page.py").write_text("TITLE = 'Books'\n")
    build.main()
    assert build.ran.count("reflex") == 2
    monkeypatch.setenv("REFLEX_DEPLOY_URL", "https://www.animalsweconfuse.com")
    build.main()
    assert build.ran.count("reflex") == 3
    (build.ROOT / ".web" / "backend" / "stateful_pages.json").write_text("{}")  # e.g. a development server's
    build.main()
    assert build.ran.count("reflex") == 4


def test_a_failed_step_leaves_no_stamp_and_its_status(build, monkeypatch):
    monkeypatch.setattr(build.subprocess, "run", lambda command, **_: subprocess.CompletedProcess(command, 3))
    assert build.main() == 3
    assert not build.STAMP.exists()
