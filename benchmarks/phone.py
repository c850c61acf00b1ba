"""A first visit on a throttled phone: bytes per page and the time to a usable form.

Builds the site (unless --no-build), starts `publisher-serve` on a free port of
127.0.0.1 with a throwaway database, and loads every page in the system Chromium
at a 375 px phone width with an empty cache, throttled through the DevTools
protocol like Lighthouse's mobile preset: 4x CPU slowdown, 150 ms round trip,
1.6 Mbps down, 750 kbps up. Per page it prints the bytes transferred (document,
CSS, scripts, images, other), whether the app's scripts were requested and a
websocket opened, and, from the page's own clock (navigation start = 0):

- first paint (first-contentful-paint),
- form usable (a press would be accepted: the submit button enabled and, on
  Contact Us, the security question shown; the page alone posts the form, so
  this comes with the HTML),
- app connected (the websocket to the backend opened),
- form ready (usable, and the app has taken the form over: ``data-connected``).

    .venv/bin/python benchmarks/phone.py [--runs 5] [--no-build] [--no-throttle]

With --runs N each page is loaded N times in fresh browser contexts; the medians
are printed (bytes are the same every run).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from datetime import date
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.support import build_site, running_server  # noqa: E402

PHONE = {"width": 375, "height": 812}
# Lighthouse's mobile preset ("slow 4G"): the figures the targets use.
CPU_SLOWDOWN = 4
ROUND_TRIP_MS = 150
DOWN_BYTES_S = 1.6 * 1024 * 1024 / 8
UP_BYTES_S = 750 * 1024 / 8
PAGES = {"/": None, "/about": None, "/no-such-page": None, "/subscribe": "subscribe", "/contact-us": "contact"}
RESULTS = ROOT / "benchmarks" / "results"

# Runs before the page's own scripts: records when the websocket opened and when the
# form first became usable, on the page's clock (0 = navigation start).
TIMING_PROBE = """
(() => {
  const marks = (window.__phoneMarks = {});
  window.WebSocket = class extends window.WebSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => { marks.connected ??= performance.now(); });
    }
  };
  const usable = () => {
    const button = document.querySelector("form button[type=submit]");
    if (!button || button.disabled) return false;
    const question = document.querySelector("label[for=contact-answer]");
    return !question || /What is \\d+ [+-] \\d+\\?/.test(question.textContent);
  };
  const ready = () => usable() && document.querySelector('form[data-connected="true"]') !== null;
  new MutationObserver(() => {
    if (marks.usable === undefined && usable()) marks.usable = performance.now();
    if (marks.ready === undefined && ready()) marks.ready = performance.now();
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})();
"""


def resource_kind(resource_type: str, url: str) -> str:
    if resource_type == "document":
        return "document"
    if resource_type == "stylesheet":
        return "css"
    if resource_type == "script" or url.endswith((".js", ".mjs")):
        return "scripts"
    if resource_type == "image":
        return "images"
    return "other"


def load(browser, url: str, form: str | None, throttle: bool) -> dict:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page: Page = context.new_page()
    page.add_init_script(TIMING_PROBE)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    if throttle:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
        cdp.send(
            "Network.emulateNetworkConditions",
            {
                "offline": False,
                "latency": ROUND_TRIP_MS,
                "downloadThroughput": DOWN_BYTES_S,
                "uploadThroughput": UP_BYTES_S,
            },
        )
    requests: dict[str, dict] = {}
    sockets: list[str] = []
    cdp.on(
        "Network.requestWillBeSent",
        lambda e: requests.setdefault(
            e["requestId"], {"url": e["request"]["url"], "type": e.get("type", "Other").lower(), "bytes": 0}
        ),
    )
    cdp.on(
        "Network.responseReceived",
        lambda e: requests.get(e["requestId"], {}).update(type=e.get("type", "Other").lower()),
    )
    cdp.on("Network.loadingFinished", lambda e: requests.get(e["requestId"], {}).update(bytes=e["encodedDataLength"]))
    cdp.on("Network.webSocketCreated", lambda e: sockets.append(e["url"]))

    page.goto(url, wait_until="load")
    if form:
        page.wait_for_function("() => window.__phoneMarks.ready !== undefined", timeout=60_000)
    page.wait_for_load_state("networkidle")
    marks = page.evaluate("""() => ({
        ...window.__phoneMarks,
        paint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime,
    })""")
    context.close()

    by_kind: dict[str, int] = {}
    for request in requests.values():
        kind = resource_kind(request["type"], request["url"])
        by_kind[kind] = by_kind.get(kind, 0) + request["bytes"]
    app_scripts = [r["url"] for r in requests.values() if "/assets/" in r["url"] and r["url"].endswith(".js")]
    return {
        "bytes": by_kind,
        "total": sum(by_kind.values()),
        "app_scripts": len(app_scripts),
        "websockets": len(sockets),
        "paint": marks.get("paint"),
        "usable": marks.get("usable"),
        "connected": marks.get("connected"),
        "ready": marks.get("ready"),
    }


def median(runs: list[dict], key: str) -> float | None:
    values = [run[key] for run in runs if run[key] is not None]
    return statistics.median(values) if values else None


def seconds(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.2f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="loads per page; medians are printed")
    parser.add_argument("--no-build", action="store_true", help="serve the existing build")
    parser.add_argument("--no-throttle", action="store_true", help="bytes only, at full speed")
    args = parser.parse_args()

    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.no_build:
        build_site(RESULTS / "phone-build.log", site_url=None)

    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(Path(tmp), {"REFLEX_DB_URL": f"sqlite:///{tmp}/bench.db"}) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        rows = {}
        for path, form in PAGES.items():
            runs = [load(browser, server.base_url + path, form, not args.no_throttle) for _ in range(args.runs)]
            rows[path] = {**runs[0], **{key: median(runs, key) for key in ("paint", "usable", "connected", "ready")}}
        browser.close()

    throttling = (
        "no throttling"
        if args.no_throttle
        else (f"{CPU_SLOWDOWN}x CPU, {ROUND_TRIP_MS} ms RTT, 1.6 Mbps down / 750 kbps up")
    )
    print(
        f"\nFirst visit at {PHONE['width']} px, empty cache, {throttling}; median of {args.runs}; "
        f"{platform.node()} ({os.cpu_count()} cores), {date.today()}"
    )
    print(
        f"{'page':<15}{'KB':>7}{'doc':>6}{'css':>6}{'js':>7}{'img':>6}{'other':>6}{'app js':>7}{'ws':>4}"
        f"{'first paint':>13}{'form usable':>13}{'connected':>11}{'form ready':>12}"
    )
    for path, row in rows.items():
        kb = {k: row["bytes"].get(k, 0) / 1024 for k in ("document", "css", "scripts", "images", "other")}
        print(
            f"{path:<15}{row['total'] / 1024:>7.1f}{kb['document']:>6.1f}{kb['css']:>6.1f}{kb['scripts']:>7.1f}"
            f"{kb['images']:>6.1f}{kb['other']:>6.1f}{row['app_scripts']:>7}{row['websockets']:>4}"
            f"{seconds(row['paint']):>13}{seconds(row['usable']):>13}{seconds(row['connected']):>11}"
            f"{seconds(row['ready']):>12}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
