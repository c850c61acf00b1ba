"""The contact form's signed token (publisher/rules/form_tokens.py): pure functions, clocks injected."""

from __future__ import annotations

import pytest

from publisher.rules import form_tokens
from publisher.rules.antispam import MathQuestion

SECRET = "a-secret-of-the-tests-0123456789abcdef012345"
OTHER = "another-secret-0123456789abcdef0123456789ab"
NOW = 1_790_000_000_000.0
QUESTION = MathQuestion(9, "-", 2)


def test_a_token_carries_its_question_and_times_under_the_signature():
    token = form_tokens.issue(SECRET, QUESTION, now_ms=NOW, shown_ms=NOW - 30_000)
    read = form_tokens.read([SECRET], token)
    assert read is not None
    assert (read.question, read.shown_ms, read.issued_ms) == (QUESTION, NOW - 30_000, NOW)
    assert read.question.text == "What is 9 - 2?" and read.question.answer == 7
    assert len(token) < form_tokens.MAX_TOKEN_CHARS


def test_each_token_is_unique_even_for_the_same_question_and_time():
    first, second = (form_tokens.issue(SECRET, QUESTION, now_ms=NOW) for _ in range(2))
    assert first != second
    assert form_tokens.read([SECRET], first).nonce != form_tokens.read([SECRET], second).nonce


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t.replace(".9m2.", ".9m1."),  # another question
        lambda t: t.replace(".9m2.", ".9p2."),  # another operator
        lambda t: "v1." + format(int(t.split(".")[1], 16) - 60_000, "x") + "." + t.split(".", 2)[2],  # earlier
        lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # the signature
        lambda t: t + "x",
        lambda t: t.replace("v1.", "v2.", 1),
        lambda t: "",
        lambda t: None,
        lambda t: 42,
        lambda t: "v1." + "0" * 300,
    ],
)
def test_a_changed_or_foreign_token_reads_as_nothing(change):
    token = form_tokens.issue(SECRET, QUESTION, now_ms=NOW)
    assert form_tokens.read([SECRET], change(token)) is None


def test_several_secrets_the_first_signs_all_are_accepted():
    old = form_tokens.issue(OTHER, QUESTION, now_ms=NOW)
    assert form_tokens.read([SECRET], old) is None
    assert form_tokens.read([SECRET, OTHER], old) is not None


def test_the_next_token_of_a_chain_keeps_the_shown_time_and_the_chains_issue_time():
    first = form_tokens.read([SECRET], form_tokens.issue(SECRET, QUESTION, now_ms=NOW))
    following = form_tokens.follow(SECRET, MathQuestion(4, "+", 4), after=first)
    read = form_tokens.read([SECRET], following)
    assert (read.shown_ms, read.issued_ms, read.question) == (NOW, NOW, MathQuestion(4, "+", 4))
    assert read.nonce != first.nonce  # a token of its own: single use as every token


def test_however_often_a_chain_is_followed_it_ends_with_its_first_tokens_hour():
    token = form_tokens.read([SECRET], form_tokens.issue(SECRET, QUESTION, now_ms=NOW))
    for minutes in range(10, 60, 10):  # a refusal every ten minutes, each answered with the next token
        now = NOW + minutes * 60_000
        token = form_tokens.continues(token, first_use=True, now_ms=now)
        assert token is not None
        token = form_tokens.read([SECRET], form_tokens.follow(SECRET, QUESTION, after=token))
    assert not token.expired(NOW + form_tokens.VALID_FOR_MS - 1)
    assert token.expired(NOW + form_tokens.VALID_FOR_MS)
    assert form_tokens.continues(token, first_use=True, now_ms=NOW + form_tokens.VALID_FOR_MS) is None


@pytest.mark.parametrize(
    ("first_use", "age_ms", "continues"),
    [
        (True, 0, True),
        (True, form_tokens.VALID_FOR_MS - 1, True),
        (True, form_tokens.VALID_FOR_MS, False),  # expired: a new question, shown now
        (False, 10_000, False),  # used before: a new chain, never a second message from one wait
    ],
)
def test_only_a_first_use_within_the_hour_may_be_followed(first_use, age_ms, continues):
    token = form_tokens.read([SECRET], form_tokens.issue(SECRET, QUESTION, now_ms=NOW))
    assert (form_tokens.continues(token, first_use=first_use, now_ms=NOW + age_ms) is token) is continues
    assert form_tokens.continues(None, first_use=True, now_ms=NOW) is None  # none, changed or foreign


def test_a_token_is_good_for_3_600_000_milliseconds_from_when_it_was_issued_not_shown():
    issued = form_tokens.read([SECRET], form_tokens.issue(SECRET, QUESTION, now_ms=NOW, shown_ms=NOW - 7_200_000))
    assert not issued.expired(NOW + 3_600_000 - 1)
    assert issued.expired(NOW + 3_600_000)
    assert not issued.expired(NOW - 3_600_000)  # a clock a little behind the one that issued it
    assert issued.expired(NOW - 3_600_000 - 1)
