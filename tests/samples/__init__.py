"""Emails as real servers write them, with placeholders so a test addresses each to the VERP address,
reader and Message-ID of the email it pretends came back (shared by unit and services tests)."""

from __future__ import annotations

from pathlib import Path

BOUNCES = Path(__file__).parent / "bounces"


def bounce_sample(name: str, *, verp: str, reader: str, message_id: str, sender: str = "books@example.com") -> bytes:
    """A sample of ``tests/samples/bounces`` (``"qmail-hard"`` or ``"qmail-hard.eml"``), filled in.

    Plain replacement, not ``str.format``: an email is full of braces. ``message_id`` is taken
    with or without its ``<>``, since the samples put it where a Message-ID header stands.
    """
    path = BOUNCES / (name if name.endswith(".eml") else f"{name}.eml")
    message_id = message_id.strip()
    if not message_id.startswith("<"):
        message_id = f"<{message_id}>"
    values = {"@@VERP@@": verp, "@@READER@@": reader, "@@MESSAGE_ID@@": message_id, "@@FROM@@": sender}
    raw = path.read_bytes()
    for placeholder, value in values.items():
        raw = raw.replace(placeholder.encode(), value.encode())
    return raw
