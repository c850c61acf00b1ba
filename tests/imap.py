"""Debian's Dovecot on free 127.0.0.1 ports (STARTTLS and IMAPS): real, not fake, so the client must get
capabilities, UID MOVE/UIDPLUS and modified UTF-7 right."""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import secrets
import shutil
import socket
import ssl
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import trustme
from imapclient import IMAPClient

from tests.support import start_on_free_ports, wait_until

INSTALL_COMMAND = "apt-get update && apt-get install -y dovecot-imapd"


class DovecotServer:
    def __init__(self, port: int, tls_port: int) -> None:
        # Debian keeps it in /usr/sbin, often outside PATH.
        self.program = shutil.which("dovecot", path=f"/usr/sbin{os.pathsep}{os.environ.get('PATH', '')}")
        if self.program is None:
            raise RuntimeError(f"Dovecot is missing (the tests' IMAP server). As root:\n  {INSTALL_COMMAND}")
        self.port = port
        self.tls_port = tls_port
        self.user = "bounces"
        self.password = f"pw-{secrets.token_hex(8)}"
        # Not under pytest's tmp_path: as root that is private to root, and the mail is not.
        self.root = Path(tempfile.mkdtemp(prefix="publisher-dovecot-"))
        self.root.chmod(0o755)  # the mail processes reach their maildirs through it
        self.config = self.root / "dovecot.conf"
        self.log = self.root / "dovecot.log"
        self.output = self.root / "dovecot.out"
        self.mail = self.root / "mail"
        self.process: subprocess.Popen[bytes] | None = None
        try:
            self._write_files()
            self._start()
        except BaseException:
            self.close()
            raise

    def _write_files(self) -> None:
        ca = trustme.CA()
        leaf = ca.issue_cert("127.0.0.1", "localhost")
        self.ca_file = str(self.root / "imap-ca.pem")
        ca.cert_pem.write_to_path(self.ca_file)
        certificate = self.root / "imap-cert.pem"
        certificate.write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
        key = self.root / "imap-key.pem"
        key.touch(mode=0o600)
        leaf.private_key_pem.write_to_path(str(key))
        passwd = self.root / "passwd"
        passwd.write_text(f"{self.user}:{{PLAIN}}{self.password}::::::\n")

        if os.geteuid() == 0:
            owner = pwd.getpwnam("dovecot")  # Dovecot refuses to run a mail process as root
            no_chroot = ""
            users = ""
        else:
            # Everything as this user: no chroot, no switching users or groups.
            owner = pwd.getpwuid(os.geteuid())
            group = grp.getgrgid(owner.pw_gid).gr_name
            no_chroot = "  chroot =\n"
            users = (
                f"default_internal_user = {owner.pw_name}\n"
                f"default_internal_group = {group}\n"
                f"default_login_user = {owner.pw_name}\n"
            )
        self.mail.mkdir(mode=0o700)
        os.chown(self.mail, owner.pw_uid, owner.pw_gid)

        self.config.write_text(
            f"""base_dir = {self.root}/run
state_dir = {self.root}/state
instance_name = publisher-tests-{self.port}
log_path = {self.log}
protocols = imap
listen = 127.0.0.1
{users}
ssl = yes
ssl_cert = <{certificate}
ssl_key = <{key}

# LOGIN without TLS, as the site may on loopback (Dovecot counts 127.0.0.1 as secure anyway).
disable_plaintext_auth = no
auth_mechanisms = plain login
# No pause after a refused login, and no anvil penalty (4 s, up to 15 s): nobody may use its socket.
auth_failure_delay = 0
service anvil {{
{no_chroot}  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}

first_valid_uid = {owner.pw_uid}
last_valid_uid = {owner.pw_uid}
first_valid_gid = {owner.pw_gid}
last_valid_gid = {owner.pw_gid}
# LAYOUT=fs: a "." in a folder name is only a dot; INBOX apart, so no folder clashes with cur, new, tmp.
mail_location = maildir:~/Maildir:LAYOUT=fs:INBOX=~/Maildir/INBOX
namespace inbox {{
  inbox = yes
  separator = /
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {passwd}
}}
userdb {{
  driver = static
  args = uid={owner.pw_uid} gid={owner.pw_gid} home={self.mail}/%u
}}

service imap-login {{
{no_chroot}  inet_listener imap {{
    address = 127.0.0.1
    port = {self.port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {self.tls_port}
    ssl = yes
  }}
}}
"""
        )

    def _start(self) -> None:
        with self.output.open("wb") as output:
            self.process = subprocess.Popen(
                [self.program, "-F", "-c", str(self.config)],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.root,
            )

        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"Dovecot exited with {self.process.returncode}:\n{self._logs()}")
            return self._greets(self.port) and self._greets(self.tls_port, tls=True)

        wait_until(ready, 20, f"Dovecot on ports {self.port} and {self.tls_port}", interval=0.05)

    def _greets(self, port: int, tls: bool = False) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                if not tls:
                    return sock.recv(64).startswith(b"* OK")
                context = ssl.create_default_context(cafile=self.ca_file)
                with context.wrap_socket(sock, server_hostname="127.0.0.1") as secure:
                    return secure.recv(64).startswith(b"* OK")
        except OSError:
            return False

    def _logs(self) -> str:
        parts = []
        for path in (self.output, self.log):
            with contextlib.suppress(OSError):
                parts.append(f"--- {path.name}\n{path.read_text(errors='replace')}")
        return "\n".join(parts)

    def url(self, folder: str = "INBOX", tls: bool = False) -> str:
        scheme, port = ("imaps", self.tls_port) if tls else ("imap", self.port)
        return f"{scheme}://{self.user}:{quote(self.password, safe='')}@127.0.0.1:{port}/{quote(folder, safe='')}"

    @contextlib.contextmanager
    def _session(self) -> Iterator[IMAPClient]:
        """IMAPClient: its own modified UTF-7 for folder names, not the site's encoder under test."""
        with IMAPClient("127.0.0.1", self.port, ssl=False, timeout=10) as imap:
            imap.login(self.user, self.password)
            yield imap

    def append(self, *raws: bytes, folder: str = "INBOX", flags: Iterable[str] = ()) -> None:
        """As a mail server would, ``folder`` created when missing; in one session (hundreds in a second)."""
        with self._session() as imap:
            if folder.upper() != "INBOX" and not imap.folder_exists(folder):
                imap.create_folder(folder)
            for raw in raws:
                imap.append(folder, raw, flags=tuple(flags))

    def messages(self, folder: str = "INBOX") -> list[tuple[frozenset[str], bytes]]:
        """Each message's flags (but \\Recent) and raw bytes, oldest first, without marking it \\Seen."""
        with self._session() as imap:
            imap.select_folder(folder, readonly=True)
            uids = sorted(imap.search("ALL"))
            fetched = imap.fetch(uids, ["FLAGS", "BODY.PEEK[]"]) if uids else {}
            return [
                (frozenset(f.decode() for f in fetched[uid][b"FLAGS"] if f != b"\\Recent"), fetched[uid][b"BODY[]"])
                for uid in uids
            ]

    def folders(self) -> list[str]:
        with self._session() as imap:
            return sorted(name for _flags, _separator, name in imap.list_folders())

    def delete_folder(self, folder: str) -> None:
        with self._session() as imap:
            if imap.folder_exists(folder):
                imap.delete_folder(folder)

    def empty(self) -> None:
        with self._session() as imap:
            # The deepest first: Dovecot keeps a parent with children as a \Noselect folder.
            names = [name for _flags, _separator, name in imap.list_folders()]
            for name in sorted(names, key=lambda name: name.count("/"), reverse=True):
                if name.upper() != "INBOX":
                    imap.delete_folder(name)
            imap.select_folder("INBOX")
            uids = imap.search("ALL")
            if uids:
                imap.delete_messages(uids)
                imap.expunge()

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # Dovecot's master stops its processes on SIGTERM
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def dovecot() -> Iterator[DovecotServer]:
    server = start_on_free_ports(DovecotServer, count=2)  # others if one was taken before Dovecot listened
    yield server
    server.close()


@pytest.fixture
def mailbox(dovecot: DovecotServer) -> DovecotServer:
    """Every message and folder of earlier tests gone."""
    dovecot.empty()
    return dovecot
