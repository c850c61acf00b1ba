"""Page-load scores of the production site: Lighthouse (mobile preset) on every page.

Builds the site (unless --no-build), starts `publisher-serve` on a free port of
127.0.0.1 with a throwaway database, runs Lighthouse (npm package, installed on
first use under benchmarks/.lighthouse) in the system Chromium on /, /about,
/subscribe, /contact-us, a book's page and an unknown path, and prints the four category scores,
FCP, LCP, TBT, CLS and bytes transferred per page. JSON reports go to
benchmarks/results/lighthouse/ (ignored by git).

    .venv/bin/python benchmarks/lighthouse.py [--runs 3] [--no-build]
    .venv/bin/python benchmarks/lighthouse.py --print-covers   # Home and a book page, 2400x3600 JPEG covers

With --print-covers it audits a copy of the project whose books have print-size
JPEG covers (tests/print_covers.py), built and served from a temporary directory.

With --runs N each page is audited N times and the median performance run is
reported (Lighthouse's own advice for noisy machines).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.print_covers import make_project  # noqa: E402
from tests.support import build_site, running_server, tool_env  # noqa: E402

LIGHTHOUSE_DIR = ROOT / "benchmarks" / ".lighthouse"
LIGHTHOUSE = LIGHTHOUSE_DIR / "node_modules" / ".bin" / "lighthouse"
LIGHTHOUSE_VERSION = "12"
RESULTS = ROOT / "benchmarks" / "results" / "lighthouse"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROME_FLAGS = (
    "--headless=new --no-sandbox --disable-gpu --disable-background-networking "
    "--disable-component-update --disable-sync --no-first-run"
)
PAGES = {
    "home": "/",
    "about": "/about",
    "subscribe": "/subscribe",
    "contact": "/contact-us",
    "book": "/books/guinea-pig-or-hamster",
    "not-found": "/no-such-page",
}
PRINT_COVER_PAGES = {"home": "/", "book": "/books/guinea-pig-or-hamster"}
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]


def ensure_lighthouse() -> None:
    if LIGHTHOUSE.exists():
        return
    print(f"Installing lighthouse@{LIGHTHOUSE_VERSION} into {LIGHTHOUSE_DIR.relative_to(ROOT)} ...", flush=True)
    LIGHTHOUSE_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(LIGHTHOUSE_DIR),
            f"lighthouse@{LIGHTHOUSE_VERSION}",
        ],
        env=tool_env(),
        check=True,
    )


NOT_FOUND_NOTE = (
    "The not-found page answers 404 by design: Lighthouse is told to audit it anyway, and Chrome's console\n"
    "entry for that intended status ('Failed to load resource: ... status of 404') is not counted as an error."
)


def lighthouse_config(expects_404: bool) -> dict:
    config: dict = {"extends": "lighthouse:default"}
    if expects_404:
        config["settings"] = {"ignoreStatusCode": True}
        config["audits"] = [{"path": "errors-in-console", "options": {"ignoredPatterns": ["status of 404"]}}]
    return config


def audit(url: str, report: Path, expects_404: bool) -> dict:
    config = report.with_suffix(".config.json")
    config.write_text(json.dumps(lighthouse_config(expects_404)))
    subprocess.run(
        [
            str(LIGHTHOUSE),
            url,
            f"--config-path={config}",
            "--output=json",
            f"--output-path={report}",
            f"--chrome-flags={CHROME_FLAGS}",
            "--quiet",
        ],
        env=tool_env(CHROME_PATH=CHROMIUM),
        check=True,
    )
    config.unlink()
    return json.loads(report.read_text())


def summary(result: dict) -> dict:
    audits = result["audits"]
    scores = {c: result["categories"][c]["score"] for c in CATEGORIES}
    return {
        **{c: None if s is None else round(s * 100) for c, s in scores.items()},
        "fcp_ms": audits["first-contentful-paint"]["numericValue"],
        "lcp_ms": audits["largest-contentful-paint"]["numericValue"],
        "tbt_ms": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "bytes": audits["total-byte-weight"]["numericValue"],
        "failing": sorted(
            a["id"]
            for c in CATEGORIES
            for ref in result["categories"][c]["auditRefs"]
            if ref["weight"] > 0 and (a := audits[ref["id"]])["score"] is not None and a["score"] < 1
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="audits per page; the median performance run is reported")
    parser.add_argument("--no-build", action="store_true", help="serve the existing build")
    parser.add_argument(
        "--print-covers", action="store_true", help="Home and a book page of a copy with print-size JPEG covers"
    )
    args = parser.parse_args()

    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        print(f"Chromium not found at {CHROMIUM} (set CHROMIUM_PATH)", file=sys.stderr)
        return 2
    ensure_lighthouse()
    RESULTS.mkdir(parents=True, exist_ok=True)
    pages, root, copy = PAGES, ROOT, tempfile.TemporaryDirectory()
    if args.print_covers:
        pages, root = PRINT_COVER_PAGES, make_project(Path(copy.name))
    if args.print_covers or not args.no_build:
        build_site(RESULTS / "build.log", site_url=None, root=root)  # the configured site URL, as `make build`

    with (
        copy,
        tempfile.TemporaryDirectory() as tmp,
        running_server(Path(tmp), {"REFLEX_DB_URL": f"sqlite:///{tmp}/bench.db"}, root=root) as server,
    ):
        base = server.base_url
        rows = {}
        for name, path in pages.items():
            expects_404 = name == "not-found"
            runs = [
                summary(audit(base + path, RESULTS / f"{name}-{i + 1}.json", expects_404)) for i in range(args.runs)
            ]
            median_perf = statistics.median_low(r["performance"] for r in runs)
            rows[name] = next(r for r in runs if r["performance"] == median_perf)

    covers = " with print-size JPEG covers" if args.print_covers else ""
    print(
        f"\nLighthouse {LIGHTHOUSE_VERSION}, mobile preset{covers}, {platform.node()} ({os.cpu_count()} cores), "
        f"{date.today()}"
    )
    print(f"{'page':<30}{'perf':>5}{'a11y':>5}{'bp':>5}{'seo':>5}{'FCP':>8}{'LCP':>8}{'TBT':>7}{'CLS':>7}{'KB':>7}")
    for name, row in rows.items():
        print(
            f"{pages[name]:<30}{row['performance']:>5}{row['accessibility']:>5}{row['best-practices']:>5}{row['seo']:>5}"
            f"{row['fcp_ms'] / 1000:>7.2f}s{row['lcp_ms'] / 1000:>7.2f}s{row['tbt_ms']:>5.0f}ms{row['cls']:>7.3f}"
            f"{row['bytes'] / 1024:>7.1f}"
        )
    for name, row in rows.items():
        if row["failing"]:
            print(f"  {pages[name]}: below 100 on {', '.join(row['failing'])}")
    if "not-found" in pages:
        print(NOT_FOUND_NOTE)
    print(f"\nReports: {RESULTS.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
