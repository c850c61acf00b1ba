"""How the site writes its headers. Text from outside goes through ``header_words``, never the email
package's parser, which decodes RFC 2047 words (before CVE-2024-6923's fix a typed name became a ``Bcc:``
line); URL and token headers are written verbatim: a provider reads no encoded ``<https://...>``."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from email.policy import EmailPolicy

# RFC 5322 2.1.1: a line MUST be at most 998 characters (without its CRLF), and SHOULD be at most 78.
MAX_LINE_LENGTH = 998
FOLD_AT = 78
# The headers that carry a URL or a token: written by verbatim_header, whatever builds the email.
VERBATIM_HEADERS = ("Message-ID", "List-Unsubscribe", "List-Unsubscribe-Post", "List-Id")
_FIELD_NAME = re.compile(r"[!-9;-~]+")  # RFC 5322 ftext


def verbatim_header(name: str, value: str) -> bytes:
    """``name: value`` and CRLF, the value exactly as given, folded only at a space outside ``<...>``. A
    control character, anything non-ASCII or a line over 998 raises ValueError: nothing broken is written."""
    if not _FIELD_NAME.fullmatch(name):
        raise ValueError(f"not a header name: {name!r}")
    if not (value.isascii() and value.isprintable()):
        raise ValueError(
            f"{name}: a header that carries a URL or a token must be printable ASCII on one line "
            f"(no CR, LF or other control character, nothing non-ASCII), got {value!r}"
        )
    lines = _fold_outside_brackets(f"{name}: {value}", first_fold=len(name) + 2)
    if (longest := max(len(line) for line in lines)) > MAX_LINE_LENGTH:
        raise ValueError(
            f"{name}: a line of {longest} characters is longer than RFC 5322's {MAX_LINE_LENGTH}, "
            "and it cannot be folded outside its <...>; it is not sent broken"
        )
    return ("\r\n".join(lines) + "\r\n").encode("ascii")


def _fold_outside_brackets(line: str, first_fold: int) -> list[str]:
    """``line`` cut before single spaces outside ``<...>`` (from ``first_fold`` on), each piece
    at most FOLD_AT long where the spaces allow. Unfolding (taking out each CRLF) gives ``line`` back."""
    depth = 0
    spaces = []
    for index, char in enumerate(line):
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(depth - 1, 0)
        elif (
            char == " "
            and depth == 0
            and index >= first_fold
            and line[index - 1] != " "
            and index + 1 < len(line)
            and line[index + 1] != " "
        ):
            spaces.append(index)
    lines, start = [], 0
    while len(line) - start > FOLD_AT:
        fitting = [space for space in spaces if start < space <= start + FOLD_AT]
        later = [space for space in spaces if space > start]
        if not later:
            break
        cut = fitting[-1] if fitting else later[0]
        lines.append(line[start:cut])
        start = cut  # the continuation line starts with the space
    lines.append(line[start:])
    return lines


def list_unsubscribe(link: str) -> str:
    """RFC 2369's List-Unsubscribe value for one link: ``<link>``. A link that is not one URL
    (a space, an angle bracket, a quote, a control or non-ASCII character) raises ValueError."""
    if not (link.isascii() and link.isprintable()) or any(char in link for char in ' <>"'):
        raise ValueError(f"List-Unsubscribe: not one URL: {link!r}")
    return f"<{link}>"


class UnsafeHeaders(ValueError):
    """An email whose headers cannot be written safely: that one email is refused with the
    reason (``problem``) and never sent; nothing else stops."""

    def __init__(self, problem: str):
        super().__init__(f"not sent, its headers are unsafe: {problem}")
        self.problem = problem


# --- Text from outside, as header words. ---

# A plain word, written as typed: at most this long, so every header line stays within FOLD_AT.
PLAIN_WORD_MAX = 40
# An encoded word this module writes: at most this long (RFC 2047 allows 75), for the same reason.
ENCODED_WORD_MAX = 66
_ENCODED_WORD_START, _ENCODED_WORD_END = "=?utf-8?q?", "?="
_ENCODED_TEXT_MAX = ENCODED_WORD_MAX - len(_ENCODED_WORD_START) - len(_ENCODED_WORD_END)
# RFC 2047 5(3): the characters a "Q" encoded word may carry as themselves anywhere in a header.
_Q_LITERAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!*+/-")
# A plain word holds no "=" (so no "=?...?=" the receiver would decode) and nothing that would
# change how the header reads: in a display name, RFC 5322's atext; in other text (a Subject),
# any printable ASCII but "<" and ">" (which verbatim_header never folds inside).
_PLAIN_IN_PHRASE = re.compile(r"[A-Za-z0-9!#$%&'*+/?^_`{|}~-]+")
_PLAIN_IN_TEXT = re.compile(r"[!-;?-~]+")
# Unicode's line breaks and controls (CR, LF, NEL, U+2028, U+2029...): a space in a header.
_BREAKING = ("Cc", "Zl", "Zp")


def header_words(text: str, *, phrase: bool = False) -> str:
    """Text from outside as header words (printable ASCII, never a line break): plain words as typed, the
    rest RFC 2047 "Q" words written here, so an encoded word typed in reads as typed, never decoded."""
    text = "".join(" " if unicodedata.category(char) in _BREAKING else char for char in text)
    plain_word = _PLAIN_IN_PHRASE if phrase else _PLAIN_IN_TEXT
    words = text.split(" ")
    encode = [len(word) > PLAIN_WORD_MAX or not plain_word.fullmatch(word) for word in words]
    # Two spaces in a row (or one at an end) leave an empty word, whose run would encode
    # nothing: it takes a plain neighbour into its run, so the spaces are carried too.
    for index, word in enumerate(words):
        alone = not word and not (index and encode[index - 1]) and not (index + 1 < len(words) and encode[index + 1])
        if alone and len(words) > 1:
            encode[index - 1 if index else index + 1] = True
    tokens: list[str] = []
    run: list[str] = []
    for word, encoded in zip(words, encode, strict=True):
        if encoded:
            run.append(word)
            continue
        if run:
            tokens.extend(_encoded_words(" ".join(run)))
            run = []
        tokens.append(word)
    if run and (joined := " ".join(run)):
        tokens.extend(_encoded_words(joined))
    return " ".join(tokens)


def _encoded_words(text: str) -> list[str]:
    """``text`` (not empty) as adjacent "Q" encoded words: a reader joins them without the spaces between."""
    pieces = []
    current = ""
    for char in text:
        if char == " ":
            piece = "_"
        elif char in _Q_LITERAL:
            piece = char
        else:
            piece = "".join(f"={byte:02X}" for byte in char.encode("utf-8", "replace"))
        if len(current) + len(piece) > _ENCODED_TEXT_MAX:
            pieces.append(current)
            current = ""
        current += piece
    pieces.append(current)
    return [f"{_ENCODED_WORD_START}{piece}{_ENCODED_WORD_END}" for piece in pieces]


class Written(str):
    """A header value this module wrote: printable ASCII on one line, which the ``WIRE`` policy writes
    with ``verbatim_header``, never through the email package's parser."""

    __slots__ = ()


# An address as a header carries it: a dot-atom local part, an ASCII domain (mailer.envelope_address).
_ADDRESS = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+")


def mailbox(display_name: str, address: str) -> Written:
    """``words <address>``, or the bare address without a name; an address a header cannot carry as it
    is raises UnsafeHeaders."""
    if not _ADDRESS.fullmatch(address):
        raise UnsafeHeaders(f"not an address a header can carry: {address!r}")
    words = header_words(display_name, phrase=True)
    return Written(f"{words} <{address}>" if words else address)


def address_list(mailboxes: Iterable[Written]) -> Written:
    """Several mailboxes in one header (the publisher's inbox: To)."""
    return Written(", ".join(mailboxes))


def unstructured(text: str) -> Written:
    """A Subject: ``text`` through ``header_words``."""
    return Written(header_words(text))


# --- The check every message passes before it goes. ---


def check_header_block(data: bytes, written: Sequence[str]) -> None:
    """Raise UnsafeHeaders unless the header block of ``data`` holds exactly the fields ``written``, in
    order, on clean lines: no ``Bcc:`` from a decoded name, no empty line starting the body early."""
    head, blank, _ = data.partition(b"\r\n\r\n")
    if not blank:
        raise UnsafeHeaders("no empty line ends the header block")
    found: list[str] = []
    for number, line in enumerate(head.split(b"\r\n"), 1):
        if b"\r" in line or b"\n" in line:
            raise UnsafeHeaders(f"header line {number} holds a CR or LF that is not a line end")
        if not line.isascii() or any(byte < 0x20 and byte != 0x09 or byte == 0x7F for byte in line):
            raise UnsafeHeaders(f"header line {number} holds a control character or a byte beyond ASCII")
        if len(line) > MAX_LINE_LENGTH:
            raise UnsafeHeaders(f"header line {number} is longer than {MAX_LINE_LENGTH} characters")
        if line[:1] in (b" ", b"\t"):
            if not found:
                raise UnsafeHeaders("the header block starts with a continuation line")
            if not line.strip():
                raise UnsafeHeaders(f"header line {number} is only spaces (an empty line inside the header block)")
            continue
        name, colon, _ = line.partition(b":")
        if not colon or not _FIELD_NAME.fullmatch(name.decode("ascii")):
            raise UnsafeHeaders(f"header line {number} is not a header (name: value): {line[:40].decode('ascii')!r}")
        found.append(name.decode("ascii"))
    expected = [name.lower() for name in written]
    if [name.lower() for name in found] == expected:
        return
    strangers = [name for name in found if name.lower() not in expected]
    if strangers:
        raise UnsafeHeaders(f"it holds headers the site did not write: {', '.join(strangers)}")
    missing = [name for name in written if name.lower() not in {name.lower() for name in found}]
    if missing:
        raise UnsafeHeaders(
            f"the header block ends before {', '.join(missing)} (an empty line inside it starts the body early)"
        )
    raise UnsafeHeaders(f"its headers are {', '.join(found)}, not the {', '.join(written)} written")


class _WirePolicy(EmailPolicy):
    """The SMTP policy, except that a ``Written`` value and the VERBATIM_HEADERS are kept as given (checked
    as set) and written by verbatim_header, never parsed (which would decode encoded-words)."""

    def header_store_parse(self, name, value):
        if isinstance(value, Written):
            verbatim_header(name, value)  # raises ValueError when it cannot be written right
            return (name, value)
        if name.lower() not in _VERBATIM or hasattr(value, "name"):
            return super().header_store_parse(name, value)
        verbatim_header(name, value)  # raises ValueError when it cannot be written right
        return (name, value)

    def _verbatim(self, name: str, value) -> str | None:
        if isinstance(value, Written):
            return verbatim_header(name, value).decode("ascii").replace("\r\n", self.linesep)
        if name.lower() not in _VERBATIM:
            return None
        # A header object (set under another policy) as it reads; a stored string as it is, unfolded.
        text = str(value) if hasattr(value, "name") else re.sub(r"[\r\n]", "", value)
        return verbatim_header(name, text).decode("ascii").replace("\r\n", self.linesep)

    def fold(self, name, value):
        folded = self._verbatim(name, value)
        return super().fold(name, value) if folded is None else folded

    def fold_binary(self, name, value):
        folded = self._verbatim(name, value)
        return super().fold_binary(name, value) if folded is None else folded.encode("ascii")


_VERBATIM = {name.lower() for name in VERBATIM_HEADERS}
# How the site's emails are written: the SMTP policy (CRLF), URL and token headers verbatim.
WIRE = _WirePolicy(linesep="\r\n")
