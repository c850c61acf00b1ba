"""The bounce rules. A list email's envelope sender names its outbox job by a VERP token signed with the list
secret (a forged bounce names no one else's email), in lower-case hex: some servers fold a local part's case."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

HARD, SOFT, COMPLAINT = "hard", "soft", "complaint"
KINDS = (HARD, SOFT, COMPLAINT)

SOFT_BOUNCES_TO_BOUNCED = 3  # in a row, from different emails
DELIVERED_AFTER = timedelta(days=3)  # without a bounce
PAUSE_MIN_SENT = 100  # emails sent before the bounce rate can pause a campaign
# A campaign pauses on its complaint rate only once this many emails drew one: one reader, or one forged
# report, stops no release, however small the list (1 in 300 is already past 0.3 %).
PAUSE_MIN_COMPLAINTS = 3
DEFAULT_PAUSE_BOUNCE_RATE = 5.0  # % of emails sent (Amazon SES reviews an account above 5 %)
DEFAULT_PAUSE_COMPLAINT_RATE = 0.3  # % (Gmail and Yahoo: never reach 0.3 %)

_MAC_HEX = 20  # 80 bits: no forgery by guessing
_VERP_TOKEN = re.compile(rf"^(?P<job>[0-9a-f]{{1,12}})-(?P<mac>[0-9a-f]{{{_MAC_HEX}}})$")
_STATUS = re.compile(r"^\s*(?P<class>[245])\.(?P<subject>\d{1,3})\.(?P<detail>\d{1,3})\b")


def _mac(secret: str, job: str) -> str:
    return hmac.new(secret.encode(), f"bounce\n{job}".encode(), hashlib.sha256).hexdigest()[:_MAC_HEX]


def verp_token(secret: str, delivery_id: int) -> str:
    job = format(delivery_id, "x")
    return f"{job}-{_mac(secret, job)}"


def verp_address(bounce_address: str, secret: str, delivery_id: int) -> str:
    """``bounces@example.com`` -> ``bounces+<token>@example.com``, the email's Return-Path."""
    local, _, domain = bounce_address.rpartition("@")
    return f"{local}+{verp_token(secret, delivery_id)}@{domain}"


def read_verp(list_secrets: Sequence[str], address: str, bounce_address: str) -> int | None:
    """Any list secret is accepted, so replacing the secret orphans no bounce of an email already sent."""
    local, _, domain = address.strip().strip("<>").lower().rpartition("@")
    base, _, token = local.partition("+")
    match = _VERP_TOKEN.match(token)
    if match is None or f"{base}@{domain}" != bounce_address.lower():
        return None
    if not any(hmac.compare_digest(_mac(secret, match["job"]), match["mac"]) for secret in list_secrets):
        return None
    return int(match["job"], 16)


def kind_of_status(status: str, action: str = "") -> str | None:
    """None when delivered, relayed or expanded; "failed" without a Status (cut off) is final: hard."""
    match = _STATUS.match(status or "")
    action = (action or "").strip().lower()
    if match is None and action == "failed" and not (status or "").strip():
        return HARD
    if match is None:
        return SOFT if action == "delayed" else None
    if match["class"] == "5":
        return HARD
    if match["class"] == "4" or action == "delayed":
        return SOFT
    return None


@dataclass(frozen=True)
class SentEmail:
    delivery_id: int
    sent_at: datetime
    bounce: str | None = None  # HARD, SOFT, COMPLAINT, or None while none came back


def soft_bounces_in_a_row(emails: Iterable[SentEmail], now: datetime) -> int:
    """Soft bounces from different emails since the last one delivered (``DELIVERED_AFTER`` without a
    bounce: one can arrive days later); an email too recent to tell neither counts nor ends the run."""
    soft: set[int] = set()
    for email in sorted(emails, key=lambda item: item.sent_at, reverse=True):
        if email.bounce == SOFT:
            soft.add(email.delivery_id)
        elif email.bounce is None and now - email.sent_at >= DELIVERED_AFTER:
            break
    return len(soft)


def pause_reason(
    sent: int,
    hard_bounces: int,
    complaints: int,
    bounce_rate: float = DEFAULT_PAUSE_BOUNCE_RATE,
    complaint_rate: float = DEFAULT_PAUSE_COMPLAINT_RATE,
) -> str | None:
    if sent <= 0:
        return None
    hard_pct = 100 * hard_bounces / sent
    complaint_pct = 100 * complaints / sent
    if sent >= PAUSE_MIN_SENT and hard_pct > bounce_rate:
        return f"hard bounces at {hard_pct:.1f} % of {sent} emails sent, above {bounce_rate:g} %"
    if complaints >= PAUSE_MIN_COMPLAINTS and complaint_pct > complaint_rate:
        return f"complaints at {complaint_pct:.2f} % of {sent} emails sent, above {complaint_rate:g} %"
    return None
