"""A release to 10,000 readers: queueing, sending, and a kill halfway, on SQLite and PostgreSQL.

For each database: --readers confirmed readers are imported, then

- queue: the campaign and one job per reader, in one transaction (timed in this process);
- one process: `publisher-gateway announce SLUG --yes` sends them all to aiosmtpd on
  127.0.0.1 (the tests' server), PUBLISHER_SEND_RATE=0 (no limit);
- two processes: two such commands on one campaign at once;
- killed and resumed: one command killed (SIGKILL) halfway, then run again;
- with VERP: one process again, each email with its own Return-Path
  (PUBLISHER_BOUNCE_ADDRESS), to show the send rate does not change;
- the bounce mailbox: --reports delivery status notifications (one per reader of the
  VERP run, addressed to its Return-Path) put into Dovecot (tests/imap.py), then read
  once by the site's reader (bounce_mailbox.read_once: fetch, classify, record, move).

Each run prints emails per second (first to last arrival at the SMTP server), the
peak memory of the sending process (its maximum resident set), and the readers
missing and doubled, which must be 0/0 (a kill may double at most one); the mailbox
run prints reports per second and how many readers it made bounced.

    .venv/bin/python benchmarks/campaign.py [--readers 10000] [--reports 1000] [--only sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import collections
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import announce_process, publisher_gateway


class Arrivals:
    """When the SMTP server took the first and the latest message (polled every 5 ms)."""

    def __init__(self, smtp: SmtpServer):
        self.smtp, self.first, self.last, self.count = smtp, None, None, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            count = len(self.smtp.received)
            if count != self.count:
                now = time.perf_counter()
                self.first = self.first or now
                self.last, self.count = now, count
            time.sleep(0.005)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return (self.count - 1) / (self.last - self.first) if self.count > 1 else 0.0


def readers_csv(path: Path, count: int) -> Path:
    lines = ["email,name,status", *(f"reader{n}@readers.example,Reader {n},confirmed" for n in range(count))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def finish(process: subprocess.Popen, log: Path) -> float:
    """Wait for the command; its own peak memory in MB (VmHWM, read until it exits).

    Not wait4's ru_maxrss, which also counts the largest process it ever waited for.
    """
    peak = 0
    while process.poll() is None:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
            peak = max(peak, int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1]))
        except (OSError, StopIteration):
            pass
        time.sleep(0.2)
    assert process.returncode == 0, log.read_text()
    return peak / 1024


def outcome(smtp: SmtpServer, readers: int) -> str:
    counts = collections.Counter(address for r in smtp.received for address in r.rcpt_tos)
    missing = readers - len(counts)
    doubled = sum(times - 1 for times in counts.values())
    return f"missing/doubled {missing}/{doubled}"


def queue(db_url: str, slug: str) -> float:
    from publisher.config.settings import current
    from publisher.content import books
    from publisher.mail import mailer, outbox, release_email
    from publisher.storage import campaigns, tables

    mail = current().mail
    started = time.perf_counter()
    campaigns.create_campaign(
        slug,
        release_email.subject(books.book_by_slug(slug)),
        lambda _reader: mailer.new_message_id(mail),
        tables.utc_now(),
        outbox.RETRY_FOR,
        db_url,
    )
    return time.perf_counter() - started


def fresh(kind: str, workdir: Path, name: str, postgres) -> str:
    if kind == "sqlite":
        url = f"sqlite:///{workdir / name}.db"
        publisher_gateway(url, "migrate")
        return url
    return postgres.url(postgres.migrated_database())


def read_bounces(label: str, db_url: str, smtp: SmtpServer, dovecot, env: dict[str, str], reports: int) -> None:
    """``reports`` bounce reports, one per reader of the campaign ``smtp`` received, read from the mailbox once."""
    from publisher.config.settings import from_environ
    from publisher.returns import bounce_mailbox
    from tests.samples import bounce_sample

    dovecot.empty()
    for item in smtp.received[:reports]:
        reader = item.rcpt_tos[0]
        report = bounce_sample(
            "dsn-postfix-hard", verp=item.mail_from, reader=reader, message_id=item.message["Message-ID"]
        )
        dovecot.append(report)
    read_env = {
        **env,
        "PUBLISHER_SMTP_URL": smtp.url(),
        "PUBLISHER_BOUNCE_MAILBOX": dovecot.url(),
        "PUBLISHER_BOUNCE_CA_FILE": str(dovecot.ca_file),
    }
    started = time.perf_counter()
    reading = bounce_mailbox.read_once(from_environ(read_env), db_url)
    elapsed = time.perf_counter() - started
    bounced = publisher_gateway(db_url, "subscribers", "--status", "bounced").stdout.count("\n") - 1
    print(
        f"{label:<10} bounce mailbox: {reading.bounces} reports read in {elapsed:5.1f} s "
        f"({reading.bounces / elapsed:5.0f} reports/s), {bounced} readers bounced, {reading.moved} moved",
        flush=True,
    )


def run_kind(
    kind: str, readers: int, workdir: Path, postgres, env: dict[str, str], slugs: list[str], dovecot, reports: int
) -> None:
    label = "SQLite" if kind == "sqlite" else "PostgreSQL"
    for processes, verp in ((1, False), (2, False), (1, True)):
        smtp = SmtpServer().start()
        run_env = {**env, "PUBLISHER_SMTP_URL": smtp.url()}
        if verp:
            run_env["PUBLISHER_BOUNCE_ADDRESS"] = "bounces@animals.example"
        os.environ.update(run_env)
        db_url = fresh(kind, workdir, f"{kind}-{processes}{'-verp' if verp else ''}", postgres)
        publisher_gateway(db_url, "import", str(readers_csv(workdir / "readers.csv", readers)))
        queued = queue(db_url, slugs[0])
        arrivals = Arrivals(smtp)
        started = time.perf_counter()
        log = workdir / "announce.log"
        running = [announce_process(db_url, run_env, slugs[0], log) for _ in range(processes)]
        peak = max(finish(process, log) for process in running)
        elapsed = time.perf_counter() - started
        rate = arrivals.stop()
        print(
            f"{label:<10} {processes} process{'es' if processes > 1 else '  '}{' VERP' if verp else '     '}  "
            f"queue {readers} in {queued:5.2f} s   "
            f"send {rate:6.0f} emails/s ({elapsed:5.1f} s with start-up)   peak {peak:4.0f} MB   "
            f"{outcome(smtp, readers)}",
            flush=True,
        )
        if verp:
            read_bounces(label, db_url, smtp, dovecot, run_env, reports)
        os.environ.pop("PUBLISHER_BOUNCE_ADDRESS", None)
        smtp.stop()

    smtp = SmtpServer().start()
    run_env = {**env, "PUBLISHER_SMTP_URL": smtp.url()}
    os.environ.update(run_env)
    db_url = fresh(kind, workdir, f"{kind}-kill", postgres)
    publisher_gateway(db_url, "import", str(readers_csv(workdir / "readers.csv", readers)))
    log = workdir / "announce.log"
    first = announce_process(db_url, run_env, slugs[1], log)
    smtp.wait_for(readers // 2, timeout=600)
    first.send_signal(signal.SIGKILL)
    first.wait()
    at_kill = len(smtp.received)
    started = time.perf_counter()
    resumed = announce_process(db_url, run_env, slugs[1], log)
    finish(resumed, log)
    print(
        f"{label:<10} killed at {at_kill} of {readers}, resumed in {time.perf_counter() - started:5.1f} s   "
        f"{outcome(smtp, readers)}",
        flush=True,
    )
    smtp.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=10_000)
    parser.add_argument("--reports", type=int, default=1000)
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    from publisher.content.books import BOOKS

    env = {
        "PUBLISHER_NOTIFY_TO": "books@example.com",
        "PUBLISHER_MAIL_FROM": "Animals We Confuse <site@animals.example>",
        "PUBLISHER_LIST_SECRET": "benchmark-list-secret-0123456789abcdef0123",
        "PUBLISHER_POSTAL_ADDRESS": POSTAL_ADDRESS,
        "PUBLISHER_SEND_RATE": "0",
        "PUBLISHER_GATEWAY_URL": "",
    }
    from tests.imap import DovecotServer

    postgres = None
    dovecot = DovecotServer.on_free_ports()
    with tempfile.TemporaryDirectory() as workdir:
        try:
            for kind in ("sqlite", "postgresql"):
                if args.only not in (None, kind):
                    continue
                if kind == "postgresql":
                    from tests.postgres import PostgresServer

                    postgres = PostgresServer()
                slugs = [book.slug for book in BOOKS]
                run_kind(kind, args.readers, Path(workdir), postgres, env, slugs, dovecot, args.reports)
        finally:
            dovecot.close()
            if postgres is not None:
                postgres.close()


if __name__ == "__main__":
    main()
