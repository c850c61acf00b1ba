"""Every HTML file of the production build is valid: the W3C Nu checker (vnu-jar, ``VNU_JAR``, installed
by ``make test-setup`` with Java) finds no error; each error named by file, line and message."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import BUILD_DIR

VNU_VERSION = "26.9.27"
DEFAULT_JAR = Path.home() / ".cache" / "publisher" / f"vnu-jar-{VNU_VERSION}" / "node_modules" / "vnu-jar" / "build"
VNU_JAR = Path(os.environ.get("VNU_JAR") or DEFAULT_JAR / "dist" / "vnu.jar")


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int | None
    kind: str  # "error" or "warning"
    message: str


def nu_check(files: list[Path]) -> list[Finding]:
    if not VNU_JAR.exists():
        pytest.fail(f"The Nu checker is not installed at {VNU_JAR}: run `make test-setup` (or set VNU_JAR)")
    result = subprocess.run(
        ["java", "-Xss4m", "-jar", str(VNU_JAR), "--format", "json", "--exit-zero-always", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    findings = []
    for message in json.loads(result.stderr or result.stdout)["messages"]:
        kind = "error" if message["type"] in ("error", "non-document-error") else message.get("subType", "info")
        if kind not in ("error", "warning"):
            continue  # "info": notes such as trailing slashes on void elements
        path = Path(message.get("url", "").removeprefix("file:"))
        findings.append(Finding(path, message.get("lastLine"), kind, message["message"]))
    return findings


def named(finding: Finding, root: Path) -> str:
    shown = finding.path.relative_to(root) if finding.path.is_relative_to(root) else finding.path
    return f"{shown}:{finding.line or '?'}: {finding.kind}: {finding.message}"


@pytest.fixture(scope="module")
def checked(built_site, tmp_path_factory) -> tuple[list[Finding], list[str], str]:
    """One run of the checker over every prerendered page and a copy of one made invalid: the build's
    findings, and the errors in the copy with what they must be."""
    page = (BUILD_DIR / "subscribe.html").read_text(encoding="utf-8")
    broken = page.replace("<main", '<main aria-describedby=""', 1).replace("<main", "\n<main", 1)
    regressed = tmp_path_factory.mktemp("regressed")
    (regressed / "subscribe.html").write_text(broken, encoding="utf-8")
    line = broken[: broken.index('aria-describedby=""')].count("\n") + 1
    expected = (
        f"subscribe.html:{line}: error: Bad value “” for attribute “aria-describedby” on element “main”: "
        "An IDREFS value must contain at least one non-whitespace character."
    )
    findings = nu_check([*prerendered_pages(), regressed / "subscribe.html"])
    in_copy = [named(f, regressed) for f in findings if f.path.is_relative_to(regressed) and f.kind == "error"]
    return [f for f in findings if not f.path.is_relative_to(regressed)], in_copy, expected


def prerendered_pages() -> list[Path]:
    return sorted(BUILD_DIR.rglob("*.html"))


def test_every_prerendered_page_has_no_nu_checker_error(checked, capsys):
    findings, _, _ = checked
    pages = prerendered_pages()
    assert len(pages) >= 17 and (BUILD_DIR / "books").is_dir() and (BUILD_DIR / "unsubscribe.html").exists()
    warnings = [named(f, BUILD_DIR) for f in findings if f.kind == "warning"]
    if warnings:
        with capsys.disabled():
            print(f"\nNu checker warnings ({len(warnings)}, not failed):\n" + "\n".join(warnings))
    errors = [named(f, BUILD_DIR) for f in findings if f.kind == "error"]
    assert errors == [], f"{len(errors)} Nu checker errors in {len(pages)} pages:\n" + "\n".join(errors)


def test_a_page_that_regresses_fails_naming_its_file_line_and_message(checked):
    _, in_copy, expected = checked
    assert in_copy == [expected]
