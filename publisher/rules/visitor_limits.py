"""The per-visitor limits' rules, without a store: what a limit is and who a visitor is (their network
address; an IPv6 address by its /64, which is what one home or server gets)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    attempts: int
    window_s: int


# A person fixing typos needs a few tries; a school or office shares one address.
PER_CLIENT = Limit(attempts=8, window_s=600)
PER_ADDRESS = Limit(attempts=40, window_s=600)


def client_address(scope: Mapping, trusted_proxy_hops: int) -> str:
    """The visitor's address for an HTTP request, as Reflex resolves it for the websocket: the peer, or
    behind ``trusted_proxy_hops`` proxies the address that many hops back in X-Forwarded-For."""
    hops = trusted_proxy_hops
    address = (scope.get("client") or ("0.0.0.0", 0))[0]
    if hops:
        headers = dict(scope.get("headers") or [])
        forwarded = [ip.strip() for ip in headers.get(b"x-forwarded-for", b"").decode("latin-1").split(",")]
        forwarded = [ip for ip in forwarded if ip]
        if len(forwarded) >= hops:
            address = forwarded[-hops]
    return address


IPV6_BLOCK_PREFIX = 64


def address_key(address: str) -> str:
    """Whom a per-address limit counts: an IPv4 address, or an IPv6 address's /64 (a whole /64 is one
    line's to use, else one visitor is countless addresses); an IPv4-mapped one is its IPv4."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip.packed, IPV6_BLOCK_PREFIX), strict=False))
    return str(ip)
