"""Contact form security question and anti-spam rules (docs/product.md, Forms and Constants), clocks and
randomness injected; spec messages written out, so a reworded message fails."""

from __future__ import annotations

import random
import re

import pytest

from publisher.config import settings
from publisher.rules import antispam

QUESTION_TEXT = re.compile(r"What is (\d+) ([+-]) (\d+)\?")
TRY_AGAIN = "Please try again."
TOO_FAST = "Please take your time to fill out the form completely."
WRONG_MATH = "Incorrect answer to the math question. Please try again."
REQUIRED = "Please answer the math question"
INCORRECT = "Incorrect answer"


def draw_many(seed: int = 20240501, count: int = 5000) -> list[antispam.MathQuestion]:
    rng = random.Random(seed)
    return [antispam.new_question(rng) for _ in range(count)]


def test_minimum_fill_time_is_5000_ms_and_a_lowered_one_moves_only_the_bound():
    assert antispam.MIN_FILL_TIME_MS == 5000 == settings.from_environ({}).min_fill_time_ms
    assert antispam.rejection_before_answer(honeypot="", shown_at_ms=0, now_ms=4999) == TOO_FAST
    assert antispam.rejection_before_answer(honeypot="", shown_at_ms=0, now_ms=5000) is None
    assert antispam.rejection_before_answer(honeypot="", shown_at_ms=0, now_ms=1499, min_fill_ms=1500) == TOO_FAST
    assert antispam.rejection_before_answer(honeypot="", shown_at_ms=0, now_ms=1500, min_fill_ms=1500) is None
    assert settings.from_environ({"PUBLISHER_MIN_FILL_TIME_MS": "1500"}).min_fill_time_ms == 1500
    with pytest.raises(settings.ConfigurationError, match="PUBLISHER_MIN_FILL_TIME_MS must be a whole number"):
        settings.from_environ({"PUBLISHER_MIN_FILL_TIME_MS": "0"})


def test_questions_draw_operands_1_to_10_both_operators_and_never_a_negative_result():
    assert (antispam.OPERAND_MIN, antispam.OPERAND_MAX) == (1, 10)
    questions = draw_many()
    assert {q.left for q in questions} == {q.right for q in questions} == set(range(1, 11))
    operators = [q.operator for q in questions]
    assert set(operators) == {"+", "-"} and 2000 < operators.count("+") < 3000  # a fair choice
    assert all(q.left >= q.right for q in questions if q.operator == "-")
    additions = [q for q in questions if q.operator == "+"]
    assert any(q.left < q.right for q in additions) and any(q.left > q.right for q in additions)
    assert {q.answer for q in questions} == set(range(21))
    for q in questions:
        assert q.answer == (q.left + q.right if q.operator == "+" else q.left - q.right)
        match = QUESTION_TEXT.fullmatch(q.text)
        assert match and (int(match.group(1)), match.group(2), int(match.group(3))) == (q.left, q.operator, q.right)


def test_a_seed_gives_the_same_questions_and_without_one_they_are_random():
    assert draw_many(seed=7, count=50) == draw_many(seed=7, count=50)
    assert draw_many(seed=7, count=50) != draw_many(seed=8, count=50)
    questions = [antispam.new_question() for _ in range(300)]
    assert all(QUESTION_TEXT.fullmatch(q.text) and q.answer >= 0 for q in questions)
    assert len({(q.left, q.operator, q.right) for q in questions}) > 1


@pytest.mark.parametrize(
    ("answer", "expected", "error"),
    [
        *[(missing, 7, REQUIRED) for missing in ("", " ", "\t\n", None, 7, ["7"])],
        ("", None, REQUIRED),
        *[(wrong, 7, INCORRECT) for wrong in ("8", "-7", "seven", "7.0", "7 7", "١٢", "1" * 50, "0")],
        *[(typed, None, INCORRECT) for typed in ("7", "0", "seven", "7.0")],  # no question: nothing matches
        *[(right, 7, None) for right in ("7", " 7 ", "\t7\n", "+7", "07")],
        ("0", 0, None),
        ("-0", 0, None),
    ],
)
def test_the_answer_field_s_message(answer, expected, error):
    assert antispam.answer_field_error(answer, expected) == error


SHOWN = 1_000_000.0


def rejection(*, honeypot="", shown_at_ms=SHOWN, now_ms=SHOWN + 60_000, answer="7", expected=7):
    """The checks in the order web/submissions.py runs them (the token is spent in between)."""
    before = antispam.rejection_before_answer(honeypot=honeypot, shown_at_ms=shown_at_ms, now_ms=now_ms)
    return before if before is not None else antispam.answer_rejection(answer, expected)


@pytest.mark.parametrize(
    ("submitted", "refusal"),
    [
        ({}, None),
        ({"answer": "  7 "}, None),
        *[({"honeypot": filled}, TRY_AGAIN) for filled in ("x", " ", "\t", "http://spam.example.com", "0")],
        *[({"honeypot": odd}, TRY_AGAIN) for odd in (None, 0, False, [], ["x"], b"")],
        ({"honeypot": " ", "now_ms": SHOWN + 1, "answer": "99"}, TRY_AGAIN),  # the honeypot first
        ({"honeypot": "bot", "shown_at_ms": None, "expected": None}, TRY_AGAIN),
        ({"shown_at_ms": None, "answer": "99"}, TRY_AGAIN),  # no token of the site's, or an expired one
        *[({"now_ms": SHOWN + elapsed}, TOO_FAST) for elapsed in (0, 1, 100, 4000, 4999, 4999.5, -10_000)],
        ({"now_ms": SHOWN + 4999, "answer": "99"}, TOO_FAST),  # before the math
        ({"now_ms": SHOWN + 5000}, None),
        ({"now_ms": SHOWN + 5000, "answer": "8"}, WRONG_MATH),
        ({"shown_at_ms": 0, "now_ms": 5000}, None),  # zero is a time, not a missing one
        ({"shown_at_ms": 0, "now_ms": 4999}, TOO_FAST),
        *[({"answer": wrong}, WRONG_MATH) for wrong in ("8", "", "  ", None, "seven", "7.0", "-7", 7)],
        *[({"answer": typed, "expected": None}, WRONG_MATH) for typed in ("7", "seven", None)],
    ],
)
def test_a_contact_submit_is_refused_in_the_documented_order(submitted, refusal):
    assert rejection(**submitted) == refusal
