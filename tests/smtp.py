"""A real SMTP server on 127.0.0.1 (aiosmtpd, its own thread): records what it accepts, can require AUTH,
offer STARTTLS or implicit TLS (trustme CA), answer with scripted 4xx/5xx, stop and start again."""

from __future__ import annotations

import email
import email.policy
import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import quote

import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.support import held_port

# Signs the list's links in the tests (PUBLISHER_LIST_SECRET); a real site's comes from its configuration.
LIST_SECRET = "test-list-secret-0123456789abcdef0123456789"
# The test sites' PUBLISHER_POSTAL_ADDRESS (a release email needs one; with it, sites' workers send releases too).
POSTAL_ADDRESS = "Animals We Confuse, 12 Harbour Lane, Portsmouth PO1 2AB, United Kingdom"


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    data: bytes
    authenticated_as: str | None
    tls: bool

    @property
    def message(self) -> EmailMessage:
        return email.message_from_bytes(self.data, policy=email.policy.default)  # type: ignore[return-value]


@dataclass
class _Handler:
    server: SmtpServer

    async def handle_EHLO(self, smtp, session, envelope, hostname, responses) -> list[str]:  # noqa: N802
        session.host_name = hostname
        with self.server._changed:
            self.server.greetings += 1  # one per connection (two with STARTTLS)
        return responses

    async def handle_RCPT(self, smtp, session, envelope, address, options) -> str:  # noqa: N802 (aiosmtpd's name)
        if address in self.server.refused_recipients:
            return "550 5.1.1 No such user here"
        if address in self.server.deferred_recipients:
            return "451 4.2.1 Mailbox busy, try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, smtp, session, envelope) -> str:  # noqa: N802 (aiosmtpd's name)
        return self.server._accept(session, envelope)


class _ControllerOnHeldSocket(Controller):
    """aiosmtpd's controller on a socket the test holds (held_port): the port it reports is the one it has."""

    def __init__(self, handler: _Handler, sock: socket.socket, **options):
        super().__init__(handler, hostname="127.0.0.1", port=sock.getsockname()[1], **options)
        self._sock = sock

    def _create_server(self):
        return self.loop.create_server(self._factory_invoker, sock=self._sock, ssl=self.ssl_context)


class TestCertificates:
    __test__ = False  # not a test class
    """A throwaway CA and a certificate it issued for 127.0.0.1 and localhost."""

    def __init__(self, directory: Path):
        self.ca = trustme.CA()
        self.leaf = self.ca.issue_cert("127.0.0.1", "localhost")
        self.ca_file = directory / "smtp-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.leaf.configure_cert(context)
        return context


@dataclass
class SmtpServer:
    """``credentials``: AUTH required with these; ``tls``: "starttls", "implicit" or None."""

    credentials: tuple[str, str] | None = None
    tls: str | None = None
    certificates: TestCertificates | None = None
    # Bound from the start, listening while started: refused while down, and no other process takes the port.
    _held: socket.socket | None = field(default_factory=held_port, repr=False)
    port: int = field(init=False, default=0)
    received: list[Received] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)  # the next DATA answers, e.g. "451 4.3.0 busy"
    refused_recipients: set[str] = field(default_factory=set)
    deferred_recipients: set[str] = field(default_factory=set)  # answered 451 at RCPT
    greetings: int = 0  # EHLOs received: the connections opened, without STARTTLS
    # Called with the recipients when a message's data arrives, before it is taken (in the server's thread).
    on_data: Callable[[list[str]], None] | None = None
    _controller: Controller | None = None
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def __post_init__(self) -> None:
        self.port = self._held.getsockname()[1]

    def url(self, scheme: str | None = None) -> str:
        scheme = scheme or ("smtps" if self.tls == "implicit" else "smtp")
        user = ""
        if self.credentials:
            user = f"{quote(self.credentials[0], safe='')}:{quote(self.credentials[1], safe='')}@"
        return f"{scheme}://{user}127.0.0.1:{self.port}"

    def mail_env(self, **extra: str) -> dict[str, str]:
        return {
            "PUBLISHER_SMTP_URL": self.url(),
            "PUBLISHER_NOTIFY_TO": "books@animals.example",
            "PUBLISHER_MAIL_FROM": "Animals We Confuse <site@animals.example>",
            "PUBLISHER_LIST_SECRET": LIST_SECRET,
            **extra,
        }

    def _accept(self, session, envelope) -> str:
        if self.on_data is not None:
            self.on_data(list(envelope.rcpt_tos))
        with self._changed:
            if self.replies:
                return self.replies.pop(0)
            self.received.append(
                Received(
                    mail_from=envelope.mail_from,
                    rcpt_tos=list(envelope.rcpt_tos),
                    data=envelope.original_content or envelope.content,
                    authenticated_as=session.auth_data.login.decode() if session.authenticated else None,
                    tls=session.ssl is not None,
                )
            )
            self._changed.notify_all()
        return "250 2.0.0 OK: queued"

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = (
            isinstance(auth_data, LoginPassword)
            and self.credentials is not None
            and (auth_data.login.decode(), auth_data.password.decode()) == self.credentials
        )
        return AuthResult(success=ok, handled=False, auth_data=auth_data)

    def start(self) -> SmtpServer:
        options: dict = {"ready_timeout": 10}
        if self.credentials:
            options.update(
                authenticator=self._authenticate, auth_required=True, auth_require_tls=self.tls == "starttls"
            )  # aiosmtpd: implicit TLS does not count
        if self.tls == "starttls":
            options.update(tls_context=self.certificates.server_context(), require_starttls=True)
        elif self.tls == "implicit":
            options.update(ssl_context=self.certificates.server_context())
        sock, self._held = self._held or held_port(self.port), None
        # Inherited by its connections' TIME_WAIT remains: else they keep stop() from holding the port (EADDRINUSE).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._controller = _ControllerOnHeldSocket(_Handler(self), sock, **options)
        self._controller.start()  # the server now owns the socket, and closes it when it stops
        return self

    def stop(self) -> None:
        """Down, as a relay that went away: its port is held again at once (connections refused)."""
        if self._controller is not None:
            self._controller.stop()
            self._controller = None
            self._held = held_port(self.port)

    def wait_for(self, count: int, timeout: float) -> list[Received]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.received) >= count, timeout):
                raise TimeoutError(f"{len(self.received)} of {count} messages arrived within {timeout:.0f}s")
            return list(self.received)

    def message_ids(self) -> list[str]:
        return [r.message["Message-ID"] for r in self.received]
