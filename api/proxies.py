"""Trusted reverse proxies: the client's address behind them, from ``X-Forwarded-For``.

Behind a reverse proxy every connection comes from the proxy's address, so every client would
share one address's limits. ``SIZER_API_FORWARDED_ALLOW_IPS`` (``sizer serve --forwarded-allow-ips``)
names the proxies whose ``X-Forwarded-For`` header is believed: the client is the rightmost
address of that header that is not itself a trusted proxy (each proxy appends the address it
received the request from, so the addresses left of it are the client's own claims). From any
other peer the header is ignored: anyone can send it. By default no proxy is trusted.

>>> proxies = TrustedProxies.parse("10.0.0.0/8, 127.0.0.1")
>>> proxies.client("10.1.2.3", "198.51.100.7, 10.0.0.5")
'198.51.100.7'
>>> proxies.client("203.0.113.9", "198.51.100.7")
'203.0.113.9'
>>> TrustedProxies.parse(None).client("127.0.0.1", "198.51.100.7")
'127.0.0.1'
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_HOPS = 32  # addresses of X-Forwarded-For read at most, from the right: a longer header is a client's padding


@dataclass(frozen=True)
class TrustedProxies:
    """The proxies whose ``X-Forwarded-For`` is believed (``any_peer``: every peer, the setting ``*``)."""

    networks: tuple[Network, ...] = ()
    any_peer: bool = False

    @classmethod
    def parse(cls, value: str | None) -> "TrustedProxies":
        """The proxies of a comma-separated list of addresses or networks (``*``: any); ValueError naming a bad one.

        Parameters
        ----------
        value : str or None
            ``"10.0.0.0/8, 127.0.0.1"``, ``"*"``, or None / empty (no proxy trusted).
        """
        items = [item.strip() for item in (value or "").split(",") if item.strip()]
        if "*" in items:
            return cls(any_peer=True)
        networks = []
        for item in items:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(f"{item!r} is not an IP address or network (e.g. 10.0.0.1, 10.0.0.0/8, *)") from None
        return cls(tuple(networks))

    def __bool__(self) -> bool:
        return self.any_peer or bool(self.networks)

    def trusts(self, address: str) -> bool:
        """Whether ``address`` is one of the trusted proxies."""
        if self.any_peer:
            return True
        try:
            ip = ipaddress.ip_address(address.strip().strip("[]"))
        except ValueError:
            return False
        return any(ip in network for network in self.networks)

    def client(self, peer: str, forwarded_for: str | None) -> str:
        """The client's address: ``peer`` unless it is a trusted proxy that sent ``forwarded_for``; then the
        rightmost address of that header that is not a trusted proxy (the leftmost where all are)."""
        if not forwarded_for or not self.trusts(peer):
            return peer
        hops = [hop.strip() for hop in forwarded_for.split(",")[-MAX_HOPS:] if hop.strip()]
        for hop in reversed(hops):
            if not self.trusts(hop):
                return hop[:100]
        return hops[0][:100] if hops else peer
