"""cli/port_check.py: `sizer serve` on an address it cannot listen on is one line naming the field, exit 2.

issue 43: a busy port printed uvicorn's six log lines and exited 3.
"""
from __future__ import annotations

import socket

import pytest

from cli.port_check import check_address
from sizer.errors import InputError


@pytest.fixture()
def busy_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_serve_on_a_busy_port_is_one_line_naming_it(cli, busy_port):
    result = cli("serve", "--port", busy_port)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"Error: port: got {busy_port};"), result.stderr
    assert f"127.0.0.1:{busy_port}" in result.stderr and "INFO" not in result.output


def test_a_free_port_passes_and_stays_free():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    check_address("127.0.0.1", port)
    with socket.socket() as again:  # the check released what it bound
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


@pytest.mark.parametrize("host", ["no-such-host.invalid", "192.0.2.1"])  # unresolvable; TEST-NET-1, not this machine's
def test_a_host_that_is_not_this_machines_is_named(host):
    with pytest.raises(InputError, match=r"^host: "):
        check_address(host, 8000)
