"""The bounce rules (rules/bounces.py), without a server: VERP, kinds, soft bounces, pausing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from publisher import returns
from publisher.mail.campaign import FailureStreak
from publisher.rules import bounces
from publisher.rules.bounces import HARD, SOFT, SentEmail
from publisher.rules.list_rules import ListStatus, import_step, read_import
from publisher.storage.bounce_records import Report

SECRET = "a-list-secret-0123456789abcdef0123456789"
OLD_SECRET = "an-older-list-secret-0123456789abcdef01234"
BOUNCES = "bounces@animals.example"
NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def test_an_emails_return_path_names_its_job_and_reads_back_under_the_secret_or_a_previous_one():
    address = bounces.verp_address(BOUNCES, SECRET, 48213)
    local, _, domain = address.rpartition("@")
    assert domain == "animals.example" and local.startswith("bounces+")
    assert len(local) <= 64  # RFC 5321's local part
    assert local == local.lower()  # some servers fold the case of a local part
    assert bounces.read_verp([SECRET], address, BOUNCES) == 48213
    assert bounces.read_verp([SECRET], f"<{address.upper()}>", BOUNCES) == 48213
    signed_before = bounces.verp_address(BOUNCES, OLD_SECRET, 99)
    assert bounces.read_verp([SECRET, OLD_SECRET], signed_before, BOUNCES) == 99
    assert bounces.read_verp([SECRET], signed_before, BOUNCES) is None


def test_a_forged_or_changed_token_names_nobody():
    address = bounces.verp_address(BOUNCES, SECRET, 7)
    local, _, domain = address.rpartition("@")
    job, _, mac = local.removeprefix("bounces+").partition("-")
    other_job = f"bounces+{format(8, 'x')}-{mac}@{domain}"  # someone else's job, this job's signature
    changed_mac = f"bounces+{job}-{'0' * len(mac)}@{domain}"
    for forged in (other_job, changed_mac, "bounces+7@animals.example", "bounces@animals.example"):
        assert bounces.read_verp([SECRET], forged, BOUNCES) is None, forged
    assert bounces.read_verp(["another-secret-entirely-0123456789abcd"], address, BOUNCES) is None
    assert bounces.read_verp([SECRET], address.replace("animals.example", "other.example"), BOUNCES) is None
    assert bounces.read_verp([SECRET], address.replace("bounces+", "post+"), BOUNCES) is None


@pytest.mark.parametrize(
    ("status", "action", "kind"),
    [
        ("5.1.1", "failed", HARD),  # unknown mailbox
        ("5.4.4", "failed", HARD),  # domain without mail
        ("5.7.1 (delivery not authorized)", "failed", HARD),
        ("4.2.2", "failed", SOFT),  # mailbox full
        ("4.4.7", "delayed", SOFT),
        ("", "delayed", SOFT),
        ("2.0.0", "delivered", None),
        ("2.0.0", "relayed", None),
        ("not a status", "failed", None),
        ("", "failed", HARD),  # cut off before its Status: "failed" is final, no retry follows
    ],
)
def test_a_recipients_status_is_hard_soft_or_nothing(status, action, kind):
    assert bounces.kind_of_status(status, action) == kind


def test_a_refusal_of_the_reader_while_sending_is_hard_when_permanent_and_soft_once_given_up():
    """The sender asks only about an email it gave up on: a 5xx at once, a 4xx after its retries."""
    refused = returns.at_sending(7, returns.DeliveryFailed("550 5.1.1 unknown", permanent=True, about_recipient=True))
    assert refused == Report(HARD, "550 5.1.1 unknown", "sending", delivery_id=7)
    given_up = returns.at_sending(8, returns.DeliveryFailed("452 mailbox full", permanent=False, about_recipient=True))
    assert given_up == Report(SOFT, "452 mailbox full", "sending", delivery_id=8)
    assert returns.at_sending(9, returns.DeliveryFailed("535 login refused", permanent=True)) is None  # the session's


def sent(delivery_id: int, days_ago: float, bounce: str | None = None) -> SentEmail:
    return SentEmail(delivery_id, NOW - timedelta(days=days_ago), bounce)


@pytest.mark.parametrize(
    ("history", "in_a_row"),
    [
        ([sent(1, 60, SOFT), sent(2, 30, SOFT)], 2),
        ([sent(1, 60, SOFT), sent(2, 30, SOFT), sent(3, 0, SOFT)], 3),  # three emails
        ([sent(1, 2, SOFT), sent(1, 1, SOFT), sent(1, 0, SOFT)], 1),  # "delayed" reports, one email
        ([sent(1, 90, SOFT), sent(2, 60, SOFT), sent(3, 30), sent(4, 0, SOFT)], 1),  # 3 delivered
        ([sent(1, 30, SOFT), sent(2, 0, HARD), sent(3, 0, bounces.COMPLAINT)], 1),  # no soft bounces
        ([sent(1, 60, SOFT), sent(2, 30, SOFT), sent(3, 2.99), sent(4, 0, SOFT)], 3),  # 3 may still bounce
        ([sent(1, 60, SOFT), sent(2, 30, SOFT), sent(3, 3), sent(4, 0, SOFT)], 1),  # 3 days without one: delivered
    ],
)
def test_soft_bounces_count_once_per_email_since_the_last_one_delivered(history, in_a_row):
    assert bounces.soft_bounces_in_a_row(history, NOW) == in_a_row
    assert bounces.SOFT_BOUNCES_TO_BOUNCED == 3


@pytest.mark.parametrize(
    ("sent", "hard", "complaints", "rates", "reason"),
    [
        (99, 50, 0, {}, None),  # too few to judge
        (100, 5, 0, {}, None),  # 5 %: not past it
        (100, 6, 0, {}, "hard bounces at 6.0 % of 100 emails sent, above 5 %"),
        (1000, 0, 3, {}, None),
        (1000, 0, 4, {}, "complaints at 0.40 % of 1000 emails sent, above 0.3 %"),
        (0, 0, 0, {}, None),
        (300, 0, 2, {}, None),  # 0.67 %: one reader's report, or one forged, stops no release; the third does
        (300, 0, 3, {}, "complaints at 1.00 % of 300 emails sent, above 0.3 %"),
        (2, 0, 2, {}, None),  # 100 %, but two readers
        (200, 6, 0, {"bounce_rate": 2.0}, "hard bounces at 3.0 % of 200 emails sent, above 2 %"),
        (200, 0, 3, {"complaint_rate": 2.0}, None),  # 1.5 %, under the setting
    ],
)
def test_a_campaign_pauses_past_its_thresholds_once_enough_emails_went_out(sent, hard, complaints, rates, reason):
    assert bounces.pause_reason(sent, hard, complaints, **rates) == reason


@pytest.mark.parametrize(
    ("current", "imported", "expected"),
    [
        (None, ListStatus.CONFIRMED, ListStatus.CONFIRMED),
        (None, ListStatus.BOUNCED, ListStatus.BOUNCED),
        (ListStatus.BOUNCED, ListStatus.CONFIRMED, None),  # never brought back by a file
        (ListStatus.BOUNCED, ListStatus.PENDING, None),
        (ListStatus.UNSUBSCRIBED, ListStatus.CONFIRMED, None),  # complained or left
        (ListStatus.CONFIRMED, ListStatus.BOUNCED, ListStatus.BOUNCED),  # a file may say it bounced elsewhere
        (ListStatus.CONFIRMED, ListStatus.PENDING, None),
        (ListStatus.PENDING, ListStatus.CONFIRMED, ListStatus.CONFIRMED),
        (ListStatus.CONFIRMED, ListStatus.CONFIRMED, None),
    ],
)
def test_the_import_never_brings_back_an_address_that_left_complained_or_bounced(current, imported, expected):
    [row] = read_import(f"email,name,status\na@example.com,A,{imported}\n")
    assert import_step(current, row.status) == expected


def test_refusals_in_a_streak_become_bounces_only_once_a_success_shows_the_server_takes_mail():
    streak = FailureStreak(limit=3)
    hard = Report(HARD, "550 5.1.1", "sending", delivery_id=1)
    assert not streak.failure(1, hard)
    assert streak.success() == [hard]  # believed: the server took the next email
    assert not streak.failure(2, Report(HARD, "550", "sending", delivery_id=2))
    assert not streak.failure(3, Report(HARD, "550", "sending", delivery_id=3))
    assert streak.failure(4)  # the campaign pauses: a server refusing everyone
    streak.forget()
    assert streak.success() == []  # nobody is bounced for the server's refusals
