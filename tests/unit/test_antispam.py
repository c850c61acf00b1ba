"""Contact form security question and anti-spam rules (docs/product.md, Forms and Constants).

Clocks and randomness are injected: no sleeping, no guessing. Spec messages are
literals here on purpose, so a reworded message fails.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from publisher.config import settings
from publisher.rules import antispam
from publisher.rules.antispam import (
    MathQuestion,
    answer_field_error,
    answer_rejection,
    new_question,
    rejection_before_answer,
)

QUESTION_TEXT = re.compile(r"What is (\d+) ([+-]) (\d+)\?")
DRAWS = 5000


def draw_many(seed: int = 20240501, count: int = DRAWS) -> list[MathQuestion]:
    rng = random.Random(seed)
    return [new_question(rng) for _ in range(count)]


# --------------------------------------------------------------------------- constants (docs/product.md, Constants)


def test_minimum_fill_time_is_5000_ms():
    assert antispam.MIN_FILL_TIME_MS == 5000
    assert rejection_before_answer(honeypot="", shown_at_ms=0, now_ms=4999) == antispam.TOO_FAST_REJECTED
    assert rejection_before_answer(honeypot="", shown_at_ms=0, now_ms=5000) is None


def test_a_lowered_minimum_fill_time_is_the_one_applied():
    """PUBLISHER_MIN_FILL_TIME_MS (a test server's) moves the bound, and only the bound."""
    assert rejection_before_answer(honeypot="", shown_at_ms=0, now_ms=1499, min_fill_ms=1500)
    assert rejection_before_answer(honeypot="", shown_at_ms=0, now_ms=1500, min_fill_ms=1500) is None
    assert settings.from_environ({}).min_fill_time_ms == 5000
    assert settings.from_environ({"PUBLISHER_MIN_FILL_TIME_MS": "1500"}).min_fill_time_ms == 1500
    with pytest.raises(settings.ConfigurationError, match="PUBLISHER_MIN_FILL_TIME_MS must be a whole number"):
        settings.from_environ({"PUBLISHER_MIN_FILL_TIME_MS": "0"})


def test_operand_range_is_1_to_10():
    assert (antispam.OPERAND_MIN, antispam.OPERAND_MAX) == (1, 10)


# --------------------------------------------------------------------------- new_question


def test_operands_always_between_1_and_10():
    for question in draw_many():
        assert 1 <= question.left <= 10
        assert 1 <= question.right <= 10
        assert type(question.left) is int and type(question.right) is int


def test_both_operators_appear_and_no_other():
    operators = [question.operator for question in draw_many()]
    assert set(operators) == {"+", "-"}
    # Roughly balanced: a fair choice gives ~2500 each out of 5000.
    assert 2000 < operators.count("+") < 3000


def test_subtraction_is_never_negative():
    subtractions = [q for q in draw_many() if q.operator == "-"]
    assert subtractions
    for question in subtractions:
        assert question.left >= question.right
        assert question.answer >= 0


def test_answer_is_computed_correctly():
    for question in draw_many():
        expected = question.left + question.right if question.operator == "+" else question.left - question.right
        assert question.answer == expected


def test_answers_fall_in_expected_range():
    answers = {q.answer for q in draw_many()}
    assert min(answers) == 0
    assert max(answers) == 20
    assert all(0 <= a <= 20 for a in answers)


def test_every_operand_value_appears_on_both_sides():
    questions = draw_many()
    assert {q.left for q in questions} == set(range(1, 11))
    assert {q.right for q in questions} == set(range(1, 11))


def test_both_operand_orders_appear_for_addition():
    additions = [q for q in draw_many() if q.operator == "+"]
    assert any(q.left < q.right for q in additions)
    assert any(q.left > q.right for q in additions)


def test_question_text_has_exact_spec_shape():
    for question in draw_many():
        match = QUESTION_TEXT.fullmatch(question.text)
        assert match is not None, question.text
        assert (int(match.group(1)), match.group(2), int(match.group(3))) == (
            question.left,
            question.operator,
            question.right,
        )
        assert question.text.startswith(f"What is {question.left} {question.operator} {question.right}")


def test_question_text_examples():
    assert MathQuestion(3, "+", 4).text == "What is 3 + 4?"
    assert MathQuestion(9, "-", 2).text == "What is 9 - 2?"
    assert MathQuestion(10, "-", 10).text == "What is 10 - 10?"
    assert "What is 3 + 4" in MathQuestion(3, "+", 4).text
    assert "What is 9 - 2" in MathQuestion(9, "-", 2).text


def test_math_question_answer_examples():
    assert MathQuestion(3, "+", 4).answer == 7
    assert MathQuestion(9, "-", 2).answer == 7
    assert MathQuestion(10, "+", 10).answer == 20
    assert MathQuestion(5, "-", 5).answer == 0


def test_same_seed_gives_same_questions():
    assert draw_many(seed=7, count=50) == draw_many(seed=7, count=50)
    assert draw_many(seed=7, count=50) != draw_many(seed=8, count=50)


class ScriptedRng:
    """Returns the given operands and operator, to pin down the subtraction swap."""

    def __init__(self, a: int, b: int, operator: str):
        self._ints = [a, b]
        self._operator = operator

    def randint(self, low: int, high: int) -> int:
        assert (low, high) == (1, 10)
        return self._ints.pop(0)

    def choice(self, options):
        assert set(options) == {"+", "-"}
        return self._operator


def test_subtraction_puts_the_larger_operand_first():
    question = new_question(ScriptedRng(3, 7, "-"))
    assert (question.left, question.operator, question.right) == (7, "-", 3)
    assert question.text == "What is 7 - 3?"
    assert question.answer == 4


def test_subtraction_already_in_order_is_kept():
    question = new_question(ScriptedRng(8, 2, "-"))
    assert (question.left, question.operator, question.right) == (8, "-", 2)


def test_addition_keeps_the_drawn_order():
    question = new_question(ScriptedRng(3, 7, "+"))
    assert (question.left, question.operator, question.right) == (3, "+", 7)
    assert question.answer == 10


def test_new_question_without_rng_works():
    questions = [new_question() for _ in range(300)]
    for question in questions:
        assert isinstance(question, MathQuestion)
        assert 1 <= question.left <= 10 and 1 <= question.right <= 10
        assert question.operator in ("+", "-")
        if question.operator == "-":
            assert question.left >= question.right
        assert QUESTION_TEXT.fullmatch(question.text)
    # Not a constant: 300 system-random draws from 200 possibilities are not all the same.
    assert len({(q.left, q.operator, q.right) for q in questions}) > 1


# --------------------------------------------------------------------------- answer_field_error


@pytest.mark.parametrize("answer", ["", " ", "   ", "\t\n", None, 7, ["7"]])
def test_answer_field_missing_is_required(answer):
    assert answer_field_error(answer, 7) == "Please answer the math question"


@pytest.mark.parametrize("answer", ["8", "6", "-7", "seven", "7.0", "7 7", "١٢", "1" * 50, "0"])
def test_answer_field_wrong_answer_is_incorrect(answer):
    assert answer_field_error(answer, 7) == "Incorrect answer"


@pytest.mark.parametrize("answer", ["7", " 7 ", "\t7\n", "+7", "07"])
def test_answer_field_right_answer_has_no_error(answer):
    assert answer_field_error(answer, 7) is None


def test_answer_field_zero_is_a_valid_answer():
    assert answer_field_error("0", 0) is None
    assert answer_field_error("-0", 0) is None


def test_answer_field_without_expected_answer_is_incorrect():
    assert answer_field_error("7", None) == "Incorrect answer"
    assert answer_field_error("0", None) == "Incorrect answer"
    # An unparsable answer must not "match" a missing expected value.
    assert answer_field_error("seven", None) == "Incorrect answer"
    assert answer_field_error("7.0", None) == "Incorrect answer"


def test_answer_field_without_expected_still_requires_an_answer():
    assert answer_field_error("", None) == "Please answer the math question"


@given(st.integers(min_value=1, max_value=10), st.integers(min_value=1, max_value=10), st.sampled_from("+-"))
def test_answer_field_accepts_exactly_the_right_answer(a, b, operator):
    left, right = (max(a, b), min(a, b)) if operator == "-" else (a, b)
    question = MathQuestion(left, operator, right)
    assert answer_field_error(str(question.answer), question.answer) is None
    assert answer_field_error(str(question.answer + 1), question.answer) == "Incorrect answer"


# --------------------------------------------------------------------------- rejection

SHOWN = 1_000_000.0
LATER = SHOWN + 60_000


def reject(
    honeypot: object = "",
    shown_at_ms: float | None = SHOWN,
    now_ms: float = LATER,
    answer: object = "7",
    expected: int | None = 7,
):
    return rejection(honeypot=honeypot, shown_at_ms=shown_at_ms, now_ms=now_ms, answer=answer, expected=expected)


def rejection(*, honeypot, shown_at_ms, now_ms, answer, expected):
    """The checks in the order web/submissions.py runs them (the token is spent in between)."""
    before = rejection_before_answer(honeypot=honeypot, shown_at_ms=shown_at_ms, now_ms=now_ms)
    return before if before is not None else answer_rejection(answer, expected)


def test_all_good_passes():
    assert reject() is None


def test_all_good_with_spaces_around_answer_passes():
    assert reject(answer="  7 ") is None


@pytest.mark.parametrize("honeypot", ["x", " ", "\t", "http://spam.example.com", "0"])
def test_filled_honeypot_is_rejected(honeypot):
    assert reject(honeypot=honeypot) == "Please try again."


def test_honeypot_wins_over_too_fast_and_wrong_math():
    assert reject(honeypot=" ", shown_at_ms=SHOWN, now_ms=SHOWN + 1, answer="99", expected=7) == "Please try again."
    assert reject(honeypot="bot", shown_at_ms=None, answer="", expected=None) == "Please try again."


@pytest.mark.parametrize("honeypot", [None, 0, False, [], ["x"], b""])
def test_non_string_honeypot_is_rejected(honeypot):
    assert reject(honeypot=honeypot) == "Please try again."


def test_too_fast_at_4999_ms_is_rejected():
    assert reject(shown_at_ms=SHOWN, now_ms=SHOWN + 4999) == "Please take your time to fill out the form completely."


def test_too_fast_wins_over_wrong_math():
    assert (
        reject(shown_at_ms=SHOWN, now_ms=SHOWN + 4999, answer="99", expected=7)
        == "Please take your time to fill out the form completely."
    )


def test_exactly_5000_ms_passes_the_time_rule():
    assert reject(shown_at_ms=SHOWN, now_ms=SHOWN + 5000) is None


def test_exactly_5000_ms_then_checks_the_math():
    assert (
        reject(shown_at_ms=SHOWN, now_ms=SHOWN + 5000, answer="8", expected=7)
        == "Incorrect answer to the math question. Please try again."
    )


def test_fractional_just_under_5000_ms_is_too_fast():
    assert reject(shown_at_ms=SHOWN, now_ms=SHOWN + 4999.5) == "Please take your time to fill out the form completely."


@pytest.mark.parametrize("elapsed", [0, 1, 100, 4000])
def test_short_elapsed_times_are_too_fast(elapsed):
    assert reject(shown_at_ms=SHOWN, now_ms=SHOWN + elapsed) == "Please take your time to fill out the form completely."


def test_clock_running_backwards_is_too_fast():
    assert reject(shown_at_ms=SHOWN, now_ms=SHOWN - 10_000) == "Please take your time to fill out the form completely."


def test_no_good_token_asks_to_try_again_before_anything_else_but_the_honeypot():
    """No shown time: the form's token was not the site's, or expired (rules/form_tokens.py)."""
    assert reject(shown_at_ms=None) == "Please try again."
    assert reject(shown_at_ms=None, answer="99") == "Please try again."


def test_shown_at_zero_is_a_real_time_not_missing():
    assert reject(shown_at_ms=0, now_ms=5000) is None
    assert reject(shown_at_ms=0, now_ms=4999) == "Please take your time to fill out the form completely."


@pytest.mark.parametrize("answer", ["8", "", "  ", None, "seven", "7.0", "-7", 7])
def test_wrong_or_missing_answer_is_rejected(answer):
    assert reject(answer=answer, expected=7) == "Incorrect answer to the math question. Please try again."


def test_no_expected_answer_is_rejected_as_wrong_math():
    assert reject(answer="7", expected=None) == "Incorrect answer to the math question. Please try again."
    assert reject(answer="seven", expected=None) == "Incorrect answer to the math question. Please try again."
    assert reject(answer=None, expected=None) == "Incorrect answer to the math question. Please try again."


@given(
    honeypot=st.one_of(st.none(), st.text(max_size=5)),
    elapsed=st.one_of(st.none(), st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)),
    answer=st.one_of(st.none(), st.text(max_size=5), st.integers(0, 20).map(str)),
    expected=st.one_of(st.none(), st.integers(0, 20)),
)
def test_rejection_order_matches_the_spec(honeypot, elapsed, answer, expected):
    shown_at = None if elapsed is None else SHOWN
    now = SHOWN if elapsed is None else SHOWN + elapsed
    result = rejection(honeypot=honeypot, shown_at_ms=shown_at, now_ms=now, answer=answer, expected=expected)
    if honeypot != "" or elapsed is None:
        assert result == "Please try again."
    elif elapsed < 5000:
        assert result == "Please take your time to fill out the form completely."
    elif answer_field_error(answer, expected) is not None:  # field rule, tested on its own above
        assert result == "Incorrect answer to the math question. Please try again."
    else:
        assert result is None
