"""The bounce mailbox over IMAP: nothing marked \\Seen, no folder expunged whole, no password in a MailboxTrouble."""

from __future__ import annotations

import ast
import base64
import contextlib
import re
import ssl
from collections.abc import Iterator

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

from publisher.config.mail_config import MailServer, is_loopback

IMAP_TIMEOUT_S = 30.0  # connect, TLS handshake and each command
_UIDS_PER_COMMAND = 500  # in one FETCH of sizes: a command line every server takes
# imaplib writes a server's answer as a Python literal, b'...' or [b'...']; imapclient adds "select failed: ".
_BYTES_LITERAL = re.compile(r"\[?(b'(?:[^'\\]|\\.)*')\]?")


class MailboxTrouble(Exception):
    """``reason`` is safe to print: never the password."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MailboxClient(contextlib.AbstractContextManager["MailboxClient"]):
    """One session, its folder selected read-write."""

    def __init__(self, server: MailServer, *, ca_file: str | None = None, timeout: float = IMAP_TIMEOUT_S) -> None:
        self.server = server
        self._created: set[str] = set()
        self._broken = False
        with self._guard(f"cannot read PUBLISHER_BOUNCE_CA_FILE ({ca_file}) for"):
            context = ssl.create_default_context()
            if ca_file:
                context.load_verify_locations(ca_file)
        with self._guard("cannot connect to"):
            self._connection = IMAPClient(
                server.host, server.port, ssl=server.implicit_tls, ssl_context=context, timeout=timeout
            )
        try:
            self.uidvalidity = self._start(context)
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def uids(self) -> list[int]:
        """Oldest first: UIDs only grow."""
        with self._guard("cannot list the messages of"):
            return sorted(self._connection.search("ALL"))

    def sizes(self, uids: list[int]) -> dict[int, int]:
        """Read first, so a message above the site's limit is never downloaded."""
        sizes: dict[int, int] = {}
        for first in range(0, len(uids), _UIDS_PER_COMMAND):
            with self._guard("cannot read the sizes of the messages of"):
                answer = self._connection.fetch(uids[first : first + _UIDS_PER_COMMAND], ["RFC822.SIZE"])
            sizes.update({uid: data[b"RFC822.SIZE"] for uid, data in answer.items() if b"RFC822.SIZE" in data})
        return sizes

    def fetch(self, uid: int) -> bytes | None:
        """Unmarked (BODY.PEEK); None when someone else handled or deleted it."""
        body = None
        with self._guard(f"cannot read message {uid} of", gone_is_no_error=True):
            body = self._connection.fetch([uid], ["BODY.PEEK[]"]).get(uid, {}).get(b"BODY[]")
        return None if body is None else bytes(body)

    def move(self, uid: int, folder: str) -> None:
        """``folder`` created when missing; a message already gone is no error."""
        imap = self._connection
        if not (imap.has_capability("MOVE") or imap.has_capability("UIDPLUS")):
            raise MailboxTrouble(
                f"{self.server.describe()} offers neither MOVE nor UIDPLUS, so a handled message cannot be "
                "moved out without also deleting every other message marked \\Deleted there"
            )
        with self._guard(f"cannot move message {uid} to the folder {folder!r} of", gone_is_no_error=True):
            if folder not in self._created and not imap.folder_exists(folder):
                imap.create_folder(folder)
            self._created.add(folder)
            if imap.has_capability("MOVE"):
                imap.move([uid], folder)
            else:
                imap.copy([uid], folder)
                imap.delete_messages([uid], silent=True)
                imap.uid_expunge([uid])  # UIDPLUS: only this message, not others someone marked \Deleted

    def _start(self, context: ssl.SSLContext) -> int:
        """STARTTLS, LOGIN and SELECT; the folder's UIDVALIDITY."""
        imap, server = self._connection, self.server
        if not server.implicit_tls and imap.has_capability("STARTTLS"):
            with self._guard("STARTTLS failed with"):
                imap.starttls(context)
            self._read_capabilities()
        elif not server.implicit_tls and (server.require_starttls or not is_loopback(server.host)):
            raise MailboxTrouble(
                f"{server.describe()} does not offer STARTTLS, so the password would go out unencrypted; "
                "use imaps:// if the server has it (usually port 993)"
            )
        if not imap.has_capability("AUTH=PLAIN") and not (server.username + server.password).isascii():
            raise MailboxTrouble(
                f"login impossible for {server.describe()}: the user name or password is not ASCII "
                "and the server does not offer AUTH=PLAIN, the only way to send one that is not"
            )
        with self._guard("login refused for"):
            if imap.has_capability("AUTH=PLAIN"):
                imap.plain_login(server.username, server.password)  # SASL PLAIN (RFC 4616): any text, in UTF-8
            else:
                imap.login(_quoted(server.username), server.password)  # imaplib quotes the password, not the user
        self._read_capabilities()
        with self._guard(f"cannot open the folder {server.folder!r} of"):
            uidvalidity = imap.select_folder(server.folder).get(b"UIDVALIDITY")
        if not isinstance(uidvalidity, int):
            raise MailboxTrouble(f"{server.describe()} did not say the UIDVALIDITY of {server.folder!r}")
        return uidvalidity

    def _read_capabilities(self) -> None:
        """Under a guard (imapclient asks the server when it has none cached); the checks after read the cache."""
        with self._guard("cannot read the capabilities of"):
            self._connection.capabilities()

    def close(self) -> None:
        """Never CLOSE (it expunges every message marked \\Deleted); a broken connection is only shut down."""
        with contextlib.suppress(IMAPClientError, OSError, EOFError):
            if self._broken:
                self._connection.shutdown()
            else:
                self._connection.logout()  # imaplib shuts the socket down whatever the answer

    @contextlib.contextmanager
    def _guard(self, failed: str, *, gone_is_no_error: bool = False) -> Iterator[None]:
        """Any failure as MailboxTrouble; RFC 5530's EXPUNGEISSUED (a message gone meanwhile) is none if asked."""
        where = self.server.describe()
        try:
            yield
        except ssl.SSLCertVerificationError as exc:
            self._broken = True
            reason = (
                f"the TLS certificate of {where} is not trusted ({exc.verify_message}); if the server's "
                f"certificate comes from a private CA, give that CA's PEM file in PUBLISHER_BOUNCE_CA_FILE"
            )
            raise MailboxTrouble(self._scrub(reason)) from None
        except (IMAPClientAbortError, OSError, EOFError) as exc:
            self._broken = True
            raise MailboxTrouble(self._scrub(f"{failed} {where}: {_cause(exc)}")) from None
        except (IMAPClientError, UnicodeError, ValueError) as exc:
            if not (gone_is_no_error and "EXPUNGEISSUED" in str(exc).upper()):
                raise MailboxTrouble(self._scrub(f"{failed} {where}: {_cause(exc)}")) from None

    def _scrub(self, text: str) -> str:
        """The password as typed, as an IMAP quoted string or in a SASL PLAIN answer."""
        password = self.server.password
        plain = base64.b64encode(f"\0{self.server.username}\0{password}".encode()).decode("ascii")
        spellings = [plain, password.replace("\\", "\\\\").replace('"', '\\"'), password]
        return re.sub("|".join(re.escape(spelling) for spelling in spellings if spelling), "***", text)


def _quoted(text: str) -> str:
    """An IMAP quoted string: imaplib sends the user name as it is, so a space would split it."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _bytes_text(found: re.Match[str]) -> str:
    """imapclient's ``b'...'`` as its text, so the scrub finds a password in it."""
    try:
        return ast.literal_eval(found[1]).decode(errors="replace")
    except (ValueError, SyntaxError):
        return found[1]


def _cause(exc: BaseException) -> str:
    """What went wrong, as a person reads it: "Connection refused", not "[Errno 111] Connection refused"."""
    if isinstance(exc, OSError) and not isinstance(exc, ssl.SSLError) and exc.strerror:
        return exc.strerror
    text = _BYTES_LITERAL.sub(_bytes_text, str(exc))
    return re.sub(r"^\w+ failed: ", "", text) or type(exc).__name__
