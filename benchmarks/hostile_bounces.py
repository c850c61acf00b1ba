"""What a hostile message in the bounce mailbox costs the site's reader (issue 34).

Reports a stranger can send to the bounce address, classified by the site's own
classifier (rules/reports.classify), one process, CPU time and peak memory each:

- qmail-style bounces naming 1,000 to 50,000 addresses (0.1 to 5 MB): before issue 34
  each address had its own regular expression over every line, so the cost grew with
  the square (16,000 addresses: 94 s);
- an RFC 3464 report with as many recipient blocks;
- a 1 MB message of short lines, the worst text for flufl.bounce's detectors at the
  default PUBLISHER_BOUNCE_MAX_BYTES (--short-lines BYTES: another size; a smoke test's few KB).

    .venv/bin/python benchmarks/hostile_bounces.py [--sizes 1000,16000,50000] [--short-lines 1000000]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from publisher.rules import reports
from tests.unit.test_reports import dsn_naming, qmail_bounce_naming


def short_lines(size: int) -> bytes:
    return b"From: someone@example.net\nSubject: hello\n\n" + b"a\n" * (size // 2)


def measure(label: str, raw: bytes) -> None:
    started = time.process_time()
    report = reports.classify(raw)
    elapsed = time.process_time() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{label:<28} {len(raw) / 1e6:5.1f} MB  {elapsed:6.2f} s CPU  peak {peak_mb:5.0f} MB  "
        f"{report.kind or 'unclassified'}: {len(report.failures)} read of {report.recipients_named} named"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,4000,16000,50000", help="addresses named, comma-separated")
    parser.add_argument("--short-lines", type=int, default=1_000_000, metavar="BYTES", help="the short lines' size")
    args = parser.parse_args(argv)
    for count in (int(item) for item in args.sizes.split(",")):
        measure(f"qmail, {count:,} addresses", qmail_bounce_naming(count))
    for count in (int(item) for item in args.sizes.split(",")):
        measure(f"DSN, {count:,} recipients", dsn_naming(count))
    measure(f"{args.short_lines / 1e6:g} MB of short lines", short_lines(args.short_lines))


if __name__ == "__main__":
    main()
