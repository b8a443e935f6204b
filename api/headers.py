"""The security headers every answer carries, whoever writes it.

Sent with every answer: no MIME sniffing, no framing (clickjacking), no referrer, and a content
security policy that lets the pages load only their own scripts, styles and API. Swagger UI and
ReDoc (/docs, /redoc, served by fastapi-offline) start from an inline script, so their pages
allow inline code. Three writers use them: the ASGI middleware (every routed answer and its own
413/408/503/500), and the HTTP protocol's raw answers written before any request reaches the
application (503 over the connection limits, 408 for headers that never complete, 400 for a
request h11 cannot parse).

>>> dict(security_headers("/docs"))[b"x-frame-options"]
b'DENY'
"""
from __future__ import annotations

_CSP = ("default-src 'self'; script-src 'self'{inline}; style-src 'self'{inline}; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
PAGE_CSP = _CSP.format(inline="").encode()
DOCS_CSP = _CSP.format(inline=" 'unsafe-inline'").encode()
DOCS_PATHS = ("/docs", "/redoc")
FIXED_HEADERS = ((b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
                 (b"referrer-policy", b"no-referrer"))


def security_headers(path: str = "") -> list[tuple[bytes, bytes]]:
    """The headers for an answer to ``path`` (the strict policy unless it is one of the docs pages)."""
    csp = DOCS_CSP if path.startswith(DOCS_PATHS) else PAGE_CSP
    return [*FIXED_HEADERS, (b"content-security-policy", csp)]


def raw_header_lines(path: str = "") -> str:
    """:func:`security_headers` as HTTP/1.1 header lines, each ending in CRLF, for a hand-written answer."""
    return "".join(f"{name.decode()}: {value.decode()}\r\n" for name, value in security_headers(path))
