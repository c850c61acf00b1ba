"""The outbox: what the visitor waits for, and how soon the publisher has the email.

In one process, as a backend worker runs them: the embedded gateway, called directly, and the
outbox's sender (woken by each store), on a fresh SQLite or PostgreSQL database,
with a real SMTP server on 127.0.0.1 (aiosmtpd, the tests' one). It takes
--messages contact messages one after another and prints p50/p95/max of

- the gateway's answer (what the visitor's submit waits for: the store, with its
  delivery job, in one transaction), with SMTP up and with SMTP down;
- stored -> accepted by the SMTP server (the publisher's inbox, minus the provider).

    .venv/bin/python benchmarks/outbox.py [--messages 200] [--postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.smtp import SmtpServer
from tests.support import publisher_gateway

CONTACT = {
    "firstName": "Jo",
    "lastName": "Reader",
    "email": "jo@example.com",
    "message": "When is the next book out?",
}


def summary(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    print(f"{label:<44} p50 {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms   max {ms[-1]:7.1f} ms")


async def run(db_url: str, smtp: SmtpServer, count: int) -> None:
    from publisher import mailing_list
    from publisher.config.settings import current
    from publisher.mail import outbox

    sender = asyncio.create_task(outbox.run_in_backend(db_url))
    local = mailing_list.EmbeddedList(mail=current().mail, db_url=db_url)
    answers, inbox = [], []
    for n in range(count):
        started = time.perf_counter()
        await local.send_email({**CONTACT, "message": f"Message {n}"})
        answered = time.perf_counter()
        await asyncio.to_thread(smtp.wait_for, n + 1, 30)
        answers.append(answered - started)
        inbox.append(time.perf_counter() - answered)
    summary("gateway answer, SMTP up", answers)
    summary("stored -> accepted by the SMTP server", inbox)
    smtp.stop()
    down = []
    for _ in range(count):
        started = time.perf_counter()
        await local.send_email(CONTACT)
        down.append(time.perf_counter() - started)
    summary("gateway answer, SMTP down", down)
    sender.cancel()
    await asyncio.gather(sender, return_exceptions=True)
    print(
        f"received {len(smtp.received)} of {count}, {len(set(smtp.message_ids()))} distinct Message-IDs; "
        f"{count} queued while SMTP was down"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL instead of SQLite")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the sender logs every failed attempt while SMTP is down
    smtp = SmtpServer().start()
    os.environ.update(smtp.mail_env())  # the list's secret too: the site refuses SMTP without it
    os.environ.pop("PUBLISHER_GATEWAY_URL", None)
    server = None
    with tempfile.TemporaryDirectory() as workdir:
        if args.postgres:
            from tests.postgres import PostgresServer

            server = PostgresServer()
            db_url = server.url(server.migrated_database())
        else:
            db_url = f"sqlite:///{workdir}/outbox.db"
            publisher_gateway(db_url, "migrate")
        try:
            print(f"{args.messages} messages, {'PostgreSQL' if args.postgres else 'SQLite'}, one worker")
            asyncio.run(run(db_url, smtp, args.messages))
        finally:
            if server is not None:
                server.close()


if __name__ == "__main__":
    main()
