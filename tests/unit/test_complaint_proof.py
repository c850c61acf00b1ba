"""A complaint sent to a provider's feedback address, its Message-ID unknown: the only proof it names an
email of ours is our VERP address in the original's Return-Path (bounce_mailbox.reports_in)."""

from __future__ import annotations

import pytest

from publisher.returns import bounce_mailbox
from publisher.rules import bounces, reports
from publisher.storage import bounce_records
from tests.samples import bounce_sample
from tests.smtp import LIST_SECRET
from tests.unit.test_mailer import settings_for

BOUNCE_ADDRESS = "bounces@animals.example"
FEEDBACK_ADDRESS = "fbl-reports@animals.example"  # where a provider's feedback loop delivers
DELIVERY = 0x2B
VERP = bounces.verp_address(BOUNCE_ADDRESS, LIST_SECRET, DELIVERY)
READER = "reader@example.org"
UNKNOWN_MESSAGE_ID = "<never-sent-by-us.1@example.com>"
MAIL = settings_for("smtp://127.0.0.1:2525", PUBLISHER_BOUNCE_ADDRESS=BOUNCE_ADDRESS)


def to_the_feedback_address(name: str, return_path: str) -> bytes:
    """A feedback report delivered to FEEDBACK_ADDRESS, about an original whose Return-Path was
    ``return_path`` and whose Message-ID we never sent."""
    raw = bounce_sample(name, verp=FEEDBACK_ADDRESS, reader=READER, message_id=UNKNOWN_MESSAGE_ID)
    original = f"Return-Path: <{FEEDBACK_ADDRESS}>".encode()
    assert raw.count(original) == 1
    return raw.replace(original, f"Return-Path: <{return_path}>".encode())


@pytest.fixture
def message_ids_asked(monkeypatch) -> list[str]:
    """The Message-ID fallback finds nothing: the database knows no such email."""
    asked: list[str] = []

    def delivery_by_message_id(message_id, named, db_url=None):
        asked.append(message_id)
        return None

    monkeypatch.setattr(bounce_records, "delivery_by_message_id", delivery_by_message_id)
    return asked


@pytest.mark.parametrize("name", ["arf-complaint", "arf-redacted"])
def test_a_complaint_is_proven_by_the_verp_address_in_the_originals_return_path_alone(name, message_ids_asked):
    assert MAIL is not None
    report = reports.classify(to_the_feedback_address(name, VERP))
    assert report.kind == reports.COMPLAINT_REPORT
    assert VERP not in report.envelope_to and FEEDBACK_ADDRESS in report.envelope_to
    assert report.original_message_id == UNKNOWN_MESSAGE_ID
    [proven] = bounce_mailbox.reports_in(report, MAIL)
    assert (proven.kind, proven.delivery_id) == (bounces.COMPLAINT, DELIVERY)
    assert message_ids_asked == []  # the VERP address decided, not the Message-ID


def test_without_our_verp_address_in_the_return_path_the_same_complaint_proves_nothing(message_ids_asked):
    forged = bounces.verp_address(BOUNCE_ADDRESS, "a-secret-that-is-not-ours-0123456789abcdef", DELIVERY)
    for return_path in (BOUNCE_ADDRESS, forged):
        report = reports.classify(to_the_feedback_address("arf-complaint", return_path))
        assert report.kind == reports.COMPLAINT_REPORT
        assert bounce_mailbox.reports_in(report, MAIL) == []
    assert message_ids_asked == [UNKNOWN_MESSAGE_ID, UNKNOWN_MESSAGE_ID]
