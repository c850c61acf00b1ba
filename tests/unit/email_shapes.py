"""Email addresses for the property tests: valid parts, some spoiled with one hostile character, so
the assertions about an accepted address actually run (arbitrary text reached them in 0 of 900)."""

from __future__ import annotations

import string

from hypothesis import strategies as st

ATEXT = string.ascii_letters + string.digits + "!#$%&'*+-/=?^_`{|}~"
# Line breaks, controls, format characters (soft hyphen, zero-width, bidi), and what separates
# addresses in a header: each is a way text could try to leave its place.
HOSTILE = [
    "\r", "\n", "\r\n", "\x00", "\t", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\x9f",
    "\u00ad", "\u200b", "\u200d", "\u200e", "\u202e", "\u2028", "\u2029", "\ufeff",
    " ", "@", "..", "<", ">", ",", ";", '"', "\\",
]  # fmt: skip

LOCAL_PARTS = st.lists(st.text(ATEXT, min_size=1, max_size=12), min_size=1, max_size=4).map(".".join)
LABELS = st.one_of(
    st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True),
    st.sampled_from(["bücher", "müller", "café", "日本", "xn--bcher-kva", "Example", "MAIL"]),
)
DOMAINS = st.builds(
    lambda labels, top: ".".join([*labels, top]),
    st.lists(LABELS, min_size=1, max_size=3),
    st.sampled_from(["com", "org", "de", "co.uk", "example", "museum"]),
)


def spoiled(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda text, bad, at: text[: at % (len(text) + 1)] + bad + text[at % (len(text) + 1) :],
        valid,
        st.sampled_from(HOSTILE),
        st.integers(min_value=0, max_value=200),
    )


def mostly(usual: st.SearchStrategy[str], other: st.SearchStrategy[str], times: int) -> st.SearchStrategy[str]:
    """``usual`` ``times`` times out of ``times + 1``, else ``other``. (``st.one_of(usual, usual,
    other)`` would not weigh it: Hypothesis takes the same strategy twice as once.)"""
    return st.tuples(st.sampled_from([True] * times + [False]), usual, other).map(
        lambda chosen: chosen[1] if chosen[0] else chosen[2]
    )


def mostly_valid(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return mostly(valid, spoiled(valid), 4)


LOCALS = mostly_valid(LOCAL_PARTS)
DOMAIN_NAMES = mostly_valid(DOMAINS)
# A whole address as typed, with the spaces around it a form field may carry.
ADDRESSES = st.builds(
    lambda local, domain, pad: f"{pad}{local}@{domain}{pad}", LOCALS, DOMAIN_NAMES, st.sampled_from(["", " ", "  "])
)
