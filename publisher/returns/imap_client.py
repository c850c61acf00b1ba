"""The bounce mailbox over IMAP (imaplib: a poll is a few commands, run in a thread). On purpose nothing
is marked \\Seen, the folder is never expunged (that would delete what others marked \\Deleted), and
no MailboxTrouble carries the password. Folder names: modified UTF-7 (RFC 3501 §5.1.3), quoted."""

from __future__ import annotations

import base64
import contextlib
import imaplib
import re
import ssl
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

from publisher.config.bounce_config import BOUNCE_CA_FILE_VAR, ImapServer
from publisher.config.mail_config import is_loopback

# Connect, TLS handshake and each command: a server slower than this is tried at the next poll.
IMAP_TIMEOUT_S = 30.0
# UIDs named in one FETCH of sizes: a command line of a few kilobytes, which every server takes.
_UIDS_PER_COMMAND = 500


class MailboxTrouble(Exception):
    """The mailbox could not be reached or read (connection, TLS, login, a folder): ``reason`` is
    safe to print (never the password)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def imap_utf7(name: str) -> str:
    """A folder name as IMAP writes it: imaplib sends ASCII only, and a server that is not
    told otherwise (UTF8=ACCEPT) reads names in modified UTF-7."""
    out: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            encoded = base64.b64encode("".join(pending).encode("utf-16-be")).decode("ascii")
            out.append("&" + encoded.rstrip("=").replace("/", ",") + "-")
            pending.clear()

    for character in name:
        if " " <= character <= "~":
            flush()
            out.append("&-" if character == "&" else character)
        else:
            pending.append(character)
    flush()
    return "".join(out)


def _quoted(text: str) -> str:
    """An IMAP quoted string: imaplib sends arguments as they are, so a space would split one."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _mailbox(name: str) -> str:
    return _quoted(imap_utf7(name))


def _ok(result: tuple[str, list[Any]]) -> list[Any]:
    """The response's data; a NO as an imaplib error, so that every refusal takes the one path to MailboxTrouble."""
    typ, data = result
    if typ != "OK":
        raise imaplib.IMAP4.error(_response_text(data) or typ)
    return data


def _ok_unless_gone(result: tuple[str, list[Any]]) -> bool:
    """Whether the message was there: a server may refuse a command on one expunged meanwhile
    (RFC 5530's EXPUNGEISSUED; Dovecot does) where others answer OK and do nothing."""
    typ, data = result
    if typ == "NO" and "EXPUNGEISSUED" in _response_text(data).upper():
        return False
    _ok(result)
    return True


def _response_text(data: list[Any]) -> str:
    parts = []
    for item in data:
        if isinstance(item, tuple):
            item = item[0]
        if isinstance(item, bytes):
            item = item.decode("utf-8", "replace")
        if item:
            parts.append(str(item))
    return " ".join(parts)


class MailboxClient:
    """One session with the bounce mailbox, its folder selected read-write: ``with MailboxClient(...) as mailbox``."""

    def __init__(self, server: ImapServer, *, ca_file: str | None = None, timeout: float = IMAP_TIMEOUT_S) -> None:
        self.server = server
        self._ca_file = ca_file
        self._timeout = timeout
        self._imap: imaplib.IMAP4 | None = None
        # After LOGIN: many servers (Dovecot) name MOVE and UIDPLUS only to a logged-in client.
        self._capabilities: frozenset[str] = frozenset()
        self._created: set[str] = set()
        self._uidvalidity: int | None = None
        # The connection failed under a command: LOGOUT would only wait out the timeout again.
        self._broken = False

    def __enter__(self) -> Self:
        try:
            self._open()
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._close()

    def uids(self) -> list[int]:
        """Every message in the folder, oldest first: UIDs only grow, so their order is arrival order."""
        with self._guard("cannot list the messages of"):
            data = _ok(self._connection.uid("SEARCH", "ALL"))
        return sorted({int(uid) for line in data if isinstance(line, bytes) for uid in line.split()})

    @property
    def uidvalidity(self) -> int:
        """The selected folder's UIDVALIDITY: its UIDs name the same messages while it stays the same."""
        if self._uidvalidity is None:
            raise RuntimeError("MailboxClient is used inside a with block")
        return self._uidvalidity

    def sizes(self, uids: list[int]) -> dict[int, int]:
        """Each message's size in bytes (RFC822.SIZE), read first so a message above the site's limit
        is never downloaded; a message gone meanwhile is not in the answer."""
        sizes: dict[int, int] = {}
        for first in range(0, len(uids), _UIDS_PER_COMMAND):
            chunk = ",".join(str(uid) for uid in uids[first : first + _UIDS_PER_COMMAND])
            with self._guard("cannot read the sizes of the messages of"):
                data = _ok(self._connection.uid("FETCH", chunk, "(RFC822.SIZE)"))
            for item in data:
                line = item[0] if isinstance(item, tuple) else item
                if not isinstance(line, bytes):
                    continue
                uid = re.search(rb"\bUID (\d+)", line, re.IGNORECASE)
                size = re.search(rb"\bRFC822\.SIZE (\d+)", line, re.IGNORECASE)
                if uid and size:
                    sizes[int(uid.group(1))] = int(size.group(1))
        return sizes

    def fetch(self, uid: int) -> bytes | None:
        """The raw message, unmarked; None when it is gone (someone else handled or deleted it meanwhile)."""
        with self._guard(f"cannot read message {uid} of"):
            typ, data = self._connection.uid("FETCH", str(uid), "(BODY.PEEK[])")
            if not _ok_unless_gone((typ, data)):
                return None
        # Other messages' unsolicited FETCH responses (flags someone changed) may come along.
        for index, item in enumerate(data):
            if not (isinstance(item, tuple) and b"BODY[]" in item[0].upper()):
                continue
            after = data[index + 1] if index + 1 < len(data) and isinstance(data[index + 1], bytes) else b""
            found = re.search(rb"\bUID (\d+)", item[0] + b" " + after, re.IGNORECASE)
            if found and int(found.group(1)) == uid:
                return bytes(item[1])
        return None

    def move(self, uid: int, folder: str) -> None:
        """Put a handled message in ``folder`` (created when missing); a message already gone is no error."""
        if not {"MOVE", "UIDPLUS"} & self._capabilities:
            raise MailboxTrouble(
                f"{self.server.describe()} offers neither MOVE nor UIDPLUS, so a handled message cannot be "
                "moved out without also deleting every other message marked \\Deleted there"
            )
        self._create_once(folder)
        with self._guard(f"cannot move message {uid} to the folder {folder!r} of"):
            if "MOVE" in self._capabilities:
                _ok_unless_gone(self._connection.uid("MOVE", str(uid), _mailbox(folder)))
                return
            if not _ok_unless_gone(self._connection.uid("COPY", str(uid), _mailbox(folder))):
                return
            _ok(self._connection.uid("STORE", str(uid), "+FLAGS.SILENT", "(\\Deleted)"))
            # UID EXPUNGE (UIDPLUS): only this message, not others someone marked \Deleted.
            _ok(self._connection.uid("EXPUNGE", str(uid)))

    def _create_once(self, folder: str) -> None:
        """CREATE before the first move there (once per session): a MOVE into a missing folder fails,
        and the operator should not have to make it by hand."""
        if folder in self._created:
            return
        with self._guard(f"cannot create the folder {folder!r} in"):
            typ, data = self._connection.create(_mailbox(folder))
            # Servers word "it exists" differently; RFC 5530's code where they have it, else LIST.
            if typ != "OK" and "ALREADYEXISTS" not in _response_text(data).upper():
                listed = _ok(self._connection.list('""', _mailbox(folder)))
                if not any(listed):
                    _ok((typ, data))
        self._created.add(folder)

    @property
    def _connection(self) -> imaplib.IMAP4:
        if self._imap is None:
            raise RuntimeError("MailboxClient is used inside a with block")
        return self._imap

    def _open(self) -> None:
        server = self.server
        with self._guard(f"cannot read {BOUNCE_CA_FILE_VAR} ({self._ca_file}) for"):
            context = ssl.create_default_context()
            if self._ca_file:
                context.load_verify_locations(self._ca_file)
        with self._guard("cannot connect to"):
            if server.implicit_tls:
                self._imap = imaplib.IMAP4_SSL(server.host, server.port, ssl_context=context, timeout=self._timeout)
            else:
                self._imap = imaplib.IMAP4(server.host, server.port, timeout=self._timeout)
        imap = self._connection
        if not server.implicit_tls:
            if "STARTTLS" in imap.capabilities:
                with self._guard("STARTTLS failed with"):
                    imap.starttls(context)
            elif server.require_starttls or not is_loopback(server.host):
                raise MailboxTrouble(
                    f"{server.describe()} does not offer STARTTLS, so the password would go out unencrypted; "
                    "use imaps:// if the server has it (usually port 993)"
                )
        with self._guard("login refused for"):
            self._login(imap)
        with self._guard("cannot read the capabilities of"):
            self._capabilities = frozenset(
                word.upper()
                for line in _ok(imap.capability())
                if line
                for word in line.decode("ascii", "replace").split()
            )
        with self._guard(f"cannot open the folder {server.folder!r} of"):
            _ok(imap.select(_mailbox(server.folder)))
            _code, values = imap.response("UIDVALIDITY")
            found = [int(value) for value in values if isinstance(value, bytes) and value.strip().isdigit()]
            if not found:
                raise MailboxTrouble(f"{server.describe()} did not say the UIDVALIDITY of {server.folder!r}")
            self._uidvalidity = found[-1]

    def _login(self, imap: imaplib.IMAP4) -> None:
        user, password = self.server.username, self.server.password
        if (user + password).isascii():
            imap.login(_quoted(user), password)  # imaplib quotes the password, not the user
        elif "AUTH=PLAIN" in imap.capabilities:
            # LOGIN carries ASCII only; SASL PLAIN is UTF-8 (RFC 4616).
            imap.authenticate("PLAIN", lambda _challenge: f"\0{user}\0{password}".encode())
        else:
            raise MailboxTrouble(
                f"login impossible for {self.server.describe()}: the user name or password is not ASCII "
                "and the server does not offer AUTH=PLAIN, the only way to send one that is not"
            )

    def _close(self) -> None:
        imap, self._imap = self._imap, None
        if imap is None:
            return
        if not self._broken:
            # LOGOUT, never CLOSE: CLOSE expunges every message marked \Deleted.
            with contextlib.suppress(imaplib.IMAP4.error, OSError, EOFError):
                imap.logout()
                return
        with contextlib.suppress(OSError):
            imap.shutdown()

    @contextlib.contextmanager
    def _guard(self, failed: str) -> Iterator[None]:
        """Any failure under it as MailboxTrouble: ``failed`` (e.g. "cannot connect to"), the mailbox, the cause."""
        where = self.server.describe()
        try:
            yield
        except MailboxTrouble:
            raise
        except ssl.SSLCertVerificationError as exc:
            self._broken = True
            reason = (
                f"the TLS certificate of {where} is not trusted ({exc.verify_message}); if the server's "
                f"certificate comes from a private CA, give that CA's PEM file in {BOUNCE_CA_FILE_VAR}"
            )
            raise MailboxTrouble(self._scrub(reason)) from None
        except imaplib.IMAP4.readonly as exc:  # the folder, not the connection
            raise MailboxTrouble(self._scrub(f"{failed} {where}: read-only ({_cause(exc)})")) from None
        except (imaplib.IMAP4.abort, OSError, EOFError) as exc:
            self._broken = True
            raise MailboxTrouble(self._scrub(f"{failed} {where}: {_cause(exc)}")) from None
        except (imaplib.IMAP4.error, UnicodeError, ValueError) as exc:
            raise MailboxTrouble(self._scrub(f"{failed} {where}: {_cause(exc)}")) from None

    def _scrub(self, text: str) -> str:
        """``text`` without the password in any spelling a server or imaplib might have echoed it in."""
        password = self.server.password
        spellings = {
            password,
            password.replace("\\", "\\\\").replace('"', '\\"'),
            repr(password.encode())[2:-1],
            quote(password, safe=""),
            base64.b64encode(f"\0{self.server.username}\0{password}".encode()).decode("ascii"),
        }
        for spelling in sorted(spellings, key=len, reverse=True):
            if spelling:
                text = text.replace(spelling, "***")
        return text


def _cause(exc: BaseException) -> str:
    """What went wrong, as a person reads it: "Connection refused", not "[Errno 111] Connection refused"."""
    if isinstance(exc, OSError) and not isinstance(exc, ssl.SSLError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, TimeoutError):
        return "timed out"
    if exc.args and isinstance(exc.args[0], bytes):
        return exc.args[0].decode("utf-8", "replace")
    text = str(exc)
    # imaplib writes a server's answer as a Python literal, b'...' or [b'...'].
    text = re.sub(r"\[?b'((?:[^'\\]|\\.)*)'\]?", r"\1", text)
    return text or type(exc).__name__
