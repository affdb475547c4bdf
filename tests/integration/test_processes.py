"""The server as a process among others: one server per Unix socket, per --dir and per tier
file; the command line; CONFIG GET dir; -LOADING while the append-only file loads; the time
SIGTERM takes.

A second server that must be refused is run directly (subprocess.run with a timeout), not
through the fixtures, which retry a start that failed on an address in use."""
import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import CTE_KIND, CTE_SERVER, R, RespConn, free_port, start_cte

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server's own process rules")


def run_second(args, timeout=10.0, cwd=None):
    """Runs a cte-server that is expected to refuse to start; returns (status, output)."""
    p = subprocess.run([CTE_SERVER] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def second_args(tmp, **over):
    """Arguments for a second server with its own port, dir and socket unless overridden."""
    opts = {"port": str(free_port()), "bind": "127.0.0.1", "dir": str(tmp / "d2"),
            "unixsocket": str(tmp / "s2.sock"), "appendonly": "no"}
    opts.update(over)
    out = []
    for k, v in opts.items():
        out += ["--" + k, v]
    return out


@pytest.fixture
def first(server_factory):
    return server_factory(["--appendfsync", "always", "--appendonly", "yes"])


# ---- the command line -------------------------------------------------------------------


def test_an_option_without_a_value_names_the_option(tmp_path):
    rc, out = run_second(["--port"], cwd=str(tmp_path))
    assert rc != 0
    assert "'--port' needs a value" in out, out


def test_a_config_file_after_options_is_read_as_the_config_file(server_factory, tmp_path):
    conf = tmp_path / "x.yaml"
    conf.write_text("hz: 17\n")
    srv = server_factory(["--appendonly", "no", str(conf)])
    with srv.conn() as c:
        assert c.py("CONFIG", "GET", "hz") == [b"hz", b"17"]
        assert c.py("CONFIG", "GET", "appendonly") == [b"appendonly", b"no"]


def test_help_documents_the_config_file_rule():
    out = subprocess.run([CTE_SERVER, "--help"], stdout=subprocess.PIPE, timeout=5).stdout
    assert b"takes one value" in out, out
