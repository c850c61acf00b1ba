"""Scale-out as compose.yaml describes it: two site containers of the image on one Redis and
one PostgreSQL, after the migration step. Its journey: a contact question asked through one
and answered through the other, one address subscribed in Chromium through each, every one
read back through the other replica.

The containers' image, command and environment are read from compose.yaml
(tests/compose.py); Redis and PostgreSQL are Debian's servers on free 127.0.0.1
ports, which the compose service names ``redis`` and ``postgres`` are pointed at.
"""

from __future__ import annotations

import asyncio
import csv
import io
import random
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests import compose
from tests.browser import MIN_FILL_TIME_S, open_page, submit_button, subscribe
from tests.containers import Container, stored_messages, stored_subscribers
from tests.postgres import GATEWAY_TABLES, PostgresServer
from tests.postgres import USER as POSTGRES_USER
from tests.support import FORM_SECRET, PROJECT_ROOT, RedisServer, clear_of_midnight, event_channel_upgrade, wait_until
from tests.visitor import SUBSCRIBE_STATE, Visitor, ask_here_answer_there, hydrated, notice_changed, run_async

SUBSCRIBE_FAILURE_TOAST = "Failed to subscribe. Please try again."
# Every visitor of these tests comes from 127.0.0.1: the per-address limit is raised through
# the compose file's own variable, as an operator behind one proxy address would.
ADDRESS_LIMIT = "2000/600"
# A reader's browser (a test client's user agent is a bot, counted apart).
DESKTOP_CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


@dataclass
class Stack:
    sites: list[Container]
    postgres: PostgresServer
    database: str
    migration: str  # what the release step said (its messages: stderr)
    redis: RedisServer


def container_of(name: str, variables: dict[str, str], services: dict[str, str]) -> Container:
    spec = compose.service(name, variables)
    spec.environment = compose.point_at(spec.environment, services)
    return Container.of_service(spec)


@pytest.fixture(scope="module")
def stack(image: str, postgres: PostgresServer, tmp_path_factory) -> Iterator[Stack]:
    postgres_service = compose.load()["services"]["postgres"]["environment"]
    assert postgres_service["POSTGRES_USER"] == POSTGRES_USER  # the test cluster's user
    database = postgres_service["POSTGRES_DB"]
    postgres.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    postgres.execute(f'CREATE DATABASE "{database}"')
    redis = RedisServer(tmp_path_factory.mktemp("redis"))
    variables = {
        "PUBLISHER_IMAGE": image,
        "POSTGRES_PASSWORD": postgres.password,
        "PUBLISHER_RATE_LIMIT_ADDRESS": ADDRESS_LIMIT,
        "PUBLISHER_FORM_SECRET": FORM_SECRET,
    }
    services = {"postgres": f"127.0.0.1:{postgres.port}", "redis": f"127.0.0.1:{redis.port}"}
    started: list[Container] = []
    try:
        release = container_of("migrate", variables, services)
        started.append(release)
        migration = release.run_to_completion()
        assert migration.returncode == 0, migration.stdout + migration.stderr
        sites = [container_of("site", variables, services) for _ in range(compose.service("site", variables).replicas)]
        started += sites
        with ThreadPoolExecutor(len(sites)) as together:  # each migrating under the lock at its start
            list(together.map(Container.start, sites))
        yield Stack(sites=sites, postgres=postgres, database=database, migration=migration.stderr, redis=redis)
    finally:
        for container in started:
            print(f"--- logs of {container.name} ---\n{container.logs()}")
            container.remove()
        redis.stop()


def stored_addresses(site: Container) -> Counter[str]:
    """How often each address (lower-cased) is in the operator's CSV export, read through ``site``."""
    return Counter(email.lower() for email, _, _ in stored_subscribers(site))


# --- The file ------------------------------------------------------------------------------


def test_the_compose_file_migrates_first_then_runs_two_replicas_of_one_image_on_redis_and_postgres():
    variables = {"POSTGRES_PASSWORD": "pw"}
    site, release = compose.service("site", variables), compose.service("migrate", variables)
    assert site.replicas == 2
    assert site.command == ["publisher-serve"] and release.command == ["publisher-gateway", "migrate"]
    assert site.image == release.image and site.environment == release.environment
    assert site.depends_on == {
        "migrate": "service_completed_successfully",
        "redis": "service_healthy",
        "postgres": "service_healthy",
    }
    assert site.environment["REFLEX_DB_URL"].startswith("postgresql+psycopg://publisher@postgres:5432/")
    assert site.environment["REFLEX_REDIS_URL"] == "redis://redis:6379/0"
    assert site.read_only and site.tmpfs == ["/tmp"]
    with pytest.raises(KeyError, match="POSTGRES_PASSWORD"):
        compose.service("site", {})  # no default password


def test_the_compose_file_keeps_secrets_out_of_the_environment_and_drops_every_privilege():
    """``docker inspect`` shows a container's environment: no secret may be there."""
    secrets = {
        "POSTGRES_PASSWORD": "pg-secret-value",
        "PUBLISHER_LIST_SECRET": "list-secret-value-0123456789abcdef0123",
        "PUBLISHER_SMTP_URL": "smtps://site:smtp-secret-value@smtp.example.com",
        "PUBLISHER_GATEWAY_API_KEY": "api-key-secret-value",
        "PUBLISHER_BOUNCE_MAILBOX": "imaps://bounces:imap-secret-value@imap.example.com/INBOX",
        "PUBLISHER_BOUNCE_WEBHOOK_SECRET": "hook-secret-value-0123456789abcdef0123",
        "PUBLISHER_FORM_SECRET": "form-secret-value-0123456789abcdef0123",
    }
    for name in ("site", "migrate"):
        spec = compose.service(name, secrets)
        shown = "\n".join(f"{key}={value}" for key, value in spec.environment.items())
        assert not [value for value in secrets.values() if value in shown]
        assert spec.secrets == {
            "postgres_password": "pg-secret-value",
            "list_secret": "list-secret-value-0123456789abcdef0123",
            "smtp_url": "smtps://site:smtp-secret-value@smtp.example.com",
            "gateway_api_key": "api-key-secret-value",
            "bounce_mailbox": "imaps://bounces:imap-secret-value@imap.example.com/INBOX",
            "bounce_webhook_secret": "hook-secret-value-0123456789abcdef0123",
            "form_secret": "form-secret-value-0123456789abcdef0123",
        }
        assert spec.environment["PUBLISHER_DB_PASSWORD_FILE"] == "/run/secrets/postgres_password"
        assert spec.environment["PUBLISHER_LIST_SECRET_FILE"] == "/run/secrets/list_secret"
        assert spec.environment["PUBLISHER_SMTP_URL_FILE"] == "/run/secrets/smtp_url"
        assert spec.environment["PUBLISHER_GATEWAY_API_KEY_FILE"] == "/run/secrets/gateway_api_key"
        assert spec.environment["PUBLISHER_BOUNCE_MAILBOX_FILE"] == "/run/secrets/bounce_mailbox"
        assert spec.environment["PUBLISHER_BOUNCE_WEBHOOK_SECRET_FILE"] == "/run/secrets/bounce_webhook_secret"
        assert spec.environment["PUBLISHER_FORM_SECRET_FILE"] == "/run/secrets/form_secret"
        assert spec.cap_drop == ["ALL"] and spec.security_opt == ["no-new-privileges:true"]
    database = compose.load()["services"]["postgres"]
    assert database["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    assert "POSTGRES_PASSWORD" not in database["environment"]


def test_behind_the_documented_proxy_the_replicas_trust_one_hop_and_redis_never_drops_a_counter():
    site = compose.service("site", {"POSTGRES_PASSWORD": "pw"})
    assert site.environment["REFLEX_TRUSTED_PROXY_HOPS"] == "1"
    redis = compose.load()["services"]["redis"]["command"]
    assert redis[redis.index("--maxmemory-policy") + 1] == "noeviction"
    assert compose.interpolate(redis[redis.index("--maxmemory") + 1], {}) == "512mb"


def test_every_variable_the_compose_file_sets_is_documented_in_the_configuration_page():
    configuration = (PROJECT_ROOT / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z_]+)`", configuration, re.M)) | set(
        re.findall(r"^\| `[A-Z_]+`, `([A-Z_]+)`", configuration, re.M)
    )
    environment = compose.service("site", {"POSTGRES_PASSWORD": "pw"}).environment
    assert sorted(set(environment) - documented) == []


# --- The running stack ---------------------------------------------------------------------


def test_the_release_step_migrated_and_both_replicas_started_healthy(stack: Stack):
    assert "is up to date" in stack.migration
    assert stack.postgres.password not in stack.migration
    tables = stack.postgres.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", stack.database
    )
    assert [row[0] for row in tables] == GATEWAY_TABLES
    for site in stack.sites:
        assert httpx.get(f"{site.base_url}/_health", timeout=5).status_code == 200
        assert "Started worker-2" in site.logs()  # GRANIAN_WORKERS from the file


def campaign_row(site: Container, campaign: str) -> tuple[int, int] | None:
    """(views, visitors) of ``campaign`` today, as the operator reads them inside a container."""
    shown = site.exec("publisher-gateway", "visits", "--days", "1", "--csv")
    for row in csv.reader(io.StringIO(shown.stdout)):
        if row[:1] == ["campaign"] and row[2].endswith(f"/ {campaign}"):
            return int(row[3]), int(row[4])
    return None


def salt_keys(redis: RedisServer) -> list[str]:
    scanned = subprocess.run(
        ["redis-cli", "-p", str(redis.port), "--scan", "--pattern", "publisher:visits:salt:*"],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    )
    return scanned.stdout.split()


def test_views_through_both_replicas_add_up_to_one_count_under_one_salt_in_redis(stack: Stack):
    """One reader behind the proxy reads through either replica: one visitor of the day, every
    view counted once, the same salt for both (Redis holds one); another reader is another visitor."""
    clear_of_midnight()  # the day it counts is the day it reads back
    campaign = f"scale-out-{random.randrange(10**9)}"  # this run's own row among the module's counts
    landing = f"/about?utm_source=newsletter&utm_medium=email&utm_campaign={campaign}"
    first, second = stack.sites
    for site, address, times in ((first, "203.0.113.30", 3), (second, "203.0.113.30", 2), (second, "203.0.113.31", 1)):
        for _ in range(times):
            answer = httpx.get(
                site.base_url + landing,
                headers={"User-Agent": DESKTOP_CHROME, "X-Forwarded-For": address},
                timeout=10,
            )
            assert answer.status_code == 200

    # Waited for in the database (each poll of the command starts a process), then read as the operator does.
    stored = f"SELECT coalesce(sum(views), 0) FROM visit_count WHERE kind = 'campaign' AND key LIKE '%/ {campaign}'"
    wait_until(lambda: stack.postgres.execute(stored, stack.database)[0][0] >= 6, 60, "both replicas' flushes")
    assert campaign_row(first, campaign) == (6, 2)
    assert campaign_row(second, campaign) == (6, 2)  # one database: either replica reads the same
    # The salt is Redis's (one reader through both replicas was one visitor: they share it); a
    # worker fetches the next day's from 23:55 UTC, and the stack may have started the day before.
    today = datetime.now(UTC).date()
    days = {(today + timedelta(days=n)).isoformat() for n in (-1, 0, 1)}
    keys = salt_keys(stack.redis)
    assert f"publisher:visits:salt:{today.isoformat()}" in keys
    assert {key.removeprefix("publisher:visits:salt:") for key in keys} <= days, keys


def test_a_question_asked_through_one_container_is_answered_through_the_other(stack: Stack):
    first, second = stack.sites

    sender = {"firstName": "Cross", "lastName": "Container", "email": "cross@example.com"}
    assert run_async(
        ask_here_answer_there(
            first.base_url,
            second.base_url,
            sender,
            "Asked on one container, answered on the other.",
            MIN_FILL_TIME_S,
        )
    ) == ("success", "")
    assert stored_messages(first).count("Asked on one container, answered on the other.") == 1


async def subscribe_as_visitor(base_url: str, name: str, email: str, source: str | None = None) -> str:
    """One visitor's subscription over the websocket: the form's status at the end ("success"/"error").

    ``source``: the visitor's own loopback address (the site limits open tabs per address)."""
    visitor = Visitor(base_url, "/subscribe", source=source)
    try:
        await visitor.open_page(lambda v: hydrated(v) or not v.connected, timeout_s=30)  # a stop cuts it off
        if not visitor.connected:
            return "disconnected"
        before = visitor.var(SUBSCRIBE_STATE, "notice_id", "")
        await visitor.send(f"{SUBSCRIBE_STATE}.submit", {"form_data": {"name": name, "email": email}})
        await visitor.wait_for(lambda v: notice_changed(SUBSCRIBE_STATE, before)(v) or not v.connected, 30)
        return visitor.var(SUBSCRIBE_STATE, "status") if visitor.connected else "disconnected"
    finally:
        await visitor.close()


def test_one_address_subscribed_through_both_containers_at_once_is_stored_once(stack: Stack, page: Page):
    first, second = stack.sites
    subscribe(page, first.base_url, "Dup Reader", "dup@example.com")

    async def together() -> list[str]:
        return await asyncio.gather(
            *(
                subscribe_as_visitor(
                    stack.sites[i % 2].base_url, "Dup Reader", "Dup@Example.com" if i % 3 else "dup@example.com"
                )
                for i in range(20)
            )
        )

    assert run_async(together()) == ["success"] * 20  # a repeat is a success that changes nothing
    subscribe(page, second.base_url, "Dup Again", "DUP@example.com")
    stored = [(email, name) for email, name, _ in stored_subscribers(second) if email.lower() == "dup@example.com"]
    assert stored == [("dup@example.com", "Dup Reader")]  # once: the first subscription, unchanged


def test_postgres_stopped_while_the_site_runs_gives_the_failure_toast_then_recovers(stack: Stack, page: Page):
    site = stack.sites[0]
    open_page(page, site.base_url, "/subscribe")
    page.fill("#subscribe-name", "Outage Reader")
    page.fill("#subscribe-email", "outage@example.com")
    stack.postgres.stop()
    try:
        submit_button(page).click()
        expect(page.locator("[data-sonner-toast]", has_text=SUBSCRIBE_FAILURE_TOAST)).to_be_visible(timeout=15_000)
        expect(page.locator("#subscribe-email")).to_have_value("outage@example.com")  # nothing typed is lost
        assert page.locator("#subscribe-success").count() == 0
    finally:
        stack.postgres.start()
    # Once the database is back, the same press of the button succeeds, and it is stored once.
    submit_button(page).click()
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    assert stored_addresses(stack.sites[1])["outage@example.com"] == 1
    for other in stack.sites:
        assert httpx.get(f"{other.base_url}/_health", timeout=5).status_code == 200


def test_one_container_stopped_during_a_load_run_the_other_keeps_serving_and_nothing_accepted_is_lost(stack: Stack):
    stopping, surviving = stack.sites
    visitors = 60
    rng = random.Random(11)
    offsets = [rng.uniform(0, 4.0) for _ in range(visitors)]

    async def one(index: int, go: asyncio.Event, served_there: asyncio.Event) -> tuple[str, list[tuple[str, str]]]:
        email = f"load{index}@example.com"
        attempts = []
        await go.wait()
        await asyncio.sleep(offsets[index])
        # Half start on the container that will stop; whoever loses it comes back through the
        # other one, as a browser reconnecting through the load balancer does.
        for site in [stopping, surviving] if index % 2 == 0 else [surviving]:
            try:
                status = await subscribe_as_visitor(site.base_url, f"Load {index}", email, f"127.0.1.{index + 2}")
            except Exception as exc:  # noqa: BLE001 - a refused or dropped connection is an outcome here
                status = type(exc).__name__
            attempts.append((site.name, status))
            if status == "success":
                if site is stopping:
                    served_there.set()
                break
        return email, attempts

    async def run() -> list[tuple[str, list[tuple[str, str]]]]:
        go, served_there = asyncio.Event(), asyncio.Event()
        tasks = [asyncio.create_task(one(i, go, served_there)) for i in range(visitors)]
        go.set()
        # The run is under way: the container to be stopped has served a visitor (the others keep
        # arriving over four seconds).
        await asyncio.wait_for(served_there.wait(), 120)
        await asyncio.to_thread(stopping.send_sigterm)
        return await asyncio.gather(*tasks)

    results = run_async(run())
    print("attempts:", Counter(tuple(status for _, status in attempts) for _, attempts in results))
    assert stopping.wait_exit() == 0
    accepted = {email for email, attempts in results if attempts[-1][1] == "success"}
    assert len(accepted) == visitors, [r for r in results if r[1][-1][1] != "success"]
    on_surviving = [status for _, attempts in results for name, status in attempts if name == surviving.name]
    assert set(on_surviving) == {"success"}  # the other container answered every visitor it got
    assert any(name == stopping.name and status == "success" for _, attempts in results for name, status in attempts)
    stored = stored_addresses(surviving)
    assert {email: stored[email] for email in accepted} == dict.fromkeys(accepted, 1)  # none lost, none twice
    assert httpx.get(f"{surviving.base_url}/", timeout=5).status_code == 200


def test_behind_one_proxy_hop_two_visitors_have_limits_of_their_own(stack: Stack):
    """As compose.yaml deploys it, behind the reverse proxy: every connection comes from the
    proxy's address, and each visitor is told apart by X-Forwarded-For (one trusted hop)."""
    site = next(site for site in stack.sites if site.state()["Status"] == "running")  # one may be stopped
    per_address = 60  # the site's default PUBLISHER_MAX_TABS_PER_ADDRESS, which the file leaves as it is
    opened = []
    try:
        for _ in range(per_address):
            status, conn = event_channel_upgrade(site.port, headers={"X-Forwarded-For": "203.0.113.10"})
            opened.append(conn)
            assert status == 101
        refused, conn = event_channel_upgrade(site.port, headers={"X-Forwarded-For": "203.0.113.10"})
        conn.close()
        assert refused == 429  # the first visitor is at their limit...
        other, conn = event_channel_upgrade(site.port, headers={"X-Forwarded-For": "203.0.113.20"})
        opened.append(conn)
        assert other == 101  # ...and the second, through the same proxy, is not
    finally:
        for conn in opened:
            conn.close()
