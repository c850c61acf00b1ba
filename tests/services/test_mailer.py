"""How a real SMTP server (aiosmtpd, on 127.0.0.1) takes the publisher's emails: AUTH, TLS,
refusals, outages. The emails themselves, byte for byte, are in tests/unit/test_mailer.py."""

from __future__ import annotations

import dataclasses

import pytest

from publisher import returns
from publisher.mail import mailer
from tests.smtp import SmtpServer, TestCertificates
from tests.unit.test_mailer import MESSAGE_ID, contact, settings_for


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> TestCertificates:
    return TestCertificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def smtp_server(request, certificates):
    """A server per test; parametrise indirectly with (credentials, tls)."""
    credentials, tls = getattr(request, "param", (None, None))
    server = SmtpServer(credentials=credentials, tls=tls, certificates=certificates).start()
    yield server
    server.stop()


@pytest.mark.asyncio
async def test_delivered_to_every_recipient_from_the_sender(smtp_server):
    # The publisher's own emails keep their envelope sender even when list emails have a bounce address.
    settings = settings_for(smtp_server.url(), PUBLISHER_BOUNCE_ADDRESS="bounces@animals.example")
    assert await mailer.send(contact(settings), settings) is None
    [received] = smtp_server.wait_for(1, timeout=10)
    assert received.mail_from == "site@animals.example"
    assert received.rcpt_tos == ["books@example.com", "editor@example.org"]
    assert received.message["Message-ID"] == MESSAGE_ID
    assert received.data == bytes(contact(settings))


@pytest.mark.parametrize("smtp_server", [(("pub@animals.example", "p@ss:wörd"), None)], indirect=True)
@pytest.mark.asyncio
async def test_auth_with_the_urls_user_and_password(smtp_server):
    settings = settings_for(smtp_server.url())
    await mailer.send(contact(settings), settings)
    assert smtp_server.wait_for(1, timeout=10)[0].authenticated_as == "pub@animals.example"

    wrong = settings.model_copy(update={"smtp_url": dataclasses.replace(settings.smtp_url, password="wrong")})
    with pytest.raises(returns.DeliveryFailed) as refused:
        await mailer.send(contact(wrong), wrong)
    assert refused.value.permanent and refused.value.reason.startswith("535")
    assert "wrong" not in refused.value.reason
    assert len(smtp_server.received) == 1


@pytest.mark.parametrize(
    "smtp_server", [(("pub", "secret"), "starttls"), (("pub", "secret"), "implicit")], indirect=True, ids=str
)
@pytest.mark.asyncio
async def test_starttls_or_implicit_tls_with_a_certificate_the_operator_trusts(smtp_server, certificates):
    settings = settings_for(smtp_server.url(), PUBLISHER_SMTP_CA_FILE=str(certificates.ca_file))
    assert settings.smtp_url.implicit_tls == (smtp_server.tls == "implicit")
    await mailer.send(contact(settings), settings)
    [received] = smtp_server.wait_for(1, timeout=10)
    assert received.authenticated_as == "pub" and (received.tls or settings.smtp_url.implicit_tls)


@pytest.mark.parametrize("smtp_server", [(("pub", "secret"), "starttls")], indirect=True)
@pytest.mark.asyncio
async def test_a_certificate_nobody_trusts_is_refused_before_the_password_is_sent(smtp_server):
    settings = settings_for(smtp_server.url())
    with pytest.raises(returns.DeliveryFailed) as failed:
        await mailer.send(contact(settings), settings)
    assert not failed.value.permanent and "CERTIFICATE_VERIFY_FAILED" in failed.value.reason
    assert smtp_server.received == []


@pytest.mark.asyncio
async def test_a_server_that_does_not_offer_starttls_gets_nothing_when_it_is_required(smtp_server):
    # What happens with smtp:// to any host that is not loopback (settings test: require_starttls).
    settings = settings_for(smtp_server.url())
    required = settings.model_copy(update={"smtp_url": dataclasses.replace(settings.smtp_url, require_starttls=True)})
    with pytest.raises(returns.DeliveryFailed) as failed:
        await mailer.send(contact(required), required)
    assert not failed.value.permanent and "STARTTLS" in failed.value.reason
    assert smtp_server.received == []


@pytest.mark.asyncio
async def test_one_refused_recipient_of_two_is_a_note_not_a_failure(smtp_server):
    # The other address got it: sending again would give them a second copy.
    settings = settings_for(smtp_server.url())
    smtp_server.refused_recipients.add("editor@example.org")
    note = await mailer.send(contact(settings), settings)
    assert note == "accepted, but refused for editor@example.org: 550 5.1.1 No such user here"
    assert smtp_server.wait_for(1, timeout=10)[0].rcpt_tos == ["books@example.com"]
    smtp_server.refused_recipients.add("books@example.com")
    with pytest.raises(returns.DeliveryFailed) as failed:  # every recipient refused: a permanent failure
        await mailer.send(contact(settings), settings)
    assert failed.value.permanent and failed.value.reason.startswith("recipients refused: books@example.com: 550")
