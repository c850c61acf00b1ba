"""Scale-out as compose.yaml describes it (read by tests/compose.py): two site containers of the
image on one Redis and one PostgreSQL (Debian's, on free ports), after the migration step."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import random
import re
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from redis import Redis

from tests import compose
from tests.browser import MIN_FILL_TIME_S
from tests.containers import Container, stored_subscribers
from tests.postgres import GATEWAY_TABLES, PostgresServer
from tests.postgres import USER as POSTGRES_USER
from tests.support import DOCS, FORM_SECRET, RedisServer, clear_of_midnight, event_channel_upgrade, wait_until
from tests.visitor import SUBSCRIBE_STATE, Visitor, ask_here_answer_there, hydrated, notice_changed, run_async

# Every visitor comes from 127.0.0.1: the limit raised through the compose file's own variable.
ADDRESS_LIMIT = "2000/600"
DESKTOP_CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


@dataclass
class Stack:
    sites: list[Container]
    postgres: PostgresServer
    database: str
    migration: str
    redis: RedisServer


def container_of(name: str, variables: dict[str, str], services: dict[str, str]) -> Container:
    spec = compose.service(name, variables)
    spec.environment = compose.point_at(spec.environment, services)
    return Container.of_service(spec)


@contextlib.contextmanager
def compose_stack(
    image: str,
    postgres: PostgresServer,
    redis_dir: Path,
    variables: dict[str, str],
    env: dict[str, str] | None = None,
    mounts: dict[str, str] | None = None,
) -> Iterator[Stack]:
    """compose.yaml's order on a fresh database: the migrate step, then the site's replicas started together
    (``env`` added to their environment, ``mounts`` read-only into each); logs printed, all removed after."""
    postgres_service = compose.load()["services"]["postgres"]["environment"]
    assert postgres_service["POSTGRES_USER"] == POSTGRES_USER
    database = postgres_service["POSTGRES_DB"]
    postgres.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    postgres.execute(f'CREATE DATABASE "{database}"')
    redis = RedisServer(redis_dir)
    variables = {"PUBLISHER_IMAGE": image, "POSTGRES_PASSWORD": postgres.password, **variables}
    services = {"postgres": f"127.0.0.1:{postgres.port}", "redis": f"127.0.0.1:{redis.port}"}
    started: list[Container] = []
    try:
        release = container_of("migrate", variables, services)
        started.append(release)
        migration = release.run_to_completion()
        assert migration.returncode == 0, migration.stdout + migration.stderr
        sites = [container_of("site", variables, services) for _ in range(compose.service("site", variables).replicas)]
        for site in sites:
            site.env = {**site.env, **(env or {})}
            site.mounts = dict(mounts or {})
        started += sites
        with ThreadPoolExecutor(len(sites)) as together:
            list(together.map(Container.start, sites))
        yield Stack(sites=sites, postgres=postgres, database=database, migration=migration.stderr, redis=redis)
    finally:
        for container in started:
            print(f"--- logs of {container.name} ---\n{container.logs()}")
            container.remove()
        redis.stop()


@pytest.fixture(scope="module")
def stack(image: str, postgres: PostgresServer, tmp_path_factory) -> Iterator[Stack]:
    variables = {"PUBLISHER_RATE_LIMIT_ADDRESS": ADDRESS_LIMIT, "PUBLISHER_FORM_SECRET": FORM_SECRET}
    with compose_stack(image, postgres, tmp_path_factory.mktemp("redis"), variables) as running:
        yield running


def test_the_compose_file_migrates_first_then_runs_two_documented_replicas_behind_one_proxy_on_redis_and_postgres():
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
    assert site.environment["REFLEX_TRUSTED_PROXY_HOPS"] == "1"  # behind the documented proxy
    redis = compose.load()["services"]["redis"]["command"]
    assert redis[redis.index("--maxmemory-policy") + 1] == "noeviction"  # never drops a counter
    assert compose.interpolate(redis[redis.index("--maxmemory") + 1], {}) == "512mb"
    with pytest.raises(KeyError, match="POSTGRES_PASSWORD"):
        compose.service("site", {})  # no default password
    configuration = (DOCS / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z_]+)`", configuration, re.M)) | set(
        re.findall(r"^\| `[A-Z_]+`, `([A-Z_]+)`", configuration, re.M)
    )
    assert sorted(set(site.environment) - documented) == []  # every variable it sets is documented


# Each secret compose mounts: the variable it takes it from, and the site's variable naming its file.
SECRETS = {
    "postgres_password": ("POSTGRES_PASSWORD", "PUBLISHER_DB_PASSWORD_FILE"),
    "list_secret": ("PUBLISHER_LIST_SECRET", "PUBLISHER_LIST_SECRET_FILE"),
    "smtp_url": ("PUBLISHER_SMTP_URL", "PUBLISHER_SMTP_URL_FILE"),
    "gateway_api_key": ("PUBLISHER_GATEWAY_API_KEY", "PUBLISHER_GATEWAY_API_KEY_FILE"),
    "bounce_mailbox": ("PUBLISHER_BOUNCE_MAILBOX", "PUBLISHER_BOUNCE_MAILBOX_FILE"),
    "bounce_webhook_secret": ("PUBLISHER_BOUNCE_WEBHOOK_SECRET", "PUBLISHER_BOUNCE_WEBHOOK_SECRET_FILE"),
    "form_secret": ("PUBLISHER_FORM_SECRET", "PUBLISHER_FORM_SECRET_FILE"),
}


def test_the_compose_file_keeps_secrets_out_of_the_environment_and_drops_every_privilege():
    values = {variable: f"{name}-secret-value-0123456789abcdef" for name, (variable, _) in SECRETS.items()}
    for service_name in ("site", "migrate"):
        spec = compose.service(service_name, values)
        shown = "\n".join(f"{key}={value}" for key, value in spec.environment.items())
        assert not [value for value in values.values() if value in shown]
        assert spec.secrets == {name: values[variable] for name, (variable, _) in SECRETS.items()}
        for name, (_, file_variable) in SECRETS.items():
            assert spec.environment[file_variable] == f"/run/secrets/{name}"
        assert spec.cap_drop == ["ALL"] and spec.security_opt == ["no-new-privileges:true"]
    database = compose.load()["services"]["postgres"]
    assert database["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    assert "POSTGRES_PASSWORD" not in database["environment"]


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
    shown = site.exec("publisher-gateway", "visits", "--days", "1", "--csv")
    for row in csv.reader(io.StringIO(shown.stdout)):
        if row[:1] == ["campaign"] and row[2].endswith(f"/ {campaign}"):
            return int(row[3]), int(row[4])
    return None


def visit_keys(redis: RedisServer) -> list[bytes]:
    with Redis.from_url(redis.url) as client:
        return list(client.scan_iter(match="publisher:visits:*"))


def test_views_through_both_replicas_add_up_to_one_count_under_one_salt_in_postgresql(stack: Stack):
    clear_of_midnight()
    campaign = f"scale-out-{random.randrange(10**9)}"
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

    stored = f"SELECT coalesce(sum(views), 0) FROM visit_count WHERE kind = 'campaign' AND key LIKE '%/ {campaign}'"
    wait_until(lambda: stack.postgres.execute(stored, stack.database)[0][0] >= 6, 60, "both replicas' flushes")
    assert campaign_row(first, campaign) == (6, 2)
    assert campaign_row(second, campaign) == (6, 2)
    # One salt, the database's (none in Redis): today's, perhaps yesterday's or (from 23:55 UTC) tomorrow's.
    today = datetime.now(UTC).date()
    salts = {str(row[0]) for row in stack.postgres.execute("SELECT day FROM visit_salt", stack.database)}
    assert today.isoformat() in salts
    assert salts <= {(today + timedelta(days=n)).isoformat() for n in (-1, 0, 1)}, salts
    assert visit_keys(stack.redis) == []


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
    stored = first.exec("publisher-gateway", "messages").stdout
    assert stored.count("Asked on one container, answered on the other.") == 1


async def subscribe_as_visitor(base_url: str, name: str, email: str, source: str | None = None) -> str:
    """One visitor's subscription over the websocket (from ``source``): the form's status at the end."""
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
        # Half start on the container that will stop, and come back through the other one.
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
    stored = Counter(email.lower() for email, _, _ in stored_subscribers(surviving))
    assert {email: stored[email] for email in accepted} == dict.fromkeys(accepted, 1)  # none lost, none twice
    assert httpx.get(f"{surviving.base_url}/", timeout=5).status_code == 200


def test_behind_one_proxy_hop_two_visitors_have_limits_of_their_own(stack: Stack):
    """Every connection comes from the proxy; each visitor is told apart by X-Forwarded-For."""
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
