"""A software passkey for tests without a browser: it answers a ceremony as a platform authenticator does
(ES256, "none" attestation, user verified; WebAuthn L3 §6.1, §6.5.2), in ``credential.toJSON()``'s form."""

from __future__ import annotations

import hashlib
import json
import secrets
import struct
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

UP, UV, AT = 0x01, 0x04, 0x40


@dataclass
class SoftPasskey:
    origin: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    credential_id: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    sign_count: int = 0
    user_handle: bytes | None = None

    def _cose_public_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})

    def _client_data(self, kind: str, challenge: str) -> bytes:
        data = {"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": False}
        return json.dumps(data, separators=(",", ":")).encode()

    def _credential(self, client_data: bytes, **response: Any) -> dict[str, Any]:
        credential_id = bytes_to_base64url(self.credential_id)
        response["clientDataJSON"] = bytes_to_base64url(client_data)
        kind = {"type": "public-key", "authenticatorAttachment": "platform", "clientExtensionResults": {}}
        return {"id": credential_id, "rawId": credential_id, **kind, "response": response}

    def create(self, options: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``navigator.credentials.create()`` with these (JSON) options."""
        self.user_handle = base64url_to_bytes(options["user"]["id"])
        client_data = self._client_data("webauthn.create", options["challenge"])
        attested = bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id + self._cose_public_key()
        auth_data = hashlib.sha256(options["rp"]["id"].encode()).digest() + bytes([UP | UV | AT]) + struct.pack(">I", 0)
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data + attested})
        return self._credential(client_data, attestationObject=bytes_to_base64url(attestation), transports=["internal"])

    def get(self, options: dict[str, Any], counter: int | None = None) -> dict[str, Any]:
        """The answer to ``navigator.credentials.get()``; ``counter``: a cloned key's claim, else the next one."""
        self.sign_count = self.sign_count + 1 if counter is None else counter
        client_data = self._client_data("webauthn.get", options["challenge"])
        auth_data = (
            hashlib.sha256(options["rpId"].encode()).digest() + bytes([UP | UV]) + struct.pack(">I", self.sign_count)
        )
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return self._credential(
            client_data,
            authenticatorData=bytes_to_base64url(auth_data),
            signature=bytes_to_base64url(signature),
            userHandle=bytes_to_base64url(self.user_handle or b""),
        )
