"""Debian's redis-cli (7.0) against cte-server: one-shot commands, the Unix socket, inline
commands, `--pipe` mass insertion, RESP3 (`-3`) output formatting, INFO.

redis-cli formats what the server sends, so each expected text below is what redis-cli prints
for Redis 7.0's reply (checked by running this file with CTE_SERVER=/usr/bin/redis-server)."""
import os
import subprocess

import pytest

from conftest import REDIS_CLI, encode_command

pytestmark = pytest.mark.skipif(not os.path.exists(REDIS_CLI), reason="no " + REDIS_CLI)


def cli(server, *args, unix=False, input=None, timeout=60):
    """Runs redis-cli with args against server; returns (exit status, stdout as str)."""
    where = ["-s", server.unixsocket] if unix else ["-h", server.host, "-p", str(server.port)]
    if server.password:
        where += ["--no-auth-warning", "-a", server.password]
    p = subprocess.run([REDIS_CLI] + where + list(args), input=input, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def test_ping(cte_server):
    assert cli(cte_server, "ping") == (0, "PONG\n")
    assert cli(cte_server, "ping", unix=True) == (0, "PONG\n")
    assert cli(cte_server, "--no-raw", "ping", "hello") == (0, '"hello"\n')


def test_set_get_and_types(cte_server):
    assert cli(cte_server, "set", "greeting", "hello world") == (0, "OK\n")
    assert cli(cte_server, "get", "greeting") == (0, "hello world\n")
    assert cli(cte_server, "--no-raw", "get", "greeting") == (0, '"hello world"\n')
    assert cli(cte_server, "--no-raw", "get", "nokey") == (0, "(nil)\n")
    assert cli(cte_server, "--no-raw", "incr", "n") == (0, "(integer) 1\n")
    assert cli(cte_server, "--no-raw", "mget", "greeting", "nokey", "n") == \
        (0, '1) "hello world"\n2) (nil)\n3) "1"\n')
    assert cli(cte_server, "--no-raw", "keys", "nomatch*") == (0, "(empty array)\n")
    assert cli(cte_server, "--no-raw", "set", "a") == \
        (0, "(error) ERR wrong number of arguments for 'set' command\n")
    assert cli(cte_server, "get", "greeting", unix=True) == (0, "hello world\n")
    assert cli(cte_server, "--no-raw", "incr", "greeting") == \
        (0, "(error) ERR value is not an integer or out of range\n")


def test_stdin_commands_and_dash_x(cte_server):
    code, out = cli(cte_server, input=b"set a 1\nincr a\nget a\n")
    assert (code, out) == (0, "OK\n2\n2\n")
    assert cli(cte_server, "-x", "set", "fromstdin", input=b"line1\nline2\n") == (0, "OK\n")
    assert cli(cte_server, "strlen", "fromstdin") == (0, "12\n")


def test_inline_commands_over_a_raw_socket(cte_server):
    with cte_server.conn() as c:
        c.send_raw(b"PING\r\n")
        assert c.read_reply()[1] == b"+PONG\r\n"
        c.send_raw(b"SET a b\r\n")
        assert c.read_reply()[1] == b"+OK\r\n"
        c.send_raw(b"GET a\r\nEXISTS a nokey\r\n")
        assert c.read_reply()[1] == b"$1\r\nb\r\n"
        assert c.read_reply()[1] == b":1\r\n"
    assert cli(cte_server, "get", "a") == (0, "b\n")


def test_pipe_mass_insertion(cte_server):
    n = 10000
    data = b"".join(encode_command("SET", "mass:%d" % i, "value-%d" % i) for i in range(n))
    code, out = cli(cte_server, "--pipe", input=data, timeout=120)
    assert code == 0, out
    assert "errors: 0, replies: %d" % n in out, out
    assert cli(cte_server, "dbsize") == (0, "%d\n" % n)
    assert cli(cte_server, "get", "mass:9999") == (0, "value-9999\n")
    # a mix with an error in it is counted as one
    data = encode_command("INCR", "c") + encode_command("HSET", "mass:1", "f", "v") + \
        encode_command("INCR", "c")
    code, out = cli(cte_server, "--pipe", input=data)
    assert "errors: 1, replies: 3" in out, out
    assert cli(cte_server, "get", "c") == (0, "2\n")


def test_resp3_hello_and_hgetall_formatting(cte_server):
    code, out = cli(cte_server, "-3", "--no-raw", "hello", "3")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == '1# "server" => "redis"'
    assert lines[1].startswith('2# "version" => "')
    assert lines[2] == '3# "proto" => (integer) 3'
    assert lines[3].startswith('4# "id" => (integer) ')
    assert lines[4:] == ['5# "mode" => "standalone"', '6# "role" => "master"',
                         '7# "modules" => (empty array)']
    assert cli(cte_server, "hset", "h", "f", "v", "g", "1") == (0, "2\n")
    assert cli(cte_server, "-3", "--no-raw", "hgetall", "h") == \
        (0, '1# "f" => "v"\n2# "g" => "1"\n')
    assert cli(cte_server, "-3", "hgetall", "h") == (0, "f v\ng 1\n")
    assert cli(cte_server, "--no-raw", "hgetall", "h") == (0, '1) "f"\n2) "v"\n3) "g"\n4) "1"\n')
    assert cli(cte_server, "-3", "--no-raw", "hgetall", "nokey") == (0, "(empty hash)\n")
    assert cli(cte_server, "-3", "--no-raw", "zadd", "z", "1.5", "a") == (0, "(integer) 1\n")
    assert cli(cte_server, "-3", "--no-raw", "zscore", "z", "a") == (0, "(double) 1.5\n")
    assert cli(cte_server, "-3", "--no-raw", "get", "nokey") == (0, "(nil)\n")
    assert cli(cte_server, "-3", "--no-raw", "exists", "h") == (0, "(integer) 1\n")


def test_info_server(cte_server):
    code, out = cli(cte_server, "info", "server")
    assert code == 0, out
    lines = out.replace("\r", "").splitlines()
    assert lines[0] == "# Server"
    fields = dict(l.split(":", 1) for l in lines[1:] if ":" in l)
    assert fields["redis_mode"] == "standalone"
    assert fields["tcp_port"] == str(cte_server.port)
    assert int(fields["process_id"]) == cte_server.pid
    assert fields["redis_version"].split(".")[0] == "7"
    # the fields of Redis 7.0's section that clients and Redis's own tests read
    assert fields["redis_git_sha1"] == "00000000" and fields["redis_git_dirty"] == "0"
    assert len(fields["redis_build_id"]) == 16 and int(fields["redis_build_id"], 16) >= 0
    assert fields["process_supervised"] == "no" and fields["io_threads_active"] == "0"
    assert fields["gcc_version"].count(".") == 2
    assert "# Clients" not in out
    code, out = cli(cte_server, "info")
    assert code == 0
    for section in ("# Server", "# Clients", "# Memory", "# Persistence", "# Stats",
                    "# Keyspace"):
        assert section in out, section


def test_cli_against_a_password_protected_server(server_factory):
    s = server_factory(["--requirepass", "pw"])
    pw, s.password = s.password, None
    assert cli(s, "--no-raw", "get", "k") == \
        (0, "(error) NOAUTH Authentication required.\n")
    s.password = pw
    assert cli(s, "set", "k", "v") == (0, "OK\n")
    assert cli(s, "get", "k", unix=True) == (0, "v\n")
