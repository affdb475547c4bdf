"""ACL users against the real server: AUTH as a user over TCP, the Unix socket and shared
memory, -NOPERM for commands, keys and channels with their ACL LOG entries, CLIENT LIST's user=
and CLIENT KILL USER, deleting a user closes its connections, requirepass as the default
user's password, users from the YAML config, the aclfile round trip (ACL SAVE / LOAD, long
lines, a missing file) and a server that refuses to start on a bad aclfile, naming the line;
passwords redacted in MONITOR and SLOWLOG, EXEC refused discarding the transaction, the
request bounds before AUTH, the ACL LOG bound, TQUERY BLOBS / TSEARCH needing every key.

Every expectation here is Redis 7.0's: CTE_SERVER=/usr/bin/redis-server runs the file against
Redis (the shared-memory test and the YAML config then skip themselves)."""
import glob
import os
import sys
import time

import pytest
import redis

from conftest import (CTE_KIND, CTE_SERVER, R, ROOT, SANITIZE, RespConn, encode_command,
                      start_cte)

NOPERM_CMD = b"NOPERM this user has no permissions to run the '%s' command"
NOPERM_KEY = b"NOPERM this user has no permissions to access one of the keys used as arguments"
NOPERM_CHANNEL = (b"NOPERM this user has no permissions to access one of the channels used as "
                  b"arguments")
WRONGPASS = b"WRONGPASS invalid username-password pair or user is disabled."


@pytest.fixture
def server(cte_server):
    """The session's server, with only the default user before and after the test."""
    c = cte_server.conn()
    yield cte_server
    c.call("AUTH", "default", "x")
    for name in c.py("ACL", "USERS"):
        if name != b"default":
            c.call("ACL", "DELUSER", name)
    c.call("ACL", "SETUSER", "default", "on", "nopass", "clearselectors", "resetkeys", "~*",
           "resetchannels", "&*", "+@all")
    assert c.py("ACL", "LIST") == [b"user default on nopass ~* &* +@all"]
    c.call("ACL", "LOG", "RESET")
    c.close()


def err(r):
    assert r.kind == "-", r
    return r.val


def log_entries(conn):
    out = []
    for e in conn.py("ACL", "LOG"):
        if isinstance(e, dict):
            out.append({k.decode(): v for k, v in e.items()})
        else:
            out.append({e[i].decode(): e[i + 1] for i in range(0, len(e), 2)})
    return out


def test_users_authenticate_and_are_confined_over_tcp_and_unix(server, transport):
    admin = server.conn()
    assert admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~cache:*", "+get", "+set",
                      "+acl|whoami") == R("+", b"OK")
    c = server.conn(unix=transport == "unix")
    assert err(c.call("AUTH", "alice", "nope")) == WRONGPASS
    assert err(c.call("AUTH", "nobody", "pw")) == WRONGPASS
    assert c.call("AUTH", "alice", "pw") == R("+", b"OK")
    assert c.call("ACL", "WHOAMI") == R("$", b"alice")
    assert c.call("SET", "cache:1", "v") == R("+", b"OK")
    assert c.call("GET", "cache:1") == R("$", b"v")
    assert err(c.call("GET", "other")) == NOPERM_KEY
    assert err(c.call("DEL", "cache:1")) == NOPERM_CMD % b"del"
    assert err(c.call("CLIENT", "KILL", "ID", "1")) == NOPERM_CMD % b"client|kill"
    entries = log_entries(admin)
    assert [(e["reason"], e["object"], e["username"], e["context"]) for e in entries[:4]] == [
        (b"command", b"client|kill", b"alice", b"toplevel"),
        (b"command", b"del", b"alice", b"toplevel"),
        (b"key", b"other", b"alice", b"toplevel"),
        (b"auth", b"AUTH", b"nobody", b"toplevel")]
    assert set(entries[0]) == {"count", "reason", "context", "object", "username",
                               "age-seconds", "client-info"}
    assert b"user=alice" in entries[0]["client-info"]
    c.close()
    admin.close()


def test_scripts_run_with_the_callers_permissions(server):
    """redis.call and FCALL's calls are checked against the user who called the script, with
    Redis 7.0's script wording and ACL LOG entries in context lua; redis.acl_check_cmd
    answers for that user."""
    admin = server.conn()
    assert admin.call("ACL", "SETUSER", "sam", "on", ">pw", "~a*", "+eval", "+get",
                      "+fcall", "+function|load") == R("+", b"OK")
    admin.call("FUNCTION", "LOAD", "REPLACE", "#!lua name=acltest\n"
               "redis.register_function('setit', function(k, a) "
               "return redis.call('set', k[1], a[1]) end)")
    c = server.conn()
    assert c.call("AUTH", "sam", "pw") == R("+", b"OK")
    assert c.call("EVAL", "return redis.call('get', KEYS[1])", "1", "a1") == R("$", None)
    e = err(c.call("EVAL", "return redis.call('get', 'b1')", "0"))
    assert e.startswith(b"ERR The user executing the script can't access at least one of the "
                        b"keys mentioned in the command"), e
    e = err(c.call("EVAL", "return redis.call('set', 'a1', 'x')", "0"))
    assert e.startswith(b"ERR The user executing the script can't run this command or "
                        b"subcommand"), e
    assert err(c.call("FCALL", "setit", "1", "a1", "v")).startswith(
        b"ERR The user executing the script can't run this command or subcommand")
    assert c.call("EVAL", "return redis.acl_check_cmd('set', 'a1', 'x')", "0") == R("$", None)
    assert c.call("EVAL", "return redis.acl_check_cmd('get', 'a1')", "0") == R(":", 1)
    assert admin.call("GET", "a1") == R("$", None)
    entries = log_entries(admin)
    # the two denials of SET (EVAL's and FCALL's) are one entry counted twice, as in Redis
    assert [(e["reason"], e["object"], e["context"], e["count"]) for e in entries[:2]] == [
        (b"command", b"set", b"lua", 2), (b"key", b"b1", b"lua", 1)]
    admin.call("FUNCTION", "DELETE", "acltest")
    c.close()
    admin.close()


def test_hello_auth_and_resp3_getuser(server):
    admin = server.conn()
    admin.call("ACL", "SETUSER", "bob", "on", "#" + "5e884898da28047151d0e56f8dc6292773603d0d6a"
               "abbdd62a11ef721d1542d8", "allkeys", "+@all", "-@dangerous")
    c = server.conn()
    assert err(c.call("HELLO", "3", "AUTH", "bob", "wrong")) == WRONGPASS
    r = c.call("HELLO", "3", "AUTH", "bob", "password")
    assert r.kind == "%"
    assert err(c.call("FLUSHALL")) == NOPERM_CMD % b"flushall"
    admin.call("HELLO", "3")
    u = admin.py("ACL", "GETUSER", "bob")
    assert list(u) == [b"flags", b"passwords", b"commands", b"keys", b"channels", b"selectors"]
    assert u[b"flags"] == [b"on"]
    assert u[b"commands"] == b"+@all -@dangerous"
    assert u[b"keys"] == b"~*" and u[b"channels"] == b"" and u[b"selectors"] == []
    assert log_entries(admin)[-1]["object"] == b"HELLO"
    c.close()
    admin.close()


def test_channels_are_checked_and_revoking_them_disconnects_subscribers(server):
    admin = server.conn()
    admin.call("ACL", "SETUSER", "ps", "on", "nopass", "+@all", "resetchannels", "&news.*")
    c = server.conn()
    c.call("AUTH", "ps", "x")
    assert c.call("PUBLISH", "news.1", "m") == R(":", 0)
    assert err(c.call("PUBLISH", "other", "m")) == NOPERM_CHANNEL
    assert err(c.call("SUBSCRIBE", "news.a", "other")) == NOPERM_CHANNEL
    assert err(c.call("PSUBSCRIBE", "news.1*")) == NOPERM_CHANNEL
    assert log_entries(admin)[0]["object"] == b"news.1*"
    c.send("PSUBSCRIBE", "news.*")
    assert c.read_reply()[0].val[0].val == b"psubscribe"
    # widening keeps the subscriber, taking the pattern away closes it
    admin.call("ACL", "SETUSER", "ps", "&more")
    assert admin.call("PING") == R("+", b"PONG")
    assert not c.is_closed_by_peer(timeout=0.3)
    admin.call("ACL", "SETUSER", "ps", "resetchannels")
    assert c.is_closed_by_peer()
    c.close()
    admin.close()


def test_deleting_a_user_closes_its_connections_and_client_kill_user(server):
    admin = server.conn()
    admin.call("ACL", "SETUSER", "carol", "on", "nopass", "+@all", "~*")
    a, b = server.conn(), server.conn(unix=True)
    for x in (a, b):
        assert x.call("AUTH", "carol", "x") == R("+", b"OK")
        x.call("CLIENT", "SETNAME", "carol-conn")
    listing = admin.py("CLIENT", "LIST")
    assert listing.count(b"user=carol") == 2
    assert admin.call("CLIENT", "KILL", "USER", "carol") == R(":", 2)
    assert a.is_closed_by_peer() and b.is_closed_by_peer()
    assert err(admin.call("CLIENT", "KILL", "USER", "nobody")) == b"ERR No such user 'nobody'"
    d = server.conn()
    d.call("AUTH", "carol", "x")
    assert admin.call("ACL", "DELUSER", "carol", "nobody") == R(":", 1)
    assert d.is_closed_by_peer()
    # a client deleting its own user gets the reply, then the connection closes
    admin.call("ACL", "SETUSER", "self", "on", "nopass", "+@all")
    e = server.conn()
    e.call("AUTH", "self", "x")
    assert e.call("ACL", "DELUSER", "self") == R(":", 1)
    assert e.is_closed_by_peer()
    for x in (a, b, d, e):
        x.close()
    admin.close()


def test_requirepass_is_the_default_users_password(server_factory):
    s = server_factory(["--requirepass", "s3cret"])
    c = s.conn(auth=False)
    assert err(c.call("PING")) == b"NOAUTH Authentication required."
    assert err(c.call("AUTH", "wrong")) == WRONGPASS
    assert c.call("AUTH", "default", "s3cret") == R("+", b"OK")
    line = c.py("ACL", "LIST")[0]
    assert line.startswith(b"user default on #") and b"s3cret" not in line
    assert c.call("CONFIG", "SET", "requirepass", "") == R("+", b"OK")
    assert s.conn(auth=False).call("PING") == R("+", b"PONG")
    assert c.py("ACL", "LIST") == [b"user default on nopass ~* &* +@all"]
    # the default user switched off: new connections must authenticate as someone else
    c.call("ACL", "SETUSER", "admin", "on", ">a", "+@all", "~*")
    c.call("ACL", "SETUSER", "default", "off")
    n = s.conn(auth=False)
    assert err(n.call("PING")) == b"NOAUTH Authentication required."
    assert n.call("AUTH", "admin", "a") == R("+", b"OK")
    n.call("ACL", "SETUSER", "default", "on")
    c.close()
    n.close()


def test_aclfile_save_and_load_round_trip(tmp_path, server_factory):
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\n"
                   "\n"
                   "user alice on #%s ~cache:* resetchannels -@all +get\n" % ("a" * 64))
    s = server_factory(["--aclfile", str(acl)])
    c = s.conn()
    assert c.py("ACL", "USERS") == [b"alice", b"default"]
    c.call("ACL", "SETUSER", "eve", "on", ">eve", "+get", "allkeys", "(~x +set)")
    assert c.call("ACL", "SAVE") == R("+", b"OK")
    saved = acl.read_text()
    assert "user eve on #" in saved and "(~x resetchannels -@all +set)" in saved
    c.call("ACL", "DELUSER", "eve")
    e = s.conn()
    e.call("AUTH", "alice", "x")  # wrong: stays default
    assert c.call("ACL", "LOAD") == R("+", b"OK")
    assert c.py("ACL", "USERS") == [b"alice", b"default", b"eve"]
    assert e.call("PING") == R("+", b"PONG")  # default's clients stay
    # a bad file changes nothing and the error names the line
    acl.write_text(saved + "user bad on +nosuchcommand\nuser alice on\n# no comments\n")
    r = err(c.call("ACL", "LOAD"))
    assert b":%d: Error in applying operation '+nosuchcommand': Unknown command" % (
        saved.count("\n") + 1) in r, r
    assert b"Duplicate user 'alice'" in r
    assert b":%d should start with user keyword" % (saved.count("\n") + 3) in r, r
    assert c.py("ACL", "USERS") == [b"alice", b"default", b"eve"]
    c.close()
    e.close()


def test_a_bad_aclfile_stops_the_start_naming_the_line(tmp_path):
    acl = tmp_path / "bad.acl"
    acl.write_text("user alice on >pw ~*\nuser bob on ~x +@nosuch\n")
    with pytest.raises(Exception) as e:
        start_cte(["--aclfile", str(acl)], name="cte-server(bad aclfile)")
    assert ":2:" in str(e.value), str(e.value)


@pytest.mark.skipif(CTE_KIND != "cte", reason="`users:` is our YAML config")
def test_users_from_the_yaml_config(tmp_path, server_factory):
    cfg = tmp_path / "cte.yaml"
    cfg.write_text('users:\n  - "alice on >pw ~* +@all -flushdb"\n'
                   '  - "default on nopass ~* &* +@all"\n')
    s = server_factory([str(cfg)])
    c = s.conn()
    assert c.py("ACL", "USERS") == [b"alice", b"default"]
    assert c.call("AUTH", "alice", "pw") == R("+", b"OK")
    assert err(c.call("FLUSHDB")) == NOPERM_CMD % b"flushdb"
    c.close()
    bad = tmp_path / "bad.yaml"
    bad.write_text('users: ["alice on >pw", "alice on"]\n')
    with pytest.raises(Exception) as e:
        start_cte([str(bad)], name="cte-server(duplicate users)")
    assert "Duplicate user 'alice'" in str(e.value)


# ---- shared memory: the cte module's shm: addresses ---------------------------------------

BUILD = os.path.dirname(os.path.abspath(CTE_SERVER))
EXT = glob.glob(os.path.join(BUILD, "python", "cte", "_cte.*so"))


def _asan_loaded():
    with open("/proc/self/maps") as f:
        return "libasan" in f.read()


@pytest.mark.skipif(CTE_KIND != "cte" or not EXT or (SANITIZE and not _asan_loaded()),
                    reason="needs the cte Python module (shm: transport) of a non-ASan build")
def test_users_over_shared_memory(server):
    os.environ["CTE_BUILD_DIR"] = BUILD
    sys.path.insert(0, str(ROOT / "python"))
    import cte
    admin = server.conn()
    admin.call("ACL", "SETUSER", "shm-user", "on", ">pw", "~t*", "+@all", "-@dangerous")
    with pytest.raises(cte.AuthenticationError, match="WRONGPASS"):
        cte.Client("shm:%s?user=shm-user&password=nope" % server.unixsocket)
    with cte.Client("shm:%s?user=shm-user&password=pw" % server.unixsocket) as c:
        assert c.command("ACL", "WHOAMI") in (b"shm-user", "shm-user")
        assert c.tag("t1").put_blob("b", b"x") == 1
        with pytest.raises(Exception, match="NOPERM"):
            c.command("GET", "other")
        with pytest.raises(Exception, match="NOPERM"):
            c.command("FLUSHALL")
    assert b"transport=shm" in log_entries(admin)[0]["client-info"]
    admin.close()


@pytest.mark.skipif(CTE_KIND != "cte", reason="`users:` is our YAML config")
def test_config_rewrite_keeps_the_users(tmp_path, server_factory):
    cfg = tmp_path / "cte.yaml"
    cfg.write_text('users: ["default on nopass ~* &* +@all -flushdb"]\n')
    s = server_factory([str(cfg)])
    c = s.conn()
    assert err(c.call("FLUSHDB")) == NOPERM_CMD % b"flushdb"
    c.call("ACL", "SETUSER", "zed", "on", ">z", "~z*", "+get")
    assert c.call("CONFIG", "REWRITE") == R("+", b"OK")
    c.close()
    s.restart_same_dir()
    c = s.conn()
    assert err(c.call("FLUSHDB")) == NOPERM_CMD % b"flushdb"
    assert c.py("ACL", "USERS") == [b"default", b"zed"]
    assert c.call("AUTH", "zed", "z") == R("+", b"OK")
    c.close()


def test_an_aclfile_line_with_many_rules_loads_whole(tmp_path, server_factory):
    acl = tmp_path / "users.acl"
    patterns = " ".join("~k%d" % i for i in range(1500))
    acl.write_text("user default on nopass ~* &* +@all\n"
                   "user many on nopass %s +@all -@dangerous\n" % patterns)
    s = server_factory(["--aclfile", str(acl)])
    c = s.conn()
    u = c.py("ACL", "GETUSER", "many")
    u = dict(zip(u[::2], u[1::2])) if isinstance(u, list) else u
    assert len(u[b"keys"].split()) == 1500
    assert u[b"commands"] == b"+@all -@dangerous"  # the last rules count too
    c.call("ACL", "SETUSER", "many", "~extra")
    assert c.call("ACL", "SAVE") == R("+", b"OK")
    assert c.call("ACL", "LOAD") == R("+", b"OK")
    u = c.py("ACL", "GETUSER", "many")
    u = dict(zip(u[::2], u[1::2])) if isinstance(u, list) else u
    assert len(u[b"keys"].split()) == 1501 and u[b"commands"] == b"+@all -@dangerous"
    c.close()


def _read_monitor(m, until):
    """The MONITOR lines m received up to and including the one holding until."""
    lines = []
    while True:
        r = m.read_reply()[0]
        lines.append(r.val)
        if until in r.val:
            return lines


def test_passwords_never_reach_monitor_or_the_slow_log(server):
    admin = server.conn()
    admin.call("ACL", "SETUSER", "mu", "on", ">sekrit1", "+@all", "~*")
    admin.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    admin.call("SLOWLOG", "RESET")
    m = server.conn()
    assert m.call("MONITOR") == R("+", b"OK")
    c = server.conn()
    c.call("AUTH", "mu", "sekrit1")
    c.call("AUTH", "mu", "sekrit2")
    c.call("HELLO", "2", "AUTH", "mu", "sekrit1")
    c.call("ACL", "SETUSER", "mu", ">sekrit3")
    c.call("CONFIG", "SET", "requirepass", "sekrit4")
    c.call("AUTH", "sekrit4")
    c.call("CONFIG", "SET", "requirepass", "")
    c.call("SET", "done", "1")
    fed = b"\n".join(_read_monitor(m, b'"done"'))
    assert b'"AUTH" "(redacted)" "(redacted)"' in fed, fed
    assert b'"HELLO" "2" "AUTH" "(redacted)" "(redacted)"' in fed, fed
    assert b'"ACL"' not in fed and b'"CONFIG"' not in fed  # admin commands are not fed
    slow = admin.py("SLOWLOG", "GET", "-1")
    admin.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    args = [e[3] for e in slow]
    assert [b"acl", b"setuser", b"(redacted)", b"(redacted)"] in [
        [a.lower() if i < 2 else a for i, a in enumerate(x)] for x in args], args
    assert [b"CONFIG", b"SET", b"requirepass", b"(redacted)"] in args, args
    for secret in (b"sekrit1", b"sekrit2", b"sekrit3", b"sekrit4"):
        assert secret not in fed and secret not in repr(slow).encode(), secret
    for x in (m, c, admin):
        x.close()


def test_an_exec_the_user_may_not_run_discards_the_transaction(server):
    admin = server.conn()
    admin.call("ACL", "SETUSER", "tx", "on", "nopass", "~*", "+@all", "-exec")
    c = server.conn()
    c.call("AUTH", "tx", "x")
    assert c.call("MULTI") == R("+", b"OK")
    assert c.call("SET", "txk", "1") == R("+", b"QUEUED")
    assert err(c.call("EXEC")) == (b"EXECABORT Transaction discarded because of: NOPERM this "
                                   b"user has no permissions to run the 'exec' command")
    assert c.call("GET", "txk") == R("$", None)  # no longer in MULTI, nothing ran
    assert err(c.call("EXEC")).startswith(b"EXECABORT Transaction discarded because of: NOPERM")
    e = log_entries(admin)[0]
    assert (e["reason"], e["object"], e["context"]) == (b"command", b"exec", b"toplevel")
    # the arity check aborts the same way
    admin.call("MULTI")
    admin.call("SET", "txk", "2")
    assert err(admin.call("EXEC", "x")) == (b"EXECABORT Transaction discarded because of: "
                                            b"wrong number of arguments for 'exec' command")
    assert admin.call("GET", "txk") == R("$", None)
    c.close()
    admin.close()


def test_watch_needs_neither_read_nor_write_access(server):
    admin = server.conn()
    admin.call("ACL", "SETUSER", "rd", "on", "nopass", "+@all", "%R~*")
    admin.call("ACL", "SETUSER", "wr", "on", "nopass", "+@all", "%W~*")
    for user in ("rd", "wr"):  # WATCH only looks at its keys, as EXISTS does
        assert admin.call("ACL", "DRYRUN", user, "WATCH", "a", "b") == R("+", b"OK")
        c = server.conn()
        c.call("AUTH", user, "x")
        assert c.call("WATCH", "a") == R("+", b"OK")
        c.close()
    admin.close()


def test_dryrun_of_a_container_without_subcommand_is_an_arity_error(server):
    admin = server.conn()
    admin.call("ACL", "SETUSER", "rd", "on", "nopass", "+@all")
    assert err(admin.call("ACL", "DRYRUN", "rd", "CONFIG")) == (
        b"ERR wrong number of arguments for 'config' command")
    assert err(admin.call("ACL", "DRYRUN", "rd", "CONFIG", "NOSUCH")) == (
        b"ERR Command 'CONFIG' not found")
    admin.close()


@pytest.mark.skipif(CTE_KIND != "cte", reason="tags are cte-server's")
def test_tag_searches_need_read_access_to_every_key(server):
    admin = server.conn()
    admin.call("TPUT", "secret", "b1", "0", "launch codes alpha")
    admin.call("TPUT", "foo1", "b", "0", "hello alpha")
    admin.call("ACL", "SETUSER", "lim", "on", "nopass", "~foo*", "+@all")
    admin.call("ACL", "SETUSER", "reader", "on", "nopass", "%R~*", "+@all")
    c = server.conn()
    c.call("AUTH", "lim", "x")
    denied = (b"NOPERM this user has no permissions to read every key, which %s needs (it "
              b"reaches the blobs of every tag)")
    assert err(c.call("TSEARCH", "alpha")) == denied % b"TSEARCH"
    assert err(c.call("TQUERY", "BLOBS", ".*", ".*")) == denied % b"TQUERY BLOBS"
    assert c.py("TQUERY", "TAGS", ".*")[0] == 2  # names only, as KEYS
    assert c.call("TGET", "foo1", "b") == R("$", b"hello alpha")
    c.call("MULTI")
    c.call("TSEARCH", "alpha")
    assert err(c.call("EXEC").val[0]) == denied % b"TSEARCH"
    c.call("AUTH", "reader", "x")
    assert len(c.py("TSEARCH", "alpha")) == 2
    assert c.py("TQUERY", "BLOBS", ".*", ".*")[0] == 2
    admin.call("DEL", "secret", "foo1")
    c.close()
    admin.close()


def test_hello_before_auth_names_the_auth_option_as_redis(server_factory):
    s = server_factory(["--requirepass", "pw"])
    c = s.conn(auth=False)
    assert err(c.call("HELLO", "3")) == (
        b"NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        b"HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
        b"the RESP protocol version at the same time")
    assert c.call("HELLO", "2", "AUTH", "default", "pw").kind == "*"
    c.close()


def test_before_auth_requests_are_small_as_redis_allows(server_factory):
    """Redis 7.0 lets a client that must still authenticate send at most 10 arguments of at
    most 16384 bytes (so a stranger cannot make it buffer, or log, huge AUTH arguments)."""
    s = server_factory(["--requirepass", "pw"])
    for payload, why in ((b"*11\r\n", b"multibulk"),
                         (b"*3\r\n$4\r\nAUTH\r\n$16385\r\n", b"bulk")):
        c = s.conn(auth=False)
        c.sock.sendall(payload)
        assert c.read_reply()[0] == R("-", b"ERR Protocol error: unauthenticated %s length" % why)
        assert c.is_closed_by_peer()
        c.close()
    c = s.conn(auth=False)
    assert err(c.call("AUTH", "u" * 16384, "pw")) == WRONGPASS  # at the limit: an answer
    assert c.call("AUTH", "pw") == R("+", b"OK")
    assert c.call("SET", "big", "v" * 100000) == R("+", b"OK")  # authenticated: no limit
    assert c.call("DEL", "big") == R(":", 1)
    c.close()


@pytest.mark.skipif(CTE_KIND != "cte", reason="`users:` is our YAML config")
def test_config_rewrite_of_thousands_of_users_starts_again(tmp_path, server_factory):
    cfg = tmp_path / "cte.yaml"
    cfg.write_text("users: []\n")
    s = server_factory([str(cfg)])
    c = s.conn()
    n = 5000
    c.sock.sendall(b"".join(encode_command("ACL", "SETUSER", "u%d" % i, "on", "nopass")
                            for i in range(n)))
    for _ in range(n):
        assert c.read_reply()[0] == R("+", b"OK")
    assert c.call("CONFIG", "REWRITE") == R("+", b"OK")
    c.close()
    s.restart_same_dir()
    c = s.conn()
    assert len(c.py("ACL", "USERS")) == n + 1
    c.close()


def test_the_acl_log_keeps_acllog_max_len_entries(server):
    admin = server.conn()
    assert admin.call("CONFIG", "SET", "acllog-max-len", "3") == R("+", b"OK")
    try:
        c = server.conn()
        for i in range(10):  # distinct user names: ten entries, the newest three kept
            assert err(c.call("AUTH", "nobody%d" % i, "x")) == WRONGPASS
        assert err(c.call("AUTH", "nobody9", "x")) == WRONGPASS  # a repeat counts up
        entries = log_entries(admin)
        assert [(e["username"], e["count"]) for e in entries] == [
            (b"nobody9", 2), (b"nobody8", 1), (b"nobody7", 1)]
        admin.call("CONFIG", "SET", "acllog-max-len", "1")  # as Redis: trimmed at the next
        assert len(log_entries(admin)) == 3
        assert err(c.call("AUTH", "nobody10", "x")) == WRONGPASS
        assert [e["username"] for e in log_entries(admin)] == [b"nobody10"]
        c.close()
    finally:
        admin.call("CONFIG", "SET", "acllog-max-len", "128")
        admin.close()


def test_acl_load_of_a_missing_aclfile_says_why(tmp_path, server_factory):
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\nuser alice on\n")
    s = server_factory(["--aclfile", str(acl)])
    c = s.conn()
    acl.unlink()
    assert err(c.call("ACL", "LOAD")) == (
        b"ERR Error loading ACLs, opening file '%s': No such file or directory" % str(acl).encode())
    assert c.py("ACL", "USERS") == [b"alice", b"default"]
    acl.write_text("user default on nopass ~* &* +@all\n")
    c.close()


def test_a_command_held_by_client_pause_is_checked_again_when_it_runs(server):
    admin = server.conn()
    admin.call("ACL", "SETUSER", "paused", "on", "nopass", "~*", "+@all")
    c = server.conn()
    c.call("AUTH", "paused", "x")
    assert admin.call("CLIENT", "PAUSE", "10000", "WRITE") == R("+", b"OK")
    try:
        c.send("SET", "pausedkey", "v")
        time.sleep(0.2)
        admin.call("ACL", "SETUSER", "paused", "-set")
    finally:
        admin.call("CLIENT", "UNPAUSE")
    assert err(c.read_reply()[0]) == NOPERM_CMD % b"set"
    assert admin.call("GET", "pausedkey") == R("$", None)
    c.close()
    admin.close()
