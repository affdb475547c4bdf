"""Lua scripting and functions against the real binary (server/script): EVAL and EVALSHA with
the script cache, the conversions seen through redis-py, error wording, the sandbox, busy
scripts and SCRIPT KILL from another connection, writes refused to read-only scripts and under
maxmemory, redis-py's Lock (EVALSHA), a job queue written as a script, FUNCTION LOAD/FCALL,
DUMP/RESTORE, and the libraries and script effects surviving a restart through the
append-only file (and its rewrite)."""
import hashlib
import random
import signal
import threading
import time

import pytest
import redis
from redis.exceptions import LockError, NoScriptError, ResponseError

from conftest import CTE_KIND, start_cte

LIB = """#!lua name=queue
local function push(keys, args)
  return redis.call('RPUSH', keys[1], args[1])
end
local function claim(keys, args)
  local job = redis.call('LPOP', keys[1])
  if not job then return false end
  redis.call('HSET', keys[2], job, args[1])
  return job
end
redis.register_function('qpush', push)
redis.register_function{function_name='qclaim', callback=claim}
redis.register_function{function_name='qlen', flags={'no-writes'},
  callback=function(keys) return redis.call('LLEN', keys[1]) end}
"""


@pytest.fixture
def r(cte_server):
    c = cte_server.redis()
    c.script_flush()
    c.function_flush()
    yield c
    c.config_set("busy-reply-threshold", 5000)
    c.config_set("maxmemory", 0)
    c.close()


def test_eval_returns_each_lua_type_converted(r):
    assert r.eval("return 'hello'", 0) == b"hello"
    assert r.eval("return 100.5", 0) == 100
    assert r.eval("return true", 0) == 1
    assert r.eval("return false", 0) is None
    assert r.eval("return {ok='fine'}", 0) == b"fine"
    assert r.eval("return {1,2,3,'ciao',{1,2}}", 0) == [1, 2, 3, b"ciao", [1, 2]]
    assert r.eval("return {1,nil,3}", 0) == [1]
    assert r.eval("return {KEYS[1],KEYS[2],ARGV[1],ARGV[2]}", 2, "a", "b", "c", "d") == \
        [b"a", b"b", b"c", b"d"]
    with pytest.raises(ResponseError, match="^this is an error$"):
        r.eval("return {err='ERR this is an error'}", 0)


def test_redis_replies_become_lua_values(r):
    r.set("x", 5)
    assert r.eval("local v = redis.call('GET', KEYS[1]); return type(v) .. v", 1, "x") == \
        b"string5"
    assert r.eval("return type(redis.call('GET', 'nokey'))", 0) == b"boolean"
    assert r.eval("return redis.call('SET', 'y', 1).ok", 0) == b"OK"
    assert r.eval("return redis.pcall('LPUSH', 'x', 1).err", 0) == \
        b"WRONGTYPE Operation against a key holding the wrong kind of value"
    r.hset("h", "f", "v")
    assert r.eval("redis.setresp(3); return redis.call('HGETALL', 'h').map.f", 0) == b"v"


def test_evalsha_and_the_script_cache(r):
    sha = r.script_load("return 'loaded'")
    assert sha == "b534286061d4b9e4026607613b95c06c06015ae8"
    assert r.evalsha(sha, 0) == b"loaded"
    assert r.evalsha(sha.upper(), 0) == b"loaded"
    assert r.script_exists(sha, "f" * 40) == [True, False]
    r.script_flush()
    with pytest.raises(NoScriptError):
        r.evalsha(sha, 0)
    assert r.info("memory")["number_of_cached_scripts"] == 0


def test_errors_are_worded_as_redis(r):
    body = "return redis.call('SELECT', 99)"
    with pytest.raises(ResponseError) as e:
        r.eval(body, 0)
    assert str(e.value) == ("DB index is out of range script: %s, on @user_script:1." %
                            hashlib.sha1(body.encode()).hexdigest())
    for body, want in [
        ("return a", "Script attempted to access nonexistent global variable 'a'"),
        ("a = 1", "Attempt to modify a readonly table"),
        ("return 1 +", "Error compiling script (new function): user_script:1:"),
        ("redis.call('nosuch')", "Unknown Redis command called from script"),
        ("redis.call('GET')", "Wrong number of args calling Redis command from script"),
        ("redis.call('MULTI')", "This Redis command is not allowed from script"),
        ("redis.call('BLPOP', 'l', 0)", "This Redis command is not allowed from script"),
        ("return redis.call()", "Please specify at least one argument"),
        ("loadfile('x')", "nonexistent global variable 'loadfile'"),
        ("return loadstring(string.dump(function() return 1 end))()",
         "attempt to call a nil value"),
        ("redis.call = nil", "Attempt to modify a readonly table"),
        ("cjson.encode = nil", "Attempt to modify a readonly table"),
        ("setmetatable(_G, {})", "Attempt to modify a readonly table"),
        ("#!lua flags=bogus\nreturn 1", "Unexpected flag in script shebang: bogus"),
        ("#!lua", "Invalid script shebang"),
    ]:
        with pytest.raises(ResponseError, match=None) as e:
            r.eval(body, 0)
        assert want in str(e.value), (body, str(e.value))
    with pytest.raises(ResponseError, match="Number of keys can't be negative"):
        r.eval("return 1", -1)


def test_read_only_scripts_refuse_writes(r):
    with pytest.raises(ResponseError, match="Write commands are not allowed from read-only"):
        r.eval_ro("return redis.call('SET', 'x', 1)", 1, "x")
    with pytest.raises(ResponseError, match="Write commands are not allowed from read-only"):
        r.eval("#!lua flags=no-writes\nreturn redis.call('SET', 'x', 1)", 0)
    with pytest.raises(ResponseError, match="Can not execute a script with write flag"):
        r.eval_ro("#!lua\nreturn 1", 0)
    assert r.get("x") is None


def test_out_of_memory_refuses_scripts_that_may_write(r):
    r.config_set("maxmemory", 1)
    with pytest.raises(ResponseError, match="OOM command not allowed"):
        r.eval("return redis.call('SET', 'x', 1)", 0)
    with pytest.raises(ResponseError, match="OOM command not allowed"):
        r.eval("#!lua\nreturn 1", 0)
    assert r.eval("#!lua flags=allow-oom\nreturn redis.call('SET', 'x', 1).ok", 0) == b"OK"
    assert r.eval("#!lua flags=no-writes\nreturn 2", 0) == 2
    r.config_set("maxmemory", 0)


def _wait_blocked(r, n, timeout=5):
    deadline = time.time() + timeout
    while r.info("clients")["blocked_clients"] != n:
        assert time.time() < deadline, "blocked_clients never reached %d" % n
        time.sleep(0.01)


def test_client_pause_write_holds_scripts_by_their_flags(cte_server, r):
    """CLIENT PAUSE WRITE judges EVAL, EVALSHA and FCALL by the flags of the script they run,
    as Redis 7.0 (scriptFlagsToCmdFlags): a no-writes script or function and EVAL_RO run, in
    MULTI too; a script that may write (a plain shebang, or none: EVAL may replicate) and a
    transaction that queued one wait for the pause to end."""
    r.function_load(LIB)
    sha = r.script_load("#!lua flags=no-writes\nreturn 'ro'")
    free = cte_server.conn(timeout=5)
    held = [cte_server.conn(timeout=5) for _ in range(3)]
    assert held[2].call("MULTI").val == b"OK"
    assert held[2].call("EVAL", "#!lua\nreturn 'tx'", 0).val == b"QUEUED"
    r.execute_command("CLIENT", "PAUSE", 60000, "WRITE")
    try:
        assert free.call("EVAL", "#!lua flags=no-writes\nreturn 'new'", 0).val == b"new"
        assert free.call("EVALSHA", sha, 0).val == b"ro"
        assert free.call("EVAL_RO", "return 'ro'", 0).val == b"ro"
        assert free.call("FCALL", "qlen", 1, "q").val == 0
        assert free.call("MULTI").val == b"OK"
        assert free.call("FCALL", "qlen", 1, "q").val == b"QUEUED"
        assert free.py("EXEC") == [0]
        held[0].send("EVAL", "#!lua\nreturn 'shebang'", 0)
        held[1].send("EVAL", "return 'compat'", 0)
        held[2].send("EXEC")
        _wait_blocked(r, 3)
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert held[0].read_reply()[0].val == b"shebang"
    assert held[1].read_reply()[0].val == b"compat"
    assert held[2].read_reply()[0].val[0].val == b"tx"
    for c in held + [free]:
        c.close()


def test_out_of_memory_judges_functions_and_transactions_by_their_flags(cte_server, r):
    """Under maxmemory, FCALL of a function that may write is refused before it runs (its call
    is deny-oom, as Redis's), a no-writes one runs; so does EXEC by what it queued."""
    r.function_load(LIB)
    ro, rw = cte_server.conn(), cte_server.conn()  # transactions queued before the OOM
    for c, body in ((ro, "#!lua flags=no-writes\nreturn 1"), (rw, "#!lua\nreturn 2")):
        assert c.call("MULTI").val == b"OK"
        assert c.call("EVAL", body, 0).val == b"QUEUED"
    r.config_set("maxmemory", 1)
    try:
        with pytest.raises(ResponseError, match="^OOM command not allowed"):
            r.fcall("qpush", 1, "q", "x")
        assert r.fcall("qlen", 1, "q") == 0
        assert ro.py("EXEC") == [1]
        assert rw.call("EXEC").val.startswith(
            b"EXECABORT Transaction discarded because of: OOM command not allowed")
    finally:
        r.config_set("maxmemory", 0)
    assert r.llen("q") == 0


def test_select_inside_a_script_does_not_change_the_caller(r):
    r.set("k", "db0")
    assert r.eval("redis.call('SELECT', 1); redis.call('SET', 'k', 'db1'); "
                  "return redis.call('GET', 'k')", 0) == b"db1"
    assert r.get("k") == b"db0"
    r.execute_command("SELECT", 1)
    assert r.get("k") == b"db1"
    r.execute_command("FLUSHDB")
    r.execute_command("SELECT", 0)


def test_exec_during_a_busy_script_aborts_the_transaction(cte_server, r):
    """As Redis 7.0: a command refused with -BUSY inside MULTI flags the transaction, and EXEC
    itself, refused while the script runs, answers EXECABORT ... BUSY and discards it."""
    r.config_set("busy-reply-threshold", 50)
    killer = cte_server.redis()
    killer.ping()
    tx = cte_server.conn()
    assert tx.call("MULTI").val == b"OK"
    assert tx.call("SET", "busy-tx", "1").val == b"QUEUED"
    t = threading.Thread(target=lambda: _eval_ignoring_kill(cte_server))
    t.start()
    deadline = time.time() + 10
    while True:
        rep = tx.call("INCR", "busy-tx")
        if rep.kind == "-":
            assert rep.val.startswith(b"BUSY Redis is busy running a script"), rep
            break
        assert time.time() < deadline, "the script never made the server busy"
        time.sleep(0.02)
    rep = tx.call("EXEC")
    assert rep.kind == "-" and rep.val.startswith(
        b"EXECABORT Transaction discarded because of: BUSY"), rep
    assert killer.script_kill()
    t.join(10)
    assert tx.call("GET", "busy-tx").val is None  # discarded: nothing ran
    tx.close()


def _eval_ignoring_kill(server):
    try:
        server.redis().eval("while true do end", 0)
    except ResponseError:
        pass


def test_busy_script_is_killed_from_another_connection(cte_server, r):
    r.config_set("busy-reply-threshold", 50)
    other = cte_server.redis()
    other.ping()
    result = {}

    def run():
        try:
            cte_server.redis().eval("while true do end", 0)
        except ResponseError as e:
            result["err"] = str(e)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            other.ping()
            time.sleep(0.02)
        except ResponseError as e:
            assert str(e).startswith("BUSY Redis is busy running a script")
            break
    else:
        pytest.fail("the script never made the server busy")
    with pytest.raises(ResponseError, match="You can only call SCRIPT KILL"):
        other.function_kill()  # an EVAL is killed by SCRIPT KILL only
    with pytest.raises(ResponseError, match="You can only call SCRIPT KILL"):
        other.function_stats()
    assert other.script_kill()
    t.join(10)
    assert "Script killed by user with SCRIPT KILL" in result["err"]
    assert other.ping()
    other.close()


def test_a_script_that_wrote_cannot_be_killed(cte_server, r):
    r.config_set("busy-reply-threshold", 50)
    other = cte_server.redis()
    other.ping()
    done = threading.Event()

    def run():
        cte_server.redis().eval(
            "redis.call('SET', 'w', 1); local t = redis.call('TIME')[1] "
            "while tonumber(redis.call('TIME')[1]) < t + 2 do end return 1", 0)
        done.set()

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.5)
    with pytest.raises(ResponseError, match="UNKILLABLE"):
        other.script_kill()
    t.join(10)
    assert done.is_set()
    assert other.get("w") == b"1"
    other.close()


def test_redis_py_lock_uses_evalsha(r):
    lock = r.lock("resource", timeout=10)
    assert lock.acquire(blocking=False)
    assert not r.lock("resource", timeout=10).acquire(blocking=False)
    assert lock.extend(5)
    assert 10000 < r.pttl("resource") <= 15000
    lock.release()
    assert r.get("resource") is None
    with pytest.raises(LockError):
        lock.release()
    assert r.info("commandstats")["cmdstat_evalsha"]["calls"] >= 3


JOB_QUEUE = """
local job = redis.call('LPOP', KEYS[1])
if not job then return false end
redis.call('ZADD', KEYS[2], ARGV[1], job)
redis.call('HINCRBY', KEYS[3], 'claimed', 1)
return job
"""


def test_job_queue_script_moves_each_job_once(r):
    r.rpush("jobs", *["j%d" % i for i in range(50)])
    claim = r.register_script(JOB_QUEUE)
    got = []
    for i in range(60):
        job = claim(keys=["jobs", "running", "stats"], args=[i])
        if job is not None:
            got.append(job)
    assert got == [b"j%d" % i for i in range(50)]
    assert r.zcard("running") == 50
    assert r.hget("stats", "claimed") == b"50"


def test_cmsgpack_struct_cjson_bit_are_available(r):
    assert r.eval("return cjson.decode(ARGV[1]).a", 0, '{"a": 7}') == 7
    assert r.eval("local t = cmsgpack.unpack(cmsgpack.pack({1, 'x'})) return t[2]", 0) == b"x"
    assert r.eval("return struct.unpack('>I2', ARGV[1])", 0, b"\x01\x02") == 258
    assert r.eval("return bit.bxor(5, 3)", 0) == 6


def test_functions_load_call_list_and_delete(r):
    assert r.function_load(LIB) == b"queue"
    with pytest.raises(ResponseError, match="Library 'queue' already exists"):
        r.function_load(LIB)
    assert r.function_load(LIB, replace=True) == b"queue"
    assert r.fcall("qpush", 1, "q", "a") == 1
    assert r.fcall("QPUSH", 1, "q", "b") == 2  # function names ignore case
    assert r.fcall_ro("qlen", 1, "q") == 2
    with pytest.raises(ResponseError, match="Can not execute a script with write flag"):
        r.fcall_ro("qpush", 1, "q", "c")
    assert r.fcall("qclaim", 2, "q", "owners", "me") == b"a"
    lib = r.function_list()[0]
    assert lib[1] == b"queue" and lib[3] == b"LUA"
    names = sorted(f[1] for f in lib[5])
    assert names == [b"qclaim", b"qlen", b"qpush"]
    assert r.function_list(library="q*", withcode=True)[0][7] == LIB.encode()
    stats = r.function_stats()
    assert stats[3][1][1:4:2] == [1, 3]
    r.function_delete("queue")
    with pytest.raises(ResponseError, match="Function not found"):
        r.fcall("qpush", 1, "q", "x")


def test_function_load_errors(r):
    for code, want in [
        ("return 1", "Missing library metadata"),
        ("#!lua\nreturn 1", "Library name was not given"),
        ("#!lua name=a-b\nreturn 1", "Library names can only contain"),
        ("#!nolua name=x\nreturn 1", "Engine 'nolua' not found"),
        ("#!lua name=x\nreturn 1", "No functions registered"),
        ("#!lua name=x\nredis.call('PING')",
         "nonexistent global variable 'call'"),
        ("#!lua name=x\nredis.register_function('f', 1)",
         "second argument to redis.register_function must be a function"),
    ]:
        with pytest.raises(ResponseError) as e:
            r.function_load(code)
        assert want in str(e.value), (code, str(e.value))
    assert r.function_list() == []


def test_function_dump_and_restore(r):
    r.function_load(LIB)
    payload = r.function_dump()
    r.function_flush()
    assert r.function_restore(payload)
    with pytest.raises(ResponseError, match="Library queue already exists"):
        r.function_restore(payload)
    assert r.function_restore(payload, "REPLACE")
    assert r.function_restore(payload, "FLUSH")
    assert r.fcall("qpush", 1, "q", "a") == 1
    with pytest.raises(ResponseError, match="payload version or checksum are wrong"):
        r.function_restore(payload[:-1] + b"x")


@pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server persistence")
def test_libraries_and_script_effects_survive_restart_and_rewrite():
    s = start_cte(["--appendonly", "yes", "--appendfsync", "always"])
    try:
        r = s.redis()
        r.function_load(LIB)
        r.eval("redis.call('SET', 'a', 1); redis.call('RPUSH', 'l', 'x', 'y')", 0)
        r.eval("redis.set_repl(redis.REPL_NONE); redis.call('SET', 'unlogged', 1)", 0)
        r.fcall("qpush", 1, "q", "job")
        with open(s.tmpdir + "/appendonly.aof", "rb") as f:
            aof = f.read()
        assert b"MULTI" in aof and b"unlogged" not in aof
        s.restart_same_dir()
        r = s.redis()
        assert r.get("a") == b"1" and r.lrange("l", 0, -1) == [b"x", b"y"]
        assert r.get("unlogged") is None
        assert r.fcall_ro("qlen", 1, "q") == 1
        r.bgrewriteaof()
        deadline = time.time() + 10
        while r.info("persistence")["aof_rewrite_in_progress"] and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        s.restart_same_dir()
        r = s.redis()
        assert r.fcall_ro("qlen", 1, "q") == 1
        assert [l[1] for l in r.function_list()] == [b"queue"]
    finally:
        if s.alive():
            s.stop()
        s.cleanup()


def test_info_memory_has_the_scripting_fields(r):
    r.eval("return 1", 0)
    info = r.info("memory")
    for field in ("used_memory_lua", "used_memory_scripts_eval", "number_of_cached_scripts",
                  "number_of_functions", "used_memory_vm_functions"):
        assert field in info, field
    assert info["number_of_cached_scripts"] == 1


def _busy_script(server, body="while true do end", keys=()):
    """Runs body as EVAL on a connection of its own in a thread (the server's
    busy-reply-threshold is set low first); returns (thread, result dict)."""
    result = {}

    def run():
        try:
            c = server.conn(timeout=30)
            result["reply"] = c.call("EVAL", body, len(keys), *keys)
            c.close()
        except Exception as e:  # the server may go away (SHUTDOWN NOSAVE)
            result["exc"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, result


def _wait_busy(server, timeout=10):
    """Waits until a connection opened before the script answers -BUSY."""
    probe = server.conn(timeout=5)
    deadline = time.time() + timeout
    while True:
        rep = probe.call("PING")
        if rep.kind == "-":
            assert rep.val.startswith(b"BUSY Redis is busy running a script"), rep
            return probe
        assert time.time() < deadline, "the script never made the server busy"
        time.sleep(0.02)


def test_new_connections_during_a_busy_script_are_answered_busy(cte_server, r):
    """As Redis (processEventsWhileBlocked accepts): a connection opened while a script is
    busy, over TCP and the Unix socket, is accepted and answered at once: -BUSY, but for HELLO
    and the other allow-busy commands; SCRIPT KILL from a new connection ends the script."""
    r.config_set("busy-reply-threshold", 50)
    t, result = _busy_script(cte_server)
    probe = _wait_busy(cte_server)
    for unix in (False, True):
        late = cte_server.conn(unix=unix, timeout=3)  # a hang fails on the socket timeout
        rep = late.call("PING")
        assert rep.kind == "-" and rep.val.startswith(b"BUSY Redis is busy running a script")
        hello = late.py("HELLO", 3)
        assert hello[b"proto"] == 3
        late.close()
    with pytest.raises(ResponseError, match="^BUSY"):
        cte_server.redis(socket_timeout=3).get("k")  # redis-py's own handshake, then GET
    killer = cte_server.conn(timeout=3)
    assert killer.call("SCRIPT", "KILL").val == b"OK"
    t.join(10)
    assert not t.is_alive()
    assert b"Script killed by user" in result["reply"].val
    assert probe.call("PING").val == b"PONG"
    probe.close()
    killer.close()


@pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server persistence")
def test_shutdown_during_a_busy_script_is_refused_but_nosave(tmp_path):
    """As Redis 7.0: SHUTDOWN (but NOSAVE) during a busy script answers -BUSY; SHUTDOWN
    NOSAVE stops the server at once, and the script's writes so far never reach the
    append-only file: after a restart none of them is there."""
    s = start_cte(["--appendonly", "yes", "--appendfsync", "always",
                   "--busy-reply-threshold", "50"])
    try:
        s.redis().set("before", 1)
        t, result = _busy_script(s, "redis.call('SET', 'partial', 1) "
                                    "redis.call('INCR', 'n') while true do end")
        probe = _wait_busy(s)
        late = s.conn(timeout=3)
        for args in (("SHUTDOWN",), ("SHUTDOWN", "SAVE"), ("SHUTDOWN", "NOW")):
            rep = late.call(*args)
            assert rep.kind == "-" and rep.val.startswith(b"BUSY"), (args, rep)
        late.send("SHUTDOWN", "NOSAVE")
        assert s.wait_exit(10) == 0
        t.join(10)
        with open(s.tmpdir + "/appendonly.aof", "rb") as f:
            aof = f.read()
        assert b"partial" not in aof and b"MULTI" not in aof, aof
        s.restart_same_dir(stop=False)
        c = s.redis()
        assert c.get("before") == b"1"
        assert c.get("partial") is None and c.get("n") is None
        probe.close()
    finally:
        if s.alive():
            s.stop(check=False)
        s.cleanup()


@pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server persistence")
def test_sigterm_during_a_busy_script_shuts_down_when_it_ends():
    """As Redis 7.0: SIGTERM during a busy script schedules the shutdown; the script runs to
    its end meanwhile (other clients, new ones too, get -BUSY), then the server exits
    cleanly with the script's writes in the append-only file."""
    s = start_cte(["--appendonly", "yes", "--appendfsync", "always",
                   "--busy-reply-threshold", "50"])
    try:
        t, result = _busy_script(
            s, "redis.call('SET', 'done', 1) local t = redis.call('TIME')[1] "
               "while tonumber(redis.call('TIME')[1]) < t + 2 do end return 1")
        probe = _wait_busy(s)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        assert s.alive()
        late = s.conn(timeout=3)
        assert late.call("PING").val.startswith(b"BUSY")
        assert s.wait_exit(15) == 0
        t.join(10)
        s.restart_same_dir(stop=False)
        assert s.redis().get("done") == b"1"
        probe.close()
        late.close()
    finally:
        if s.alive():
            s.stop(check=False)
        s.cleanup()


KILL_SCRIPT = """
for i = 1, tonumber(ARGV[2]) do redis.call('INCR', KEYS[1]) end
redis.call('INCRBY', 'total', ARGV[2])
redis.call('RPUSH', 'done', ARGV[1])
return 1
"""
KILL_LIB = """#!lua name=killlib
redis.register_function('bump', function(keys, args)
  for i = 1, tonumber(args[2]) do redis.call('HINCRBY', keys[1], 'n', 1) end
  redis.call('INCRBY', 'total', args[2])
  redis.call('RPUSH', 'done', args[1])
  return 1
end)
"""


def _script_load_worker(server, wid, stop, counts):
    """Runs scripts (short ones, and long ones past busy-reply-threshold, whose writes the
    server flushes while serving others) until the server dies or stop is set."""
    try:
        c = server.redis(socket_timeout=10)
        sha = c.script_load(KILL_SCRIPT)
        n = 0
        while not stop.is_set():
            n += 1
            sid = "%d-%d-%d" % (counts["round"], wid, n)
            steps = 20000 if n % 7 == 0 else 300
            try:
                if n % 2:
                    c.evalsha(sha, 1, "c:" + sid, sid, steps)
                else:
                    c.fcall("bump", 1, "h:" + sid, sid, steps)
            except redis.ResponseError as e:  # the other worker's long script is busy
                assert str(e).startswith("BUSY"), e
                time.sleep(0.005)
    except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError):
        pass


def _check_all_or_nothing(c, per_script_steps=(300, 20000)):
    done = [x.decode() for x in c.lrange("done", 0, -1)]
    assert len(done) == len(set(done)), "a script's effects replayed twice"
    total = 0
    for sid in done:
        v = c.get("c:" + sid)
        if v is None:
            v = c.hget("h:" + sid, "n")
        assert v is not None and int(v) in per_script_steps, (sid, v)
        total += int(v)
    assert int(c.get("total") or 0) == total
    # no counter without its script's end: a script that left nothing in 'done' left nothing
    for k in c.scan_iter("[ch]:*"):
        sid = k.decode()[2:]
        assert sid in done, "partial effects of script %s after the crash" % sid
    return len(done)


@pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server persistence")
@pytest.mark.parametrize("fsync", ["always", "everysec"])
def test_kill9_during_scripts_leaves_each_script_whole_or_absent(fsync):
    """Scripts write many keys (logged inside MULTI/EXEC), some past busy-reply-threshold so
    the server writes the log while they run; SIGKILL at random moments, then a restart on the
    same append-only file: it loads, and every script's effects are all there or none."""
    rng = random.Random(1234 if fsync == "always" else 4321)
    s = start_cte(["--appendonly", "yes", "--appendfsync", fsync,
                   "--busy-reply-threshold", "10"])
    try:
        s.redis().function_load(KILL_LIB)
        seen = 0
        for rnd in range(4):
            stop = threading.Event()
            counts = {"round": rnd}
            workers = [threading.Thread(target=_script_load_worker, args=(s, w, stop, counts),
                                        daemon=True) for w in range(2)]
            for w in workers:
                w.start()
            time.sleep(rng.uniform(0.2, 0.8))
            s.kill9()
            stop.set()
            for w in workers:
                w.join(15)
                assert not w.is_alive()
            s.restart_same_dir(stop=False)
            c = s.redis()
            n = _check_all_or_nothing(c)
            assert n >= seen  # what was there before the crash stays (fsync always: all)
            seen = n
        assert seen > 0, "no script ever finished"
    finally:
        if s.alive():
            s.stop(check=False)
        s.cleanup()
