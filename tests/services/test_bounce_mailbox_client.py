"""The bounce mailbox's IMAP client against a real Dovecot, and against a tiny fake server for what Dovecot
never does (no STARTTLS nor AUTH=PLAIN, echoing a password, never greeting)."""

from __future__ import annotations

import dataclasses
import socket
import socketserver
import ssl
import threading
from collections.abc import Callable

import pytest

from publisher.config.mail_config import imap_server
from publisher.returns import imap_client
from publisher.returns.imap_client import MailboxClient, MailboxTrouble
from tests.imap import DovecotServer
from tests.support import held_port


def bounce(number: int) -> bytes:
    return (
        f"From: MAILER-DAEMON@example.net\r\nTo: bounces+tok{number}@books.example.com\r\n"
        f"Subject: Undelivered Mail Returned to Sender {number}\r\nMessage-ID: <bounce-{number}@example.net>\r\n"
        f"\r\nThis is bounce number {number}.\r\n"
    ).encode()


def client(mailbox: DovecotServer, folder: str = "INBOX", tls: bool = False, **options) -> MailboxClient:
    options.setdefault("ca_file", mailbox.ca_file)
    return MailboxClient(imap_server(mailbox.url(folder, tls=tls)), timeout=10, **options)


def trouble(open_session: Callable[..., MailboxClient], *args, **options) -> MailboxTrouble:
    with pytest.raises(MailboxTrouble) as caught, open_session(*args, **options):
        pass
    return caught.value


@pytest.mark.parametrize(
    ("tls", "require_starttls"), [(False, False), (False, True), (True, False)], ids=["loopback", "starttls", "imaps"]
)
def test_reads_every_message_oldest_first_over_tls_leaving_each_unread(mailbox, tls, require_starttls):
    server = imap_server(mailbox.url(tls=tls))
    assert not server.require_starttls  # loopback: STARTTLS only because Dovecot offers it
    server = dataclasses.replace(server, require_starttls=require_starttls)
    with MailboxClient(server, ca_file=mailbox.ca_file, timeout=10) as session:
        assert session.uids() == []  # an empty folder
    mailbox.append(bounce(1))
    mailbox.append(bounce(2), flags=["\\Flagged"])
    mailbox.append(bounce(3))
    with MailboxClient(server, ca_file=mailbox.ca_file, timeout=10) as session:
        uids = session.uids()
        assert [session.fetch(uid) for uid in uids] == [bounce(1), bounce(2), bounce(3)]
        assert uids == sorted(uids)
        assert isinstance(session._connection.socket(), ssl.SSLSocket)
    flags = [frozenset(), frozenset({"\\Flagged"}), frozenset()]
    assert mailbox.messages() == list(zip(flags, [bounce(1), bounce(2), bounce(3)], strict=True))


def test_a_certificate_from_an_unknown_ca_is_refused_with_a_hint(mailbox):
    for tls in (True, False):  # imaps, and STARTTLS on loopback
        reason = trouble(client, mailbox, tls=tls, ca_file=None).reason
        assert "not trusted" in reason and "PUBLISHER_BOUNCE_CA_FILE" in reason


@pytest.mark.parametrize("password", ["wrong-password", "wrong-pässword"])
def test_a_wrong_password_is_a_refused_login_that_never_shows_the_password(mailbox, password):
    server = dataclasses.replace(imap_server(mailbox.url()), password=password)
    refused = trouble(MailboxClient, server, ca_file=mailbox.ca_file, timeout=10)
    assert refused.reason.startswith(f"login refused for imap://bounces:***@127.0.0.1:{mailbox.port}/INBOX: ")
    assert "AUTHENTICATIONFAILED" in refused.reason
    assert password not in refused.reason and password not in str(refused)
    assert refused.__cause__ is None and refused.__suppress_context__


@pytest.mark.parametrize(
    ("port", "timeout", "cause"),
    [(held_port, 60, "Connection refused"), (lambda: socket.create_server(("127.0.0.1", 0)), 0.5, "timed out")],
    ids=["closed-fails-at-once", "never-greets"],
)
def test_a_closed_port_fails_at_once_and_a_server_that_never_greets_times_out(port, timeout, cause):
    with port() as held:  # closed: bound, not listening, so no other process can take it
        server = imap_server(f"imap://bounces:secret@127.0.0.1:{held.getsockname()[1]}/INBOX")
        reason = trouble(MailboxClient, server, timeout=timeout).reason
    assert reason == f"cannot connect to imap://bounces:***@127.0.0.1:{server.port}/INBOX: {cause}"


def test_a_missing_folder_is_trouble(mailbox):
    reason = trouble(client, mailbox, folder="Nowhere").reason
    assert reason.startswith("cannot open the folder 'Nowhere' of imap://bounces:***@")


def test_a_message_gone_meanwhile_fetches_as_none_and_moves_as_no_error(mailbox):
    mailbox.append(bounce(1))
    with client(mailbox) as session:
        [uid] = session.uids()
        mailbox.empty()  # another client expunges it
        assert session.fetch(uid) is None
        assert session.fetch(uid + 100) is None
        session.move(uid, "Processed")
    assert mailbox.messages("Processed") == []


@pytest.mark.parametrize("without", [set(), {b"MOVE"}], ids=["move", "copy-and-uid-expunge"])
def test_move_creates_the_folder_moves_only_that_message_and_without_move_nor_uidplus_does_nothing(mailbox, without):
    mailbox.append(bounce(1))
    mailbox.append(bounce(2))
    mailbox.append(bounce(3), flags=["\\Deleted"])  # someone else's, not yet expunged
    with client(mailbox) as session:
        assert session._connection.has_capability("MOVE")  # asked after LOGIN, as Dovecot names it then
        offered = session._connection.capabilities()
        # As a server without RFC 6851's MOVE (Dovecot has it).
        session._connection.capabilities = lambda: tuple(set(offered) - without)
        first, second, third = session.uids()
        session.move(second, "Processed")
        assert session.uids() == [first, third]
        session.move(first, "Processed")  # the folder exists now
        assert session.uids() == [third]
        session._connection.capabilities = lambda: tuple(set(offered) - {b"MOVE", b"UIDPLUS"})
        with pytest.raises(MailboxTrouble, match="neither MOVE nor UIDPLUS"):
            session.move(third, "Elsewhere")
    assert mailbox.folders() == ["INBOX", "Processed"]  # no folder made for a move refused
    assert mailbox.messages() == [(frozenset({"\\Deleted"}), bounce(3))]
    assert mailbox.messages("Processed") == [(frozenset(), bounce(2)), (frozenset(), bounce(1))]


def test_folder_names_with_spaces_quotes_and_any_letters_and_a_folder_another_client_made(mailbox):
    folder = 'Rückläufer & "Co" Отказы'
    mailbox.append(bounce(1), folder=folder)
    mailbox.append(bounce(2), folder=folder)
    done = f"{folder} done"
    mailbox.append(bounce(0), folder=done)  # a folder another client created
    with client(mailbox, folder=folder) as session:
        first, _ = session.uids()
        session.move(first, done)
    assert mailbox.folders() == sorted(["INBOX", folder, done])
    assert [raw for _, raw in mailbox.messages(folder)] == [bounce(2)]
    assert [raw for _, raw in mailbox.messages(done)] == [bounce(0), bounce(1)]


class FakeImapServer(socketserver.ThreadingTCPServer):
    """No STARTTLS, and a LOGIN answer of the test's choosing (``{args}`` is what the client sent)."""

    daemon_threads = True

    def __init__(self, login_reply: str = "OK LOGIN completed", hang_up_on: str = "", select_reply: str = ""):
        self.login_reply, self.select_reply = login_reply, select_reply
        self.hang_up_on = hang_up_on  # a command answered by closing the connection the second time
        self.commands_seen: set[str] = set()
        self.commands: list[str] = []
        super().__init__(("127.0.0.1", 0), FakeImapSession)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def url(self, password: str = "secret") -> str:
        return f"imap://bounces:{password}@127.0.0.1:{self.port}/INBOX"


class FakeImapSession(socketserver.StreamRequestHandler):
    server: FakeImapServer

    def handle(self) -> None:
        self.wfile.write(b"* OK IMAP4rev1 ready\r\n")
        for line in self.rfile:
            text = line.decode().rstrip("\r\n")
            self.server.commands.append(text)
            tag, _, rest = text.partition(" ")
            command, _, args = rest.partition(" ")
            if command.upper() == self.server.hang_up_on and command.upper() in self.server.commands_seen:
                return  # the second time: after LOGIN
            self.server.commands_seen.add(command.upper())
            replies = {
                "CAPABILITY": f"* CAPABILITY IMAP4rev1\r\n{tag} OK done",
                "LOGIN": f"{tag} {self.server.login_reply.format(args=args)}",
                "SELECT": f"{tag} {self.server.select_reply}"
                if self.server.select_reply
                else f"* 0 EXISTS\r\n* OK [UIDVALIDITY 1] ok\r\n{tag} OK [READ-WRITE] selected",
                # Every UID FETCH as Dovecot answers one of a message another client expunged meanwhile.
                "UID": f"* SEARCH\r\n{tag} OK searched" if "SEARCH" in args else f"{tag} NO [EXPUNGEISSUED] gone",
                "LOGOUT": f"* BYE bye\r\n{tag} OK logged out",
            }
            self.wfile.write((replies.get(command.upper(), f"{tag} BAD unknown command") + "\r\n").encode())
            if command.upper() == "LOGOUT":
                return


@pytest.fixture
def fake_server():
    servers: list[FakeImapServer] = []

    def start(**options) -> FakeImapServer:
        servers.append(FakeImapServer(**options))
        return servers[-1]

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("why", ["required", "not-loopback"])
def test_starttls_required_but_not_offered_is_refused_before_the_password_is_sent(fake_server, monkeypatch, why):
    fake = fake_server()
    server = dataclasses.replace(imap_server(fake.url()), require_starttls=why == "required")
    if why == "not-loopback":  # the settings always ask for it off loopback; a server made by hand cannot skip it
        monkeypatch.setattr(imap_client, "is_loopback", lambda host: False)
    assert trouble(MailboxClient, server, timeout=5).reason.startswith(
        f"imap://bounces:***@127.0.0.1:{fake.port}/INBOX does not offer STARTTLS, so the password would go out"
    )
    assert not any(" LOGIN " in command for command in fake.commands)


@pytest.mark.parametrize(("user", "sent"), [("bounces", '"bounces"'), ("bounce%20box", '"bounce box"')])
def test_plain_imap_on_loopback_logs_in_with_the_user_quoted_and_a_message_expunged_meanwhile_is_none(
    fake_server, user, sent
):
    fake = fake_server()
    with MailboxClient(imap_server(fake.url().replace("bounces:", f"{user}:")), timeout=5) as session:
        assert session.uids() == []
        assert session.fetch(7) is None
    assert f' LOGIN {sent} "secret"' in "\n".join(fake.commands)  # a space would split an unquoted name


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"hang_up_on": "CAPABILITY"}, "cannot read the capabilities of {where}: "),
        ({"select_reply": "NO [NONEXISTENT] b'\\x' is not here"}, "{where}: [NONEXISTENT] b'\\x' is not here"),
    ],
    ids=["connection-lost-at-capability", "refusal-no-python-literal"],
)
def test_a_connection_lost_or_a_refusal_in_any_words_is_mailbox_trouble(fake_server, options, reason):
    fake = fake_server(**options)
    where = f"imap://bounces:***@127.0.0.1:{fake.port}/INBOX"
    assert reason.format(where=where) in trouble(MailboxClient, imap_server(fake.url()), timeout=5).reason


def test_a_password_the_server_echoes_is_hidden(fake_server):
    password = 'se"cr\\et'
    fake = fake_server(login_reply="NO [AUTHENTICATIONFAILED] no user with {args}")
    server = imap_server(fake.url(password="se%22cr%5Cet"))
    assert server.password == password
    reason = trouble(MailboxClient, server, timeout=5).reason
    assert reason.startswith("login refused for imap://bounces:***@")
    assert "no user with" in reason and "***" in reason.partition("no user with")[2]
    for spelling in (password, 'se\\"cr\\\\et', "cr"):
        assert spelling not in reason
