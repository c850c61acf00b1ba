"""The bounce mailbox's classifier on emails as real servers write them, and what proves a report names
an email of ours."""

from __future__ import annotations

import email
import re
import time

import pytest
from flufl.bounce import all_failures

from publisher.returns import bounce_mailbox
from publisher.rules import bounces
from publisher.rules.bounces import COMPLAINT, HARD, SOFT
from publisher.rules.reports import (
    AUTO_REPLY,
    BOUNCE,
    COMPLAINT_REPORT,
    REASON_MAX,
    SUBJECT_MAX,
    ClassifiedMessage,
    classify,
)
from publisher.storage import bounce_records
from tests.samples import BOUNCES, bounce_sample
from tests.unit.test_mailer import settings_for

SECRET = "a-list-secret-0123456789abcdef0123456789"
BOUNCE_ADDRESS = "bounces@example.com"
JOB = 0x1A
VERP = bounces.verp_address(BOUNCE_ADDRESS, SECRET, JOB)
READER = "reader@example.org"
MESSAGE_ID = "<177314404512.3141.5926535@example.com>"

PANGOLIN = "New release: The Pangolin Who Thought It Was an Artichoke"
ORIGINAL = (MESSAGE_ID, VERP, (READER,))
QMAIL_REASON = "Sorry, no mailbox here by that name. (#5.1.1)"
EXIM_REASON = (
    "host mx.example.org [192.0.2.25] SMTP error from remote mail server after RCPT TO:<reader@example.org>: "
    "550 5.1.1 User unknown"
)
ARF_REASON = "complaint (Feedback-Type: abuse) from Feedback-Loop/2.0"
POSTFIX_REASON = (
    "5.1.1 smtp; 550 5.1.1 <reader@example.org>: Recipient address rejected: User unknown in virtual mailbox table"
)
GMAIL_REASON = (
    "4.2.2 smtp; 452 4.2.2 The recipient's inbox is out of storage space. Please direct the "
    "recipient to https://support.example.net/mail/?p=OverQuotaTemp"
)
# Each sample: its kind, its one failure (address, kind, reason) or None, what names the original
# (Message-ID, Return-Path, To), and its subject.
SAMPLES = {
    "dsn-postfix-hard": (BOUNCE, (READER, HARD, POSTFIX_REASON), ORIGINAL, "Undelivered Mail Returned to Sender"),
    "dsn-gmail-soft": (BOUNCE, (READER, SOFT, GMAIL_REASON), ORIGINAL, "Delivery Status Notification (Delay)"),
    "qmail-hard": (BOUNCE, (READER, HARD, QMAIL_REASON), ORIGINAL, "failure notice"),
    "exim-hard": (BOUNCE, (READER, HARD, EXIM_REASON), ORIGINAL, "Mail delivery failed: returning message to sender"),
    "arf-complaint": (COMPLAINT_REPORT, (READER, COMPLAINT, ARF_REASON), ORIGINAL, f"FW: {PANGOLIN}"),
    "arf-redacted": (COMPLAINT_REPORT, None, (MESSAGE_ID, VERP, ()), "complaint about message from 192.0.2.10"),
    "auto-reply": (AUTO_REPLY, None, (MESSAGE_ID, None, ()), f"Out of office: {PANGOLIN}"),
    "auto-reply-outlook": (AUTO_REPLY, None, (MESSAGE_ID, None, ()), f"Automatic reply: {PANGOLIN}"),
    "stranger": (None, None, (None, None, ()), f"Re: {PANGOLIN}"),
    "not-spam-arf": (None, None, ORIGINAL, f"Not spam: {PANGOLIN}"),
}


def sample(name: str, **values: str) -> bytes:
    """A sample addressed to this module's VERP address, reader and Message-ID, unless told otherwise."""
    filled = {"verp": VERP, "reader": READER, "message_id": MESSAGE_ID} | values
    return bounce_sample(name, **filled)


def only_failure(report: ClassifiedMessage):
    assert len(report.failures) == 1, report.failures
    return report.failures[0]


def test_every_sample_file_has_an_expected_kind():
    assert sorted(path.stem for path in BOUNCES.glob("*.eml")) == sorted(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_sample_is_classified_with_its_failure_its_original_and_the_verp_address_it_came_back_to(name):
    kind, failure, original, subject = SAMPLES[name]
    report = classify(sample(name))
    assert (report.kind, report.envelope_to, report.subject) == (kind, (VERP,), subject)
    assert [(item.address, item.kind, item.reason) for item in report.failures] == ([failure] if failure else [])
    assert (report.original_message_id, report.original_return_path, report.original_to) == original
    if name in ("dsn-postfix-hard", "exim-hard"):  # still bounces, though marked as auto-replies
        assert re.search(rb"^Auto-Submitted: auto-replied", sample(name), re.MULTILINE | re.IGNORECASE)


def test_the_reader_and_message_id_are_read_whatever_their_case_and_brackets():
    report = classify(sample("dsn-postfix-hard", reader="Robin.Reader@Example.ORG", message_id="AbC.123@example.com"))
    assert only_failure(report).address == "robin.reader@example.org"
    assert report.original_message_id == "<AbC.123@example.com>"


def dsn(recipients: str, to: str = VERP, newline: str = "\n") -> bytes:
    text = (
        f"From: MAILER-DAEMON@mx.example.org (Mail Delivery System)\nTo: {to}\n"
        "Subject: Delivery Status Notification\nAuto-Submitted: auto-replied\nMIME-Version: 1.0\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\n\n'
        "--B\nContent-Type: text/plain\n\nThe mail system\n\n"
        "--B\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.org\n\n"
        f"{recipients}\n\n--B\nContent-Type: text/rfc822-headers\n\n"
        f"Return-Path: <{VERP}>\nTo: {READER}, friend@example.net\nMessage-ID: {MESSAGE_ID}\n\n--B--\n"
    )
    return text.replace("\n", newline).encode()


def test_only_the_recipients_that_failed_are_failures():
    report = classify(
        dsn(
            f"Final-Recipient: rfc822; {READER}\nAction: delivered\nStatus: 2.0.0\n\n"
            "Final-Recipient: rfc822; relayed@example.net\nAction: relayed\nStatus: 2.0.0\n\n"
            "Final-Recipient: rfc822; expanded@example.net\nAction: expanded\nStatus: 2.0.0\n\n"
            "Original-Recipient: rfc822; friend@example.net\nAction: failed\nStatus: 5.2.1\n"
            "Diagnostic-Code: smtp; 550 5.2.1 The email account that you tried to reach is disabled"
        )
    )
    assert report.kind == BOUNCE
    failure = only_failure(report)
    assert (failure.address, failure.kind) == ("friend@example.net", HARD)
    assert "5.2.1" in failure.reason and "account that you tried to reach is disabled" in failure.reason
    assert report.original_to == (READER, "friend@example.net")
    all_delivered = classify(dsn(f"Final-Recipient: rfc822; {READER}\nAction: delivered\nStatus: 2.0.0"))
    assert (all_delivered.kind, all_delivered.failures, all_delivered.original_message_id) == (BOUNCE, (), MESSAGE_ID)


POSTFIX_PLAIN = (
    f"From: MAILER-DAEMON@mx.example.org (Mail Delivery System)\nTo: {VERP}\n"
    f"Subject: Undelivered Mail Returned to Sender\nX-Failed-Recipients: {READER}\n\n"
    "This is the mail system at host mx.example.org.\n\n"
    f"<{READER}>: host mailbox.example.org[192.0.2.30] said: 550 5.1.1\n"
    f"    <{READER}>: Recipient address rejected: User unknown (in reply to RCPT TO\n"
    "    command)\n\n"
)


ONE_FAILURE = {
    "dsn-gave-up": (  # gave up after temporary failures: soft, its folded diagnostic on one line
        dsn(
            f"Final-Recipient: rfc822; {READER}\nAction: failed\nStatus: 4.4.7\n"
            "Diagnostic-Code: X-Postfix; delivery temporarily suspended: connect to\n"
            "    mx.example.org[192.0.2.25]:25: Connection timed out"
        ),
        (
            READER,
            SOFT,
            "4.4.7 X-Postfix; delivery temporarily suspended: connect to mx.example.org[192.0.2.25]:25: "
            "Connection timed out",
        ),
    ),
    "dsn-international": (  # internationalized (RFC 6533)
        dsn(
            "Final-Recipient: utf-8; léa@example.org\nAction: failed\nStatus: 5.1.1\n"
            "Diagnostic-Code: smtp; 550 5.1.1 No such user"
        ).replace(b"message/delivery-status", b"message/global-delivery-status"),
        ("léa@example.org", HARD, "5.1.1 smtp; 550 5.1.1 No such user"),
    ),
    "dsn-no-message-block": (  # without its per-message block
        dsn(f"Final-Recipient: rfc822; {READER}\nAction: failed\nStatus: 5.1.1").replace(
            b"Reporting-MTA: dns; mx.example.org\n\n", b""
        ),
        (READER, HARD, "5.1.1 failed"),
    ),
    "exim-without-x-failed-recipients": (
        sample("exim-hard").replace(f"X-Failed-Recipients: {READER}\n".encode(), b""),
        (READER, HARD, EXIM_REASON),
    ),
    "postfix-plain": (  # the line after the address and its indented continuation
        POSTFIX_PLAIN.encode(),
        (
            READER,
            HARD,
            "host mailbox.example.org[192.0.2.30] said: 550 5.1.1 <reader@example.org>: "
            "Recipient address rejected: User unknown (in reply to RCPT TO command)",
        ),
    ),
    "reason-not-found": (
        f"From: Mailer-Daemon@mx.example.net\nTo: {VERP}\nX-Failed-Recipients: {READER}\n\nNo.\n".encode(),
        (READER, HARD, "permanent failure reported by the receiving server"),
    ),
    "qmail-quote": (sample("qmail-hard", reader="o'brien@example.org"), ("o'brien@example.org", HARD, QMAIL_REASON)),
    "qmail-dots-and-plus": (
        sample("qmail-hard", reader="first.last+list@example.org"),
        ("first.last+list@example.org", HARD, QMAIL_REASON),
    ),
    "arf-without-original-rcpt-to": (  # the original's To names the reader
        sample("arf-complaint").replace(f"Original-Rcpt-To: {READER}\n".encode(), b""),
        (READER, COMPLAINT, ARF_REASON),
    ),
}


@pytest.mark.parametrize(("raw", "failure"), ONE_FAILURE.values(), ids=ONE_FAILURE)
def test_a_reports_one_failure_is_the_reader_the_kind_and_the_servers_words(raw, failure):
    assert [(item.address, item.kind, item.reason) for item in classify(raw).failures] == [failure]


def test_a_truncated_report_gives_what_it_still_holds():
    raw = sample("dsn-postfix-hard")
    before_original = raw[: raw.index(b"Content-Description: Undelivered Message Headers")]
    report = classify(before_original)
    assert report.kind == BOUNCE
    assert only_failure(report).kind == HARD
    assert report.original_message_id is None

    # Cut after the Action, before the (mandatory) Status: RFC 3464's "failed" is final.
    after_action = raw[: raw.index(b"Action: failed\n") + len(b"Action: failed\n")]
    assert only_failure(classify(after_action)).kind == HARD

    # Cut before the status part: still a report, with nothing to act on.
    before_status = raw[: raw.index(b"Content-Description: Delivery report")]
    report = classify(before_status)
    assert (report.kind, report.failures) == (BOUNCE, ())
    assert VERP in report.envelope_to

    # A redacted feedback report cut before its original: known by its own fields.
    redacted = sample("arf-redacted")
    report = classify(redacted[: redacted.index(b"Content-Type: message/rfc822")])
    assert (report.kind, report.original_return_path, report.original_message_id) == (COMPLAINT_REPORT, VERP, None)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_truncation_of_a_sample_is_classified_without_raising(name):
    raw = sample(name)
    for cut in range(0, len(raw), 23):
        report = classify(raw[:cut])
        assert report.kind in (SAMPLES[name][0], None), (cut, report)
        for failure in report.failures:
            assert failure.kind in (HARD, SOFT, COMPLAINT)
            assert "@" in failure.address and len(failure.reason) <= REASON_MAX


@pytest.mark.parametrize(
    "raw",
    [
        b"\x00\xff\xfe garbage \x80\x81" * 50,
        bytes(range(256)) * 4,
        b"not an email at all",
        b"Content-Type: multipart/report; report-type=delivery-status; boundary=x\n\n--x\n",
        b"Content-Type: message/delivery-status\n\n\xff\xfe",
        b"Content-Type: multipart/report; report-type=feedback-report; boundary=x\n\n--x\n"
        b"Content-Type: message/feedback-report\n\n",
        b"Subject: =?utf-8?b?////?= \xff\nFrom: <<<@@@>>>\nTo: ,,,;;;\n\nHi. This is the\n\n<\xff@\xfe>:\n",
        b"From:\nTo:\nSubject:\nMessage-ID:\nContent-Type:\n\n",
    ],
)
def test_garbage_is_unclassified_or_an_empty_report_never_an_exception(raw):
    report = classify(raw)
    assert report.failures == ()
    assert report.kind in (None, BOUNCE)
    report.subject.encode("utf-8")  # no lone surrogates from undecodable bytes


def test_an_empty_message_is_unclassified():
    assert classify(b"") == ClassifiedMessage(kind=None)


def test_a_deeply_nested_email_does_not_exhaust_the_stack():
    depth = 5000
    parts = "".join(f'Content-Type: multipart/mixed; boundary="b{i}"\n\n--b{i}\n' for i in range(depth))
    raw = f"From: someone@example.net\nSubject: nested\nMIME-Version: 1.0\n{parts}\nhello\n".encode()
    assert classify(raw).kind is None


def test_a_reason_and_a_subject_are_one_short_line():
    long_diagnostic = "smtp; 550 5.7.1 " + "blocked by policy " * 40
    raw = dsn(
        f"Final-Recipient: rfc822; {READER}\nAction: failed\nStatus: 5.7.1\nDiagnostic-Code: {long_diagnostic}"
    ).replace(b"Subject: Delivery Status Notification", b"Subject: " + b"Undelivered\n " * 60 + b"end")
    report = classify(raw)
    reason = only_failure(report).reason
    assert len(reason) <= REASON_MAX and "\n" not in reason and reason.startswith("5.7.1 smtp; 550 5.7.1 blocked")
    assert len(report.subject) <= SUBJECT_MAX and "\n" not in report.subject


@pytest.mark.parametrize(
    ("feedback_type", "kind"),
    [
        *[(complaint, COMPLAINT_REPORT) for complaint in ("abuse", "fraud", "virus", "other", "Abuse", None)],
        ("not-spam", None),
        ("auth-failure", None),  # a DMARC failure report (RFC 6591), no reader complained
    ],
)
def test_which_feedback_types_are_complaints(feedback_type, kind):
    replacement = b"" if feedback_type is None else f"Feedback-Type: {feedback_type}\n".encode()
    raw = sample("arf-complaint").replace(b"Feedback-Type: abuse\n", replacement)
    report = classify(raw)
    assert report.kind == kind
    assert bool(report.failures) == (kind == COMPLAINT_REPORT)


def test_an_auto_reply_is_never_a_bounce_even_when_it_quotes_a_failure():
    raw = sample("auto-reply") + (
        b"\nPS: my last reply to you failed, the server said:\n\n"
        b"Delivery to the following recipient failed permanently:\n\n     friend@example.net\n\n"
        b"----- Original message -----\n"
    )
    assert all_failures(email.message_from_bytes(raw)) != (frozenset(), frozenset())  # flufl.bounce sees one
    report = classify(raw)
    assert (report.kind, report.failures) == (AUTO_REPLY, ())


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("Auto-Submitted: auto-generated", AUTO_REPLY),
        ("Auto-Submitted: auto-replied (vacation)", AUTO_REPLY),
        ("Auto-Submitted: auto-notified; owner-email=reader@example.org", AUTO_REPLY),
        ("X-Autoreply: yes", AUTO_REPLY),
        ("X-Autorespond: Robin is away", AUTO_REPLY),
        ("Precedence: auto_reply", AUTO_REPLY),
        ("Subject: Auto: New release", AUTO_REPLY),
        ("Subject: AutoReply: New release", AUTO_REPLY),
        ("Subject: Out of Office: New release", AUTO_REPLY),
        ("Subject: Vacation reply", AUTO_REPLY),
        ("Auto-Submitted: no", None),
        ("X-Auto-Response-Suppress: All", None),  # on many an ordinary Outlook email
        ("Precedence: bulk", None),
        ("Subject: Re: I got an automatic reply from you", None),
        # A mail server's email that no detector reads: no auto-reply, left for a person.
        ("From: Mail Delivery System <MAILER-DAEMON@mx.example.net>\nAuto-Submitted: auto-replied", None),
    ],
)
def test_what_marks_an_auto_reply_and_what_does_not(header, kind):
    raw = f"{header}\nFrom: Robin <{READER}>\nTo: {VERP}\n\nHi, I am away. When is the next book?\n".encode()
    assert classify(raw).kind == kind


def qmail_bounce_naming(count: int, to: str = VERP) -> bytes:
    """A qmail-style bounce to ``to`` with a paragraph per failed address, ``count`` of them (issue 34:
    16,000 took 94 s of CPU, 50,000 held the site's worker for 11 minutes)."""
    paragraphs = b"".join(
        b"<reader%05d.on.the.new-release.list@readers.example>:\nSorry, no mailbox here by that name. (#5.1.1)\n\n" % n
        for n in range(count)
    )
    head, _, tail = sample("qmail-hard", verp=to).partition(f"<{READER}>:\n".encode())
    return head + paragraphs + tail.partition(b"\n\n")[2]


def dsn_naming(count: int, to: str = VERP, newline: str = "\n") -> bytes:
    """Naming reader0@readers.example to reader{count - 1}, each failed for good."""
    blocks = "\n\n".join(
        f"Final-Recipient: rfc822; reader{n}@readers.example\nAction: failed\nStatus: 5.1.1\n"
        "Diagnostic-Code: smtp; 550 5.1.1 no such user"
        for n in range(count)
    )
    return dsn(blocks, to, newline)


# Ten times the recipients may cost at most this many times the CPU time: linear, with room for
# noise (a pass per recipient, as issue 34 had it, costs a hundred times).
SCALING_BOUND = 20


def cpu_seconds_to_classify(raw: bytes):
    started = time.process_time()
    report = classify(raw)
    return time.process_time() - started, report


@pytest.mark.parametrize("make", [qmail_bounce_naming, dsn_naming], ids=["qmail", "dsn"])
def test_a_5_mb_report_naming_50000_recipients_is_read_in_one_pass_and_only_its_first_100(make):
    raw = make(50_000)
    assert len(raw) > 5_000_000
    tenth, _ = cpu_seconds_to_classify(make(5_000))
    elapsed, report = cpu_seconds_to_classify(raw)
    assert report.kind == BOUNCE
    assert (len(report.failures), report.recipients_named) == (100, 50_000)
    assert report.failures[0].kind == HARD and "5.1.1" in report.failures[0].reason
    # The growth is the point (94 s for 16,000 before), as a ratio of CPU times measured side by
    # side, so neither a loaded machine nor a slower one decides it.
    assert elapsed < SCALING_BOUND * tenth, (elapsed, tenth)


def test_the_reason_of_each_of_many_addresses_is_the_one_written_under_it():
    third = b"<reader00002.on.the.new-release.list@readers.example>:\n"
    raw = qmail_bounce_naming(3).replace(third + QMAIL_REASON.encode(), third + b"Mailbox full (#4.2.2)")
    reasons = {failure.address[:11]: failure.reason for failure in classify(raw).failures}
    assert reasons == {"reader00000": QMAIL_REASON, "reader00001": QMAIL_REASON, "reader00002": "Mailbox full (#4.2.2)"}


FEEDBACK_ADDRESS = "fbl-reports@animals.example"  # where a provider's feedback loop delivers
UNKNOWN_MESSAGE_ID = "<never-sent-by-us.1@example.com>"
MAIL = settings_for("smtp://127.0.0.1:2525", PUBLISHER_BOUNCE_ADDRESS=BOUNCE_ADDRESS, PUBLISHER_LIST_SECRET=SECRET)


def to_the_feedback_address(name: str, return_path: str) -> bytes:
    """A feedback report delivered to FEEDBACK_ADDRESS about an original whose Return-Path was ``return_path``
    and whose Message-ID we never sent: only our VERP address there can prove it names an email of ours."""
    raw = sample(name, verp=FEEDBACK_ADDRESS, message_id=UNKNOWN_MESSAGE_ID)
    original = f"Return-Path: <{FEEDBACK_ADDRESS}>".encode()
    assert raw.count(original) == 1
    return raw.replace(original, f"Return-Path: <{return_path}>".encode())


@pytest.fixture
def message_ids_asked(monkeypatch) -> list[str]:
    """The Message-ID fallback finds nothing: the database knows no such email."""
    asked: list[str] = []
    monkeypatch.setattr(bounce_records, "delivery_by_message_id", lambda message_id, *_: asked.append(message_id))
    return asked


FORGED = bounces.verp_address(BOUNCE_ADDRESS, "a-secret-that-is-not-ours-0123456789abcdef", JOB)


@pytest.mark.parametrize(
    ("name", "return_path", "proven"),
    [
        ("arf-complaint", VERP, True),
        ("arf-redacted", VERP, True),
        ("arf-complaint", BOUNCE_ADDRESS, False),
        ("arf-complaint", FORGED, False),
    ],
)
def test_a_complaint_is_proven_by_our_verp_address_in_the_originals_return_path_alone(
    name, return_path, proven, message_ids_asked
):
    report = classify(to_the_feedback_address(name, return_path))
    assert report.kind == COMPLAINT_REPORT
    assert VERP not in report.envelope_to and FEEDBACK_ADDRESS in report.envelope_to
    assert report.original_message_id == UNKNOWN_MESSAGE_ID
    found = bounce_mailbox.reports_in(report, MAIL)
    assert [(item.kind, item.delivery_id) for item in found] == ([(COMPLAINT, JOB)] if proven else [])
    assert message_ids_asked == ([] if proven else [UNKNOWN_MESSAGE_ID])  # with ours, the VERP address decides
