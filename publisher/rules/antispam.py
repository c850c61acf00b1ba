"""The contact form's security question and anti-spam checks (docs/product.md, Forms), as pure rules:
the answer and the time shown travel in the form's signed token; clocks and randomness are injected."""

from __future__ import annotations

import random
from dataclasses import dataclass

from publisher.content import form_copy
from publisher.content.form_copy import (
    HONEYPOT_REJECTED,
    MATH_INCORRECT,
    MATH_REJECTED,
    MATH_REQUIRED,
    TOO_FAST_REJECTED,
)
from publisher.rules.form_fields import honeypot_filled, parse_answer

MIN_FILL_TIME_MS = 5000
OPERAND_MIN = 1
OPERAND_MAX = 10


@dataclass(frozen=True)
class MathQuestion:
    left: int
    operator: str  # "+" or "-"
    right: int

    @property
    def answer(self) -> int:
        return self.left + self.right if self.operator == "+" else self.left - self.right

    @property
    def text(self) -> str:
        return form_copy.math_question(self.left, self.operator, self.right)


def new_question(rng: random.Random | None = None) -> MathQuestion:
    """Operands 1 to 10; for subtraction the larger comes first, so the result is never negative."""
    rng = rng or random.SystemRandom()
    a = rng.randint(OPERAND_MIN, OPERAND_MAX)
    b = rng.randint(OPERAND_MIN, OPERAND_MAX)
    operator = rng.choice("+-")
    if operator == "-" and b > a:
        a, b = b, a
    return MathQuestion(a, operator, b)


def is_correct_answer(answer: object, expected: int | None) -> bool:
    return expected is not None and parse_answer(answer) == expected


def answer_field_error(answer: object, expected: int | None) -> str | None:
    if not isinstance(answer, str) or not answer.strip():
        return MATH_REQUIRED
    if not is_correct_answer(answer, expected):
        return MATH_INCORRECT
    return None


def rejection_before_answer(
    *, honeypot: object, shown_at_ms: float | None, now_ms: float, min_fill_ms: int = MIN_FILL_TIME_MS
) -> str | None:
    """Why a contact submission is refused before its answer is looked at, in the documented order."""
    if honeypot_filled(honeypot):
        return HONEYPOT_REJECTED
    if shown_at_ms is None:  # a token not the site's, expired or used: the page gets a new one
        return HONEYPOT_REJECTED
    if now_ms - shown_at_ms < min_fill_ms:
        return TOO_FAST_REJECTED
    return None


def answer_rejection(answer: object, expected: int) -> str | None:
    return None if is_correct_answer(answer, expected) else MATH_REJECTED
