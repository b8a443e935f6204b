"""`sizer serve`'s address checked before uvicorn starts: a busy port is one line, not uvicorn's six and exit 3."""
from __future__ import annotations

import errno
import socket


def check_address(host: str, port: int) -> None:
    """Refuse, naming the field, an address the server could not listen on.

    The port is bound once and released, as uvicorn binds it (``SO_REUSEADDR``, so a port whose
    last connections wait in TIME_WAIT is not taken for busy); another program may still take the
    port between this check and uvicorn's bind, which then fails as uvicorn reports it.

    Parameters
    ----------
    host : str
        The interface to listen on (an IPv6 address where it holds a colon, as uvicorn reads it).
    port : int
        The TCP port [1].

    Raises
    ------
    InputError
        On ``port`` where another program listens on it or it needs privileges; on ``host`` where the
        address is not one of this machine's or cannot be resolved.
    """
    from sizer.facade import InputError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
    except socket.gaierror:
        raise InputError("host", host, "an interface name or address of this machine (it does not resolve)") from None
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise InputError("port", port, f"a free port: another program listens on {host}:{port}") from None
        if error.errno == errno.EACCES:
            raise InputError("port", port, "a port this user may listen on (below 1024 needs privileges)") from None
        raise InputError("host", host, f"an address of this machine to listen on ({error.strerror})") from None
    finally:
        probe.close()
