#!/usr/bin/env node
// A realistic ioredis session against a Redis-protocol server (cte-server, or Redis itself to
// check this script): strings, hashes, lists, sets, sorted sets, a 1000-command pipeline,
// MULTI/EXEC, WATCH with a conflicting write, pub/sub, BLPOP woken by RPUSH, scanStream,
// CLIENT SETNAME/GETNAME, INFO, binary Buffers, and cte-server's TPUT/TGET via call().
//
//   node session.js [host] [port]
//
// Environment: CTE_HOST / CTE_PORT (when not given as arguments; default 127.0.0.1:6379),
// CTE_SKIP_TAGS=1 skips the cte-server extension commands (for a run against redis-server),
// CTE_SESSION_TIMEOUT_MS (default 30000): the whole session must finish within it.
//
// Every key this script touches starts with a per-run prefix; it never flushes anything.
// Exit status: 0 when every check passed, 1 on a failed check (the message names the step),
// 2 when the session timed out.
"use strict";

const assert = require("node:assert/strict");
const Redis = require("ioredis");

const host = process.argv[2] || process.env.CTE_HOST || "127.0.0.1";
const port = Number(process.argv[3] || process.env.CTE_PORT || 6379);
const skipTags = ["1", "true", "yes"].includes(String(process.env.CTE_SKIP_TAGS || "").toLowerCase());
const timeoutMs = Number(process.env.CTE_SESSION_TIMEOUT_MS || 30000);
const P = `nodesess:${process.pid}:${Date.now()}:`; // prefix of every key used here

let step = "start";
const clients = [];
const unexpectedErrors = [];

function log(msg) {
  process.stdout.write(msg + "\n");
}

function newClient(extra = {}) {
  const c = new Redis({
    host,
    port,
    lazyConnect: true,
    retryStrategy: () => null, // no reconnection: a dropped connection must fail the session
    maxRetriesPerRequest: 0,
    connectTimeout: 5000,
    ...extra,
  });
  c.on("error", (err) => unexpectedErrors.push(`${extra.connectionName || "client"}: ${err.message}`));
  clients.push(c);
  return c;
}

async function check(name, fn) {
  step = name;
  const t0 = Date.now();
  await fn();
  log(`ok   ${name} (${Date.now() - t0} ms)`);
}

async function rejects(promise, re, what) {
  await assert.rejects(promise, (err) => {
    assert.match(err.message, re, `${what}: unexpected error text`);
    return true;
  }, `${what}: expected an error reply`);
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function parseInfo(text) {
  // The same parsing ioredis applies to INFO in its ready check.
  const info = {};
  for (const line of text.split("\r\n")) {
    if (!line || line.startsWith("#")) continue;
    const [field, ...rest] = line.split(":");
    info[field] = rest.join(":");
  }
  return info;
}

async function waitBlocked(admin, n, ms) {
  // Waits until the server reports at least n blocked clients (INFO clients), or ms pass.
  const end = Date.now() + ms;
  for (;;) {
    const info = parseInfo(await admin.info("clients"));
    if (Number(info.blocked_clients || 0) >= n) return true;
    if (Date.now() > end) return false;
    await sleep(20);
  }
}

async function main() {
  log(`ioredis ${require("ioredis/package.json").version} on node ${process.version} -> ${host}:${port}` +
      (skipTags ? " (tag commands skipped)" : ""));
  const r = newClient({ connectionName: "node-session-main" });
  const other = newClient({ connectionName: "node-session-other" });

  await check("connect (ready check: INFO)", async () => {
    await r.connect();
    await other.connect();
    assert.equal(r.status, "ready");
    assert.equal(other.status, "ready");
  });

  await check("PING", async () => {
    assert.equal(await r.ping(), "PONG");
    assert.equal(await r.ping("hello"), "hello");
  });

  await check("SET/GET with EX, TTL", async () => {
    assert.equal(await r.set(P + "greeting", "hello world", "EX", 100), "OK");
    assert.equal(await r.get(P + "greeting"), "hello world");
    const ttl = await r.ttl(P + "greeting");
    assert.ok(ttl > 90 && ttl <= 100, `TTL should be in (90, 100], got ${ttl}`);
    assert.equal(await r.set(P + "greeting", "x", "NX"), null);
    assert.equal(await r.get(P + "missing"), null);
    assert.equal(await r.exists(P + "greeting", P + "missing"), 1);
    assert.equal(await r.type(P + "greeting"), "string");
  });

  await check("INCR/INCRBY/DECR and error replies", async () => {
    assert.equal(await r.incr(P + "counter"), 1);
    assert.equal(await r.incrby(P + "counter", 41), 42);
    assert.equal(await r.decr(P + "counter"), 41);
    assert.equal(await r.get(P + "counter"), "41");
    await rejects(r.incr(P + "greeting"), /^ERR value is not an integer or out of range/, "INCR on text");
  });

  await check("MSET/MGET", async () => {
    assert.equal(await r.mset({ [P + "m1"]: "one", [P + "m2"]: "two" }), "OK");
    assert.equal(await r.mset(P + "m3", "three", P + "m4", 4), "OK");
    assert.deepEqual(await r.mget(P + "m1", P + "m2", P + "nope", P + "m3", P + "m4"),
      ["one", "two", null, "three", "4"]);
  });

  await check("hashes (HSET object form, HGETALL -> object)", async () => {
    const user = { name: "Ada", lang: "en", visits: "3" };
    assert.equal(await r.hset(P + "user", user), 3);
    assert.deepEqual(await r.hgetall(P + "user"), user);
    assert.equal(await r.hget(P + "user", "name"), "Ada");
    assert.equal(await r.hincrby(P + "user", "visits", 2), 5);
    assert.deepEqual(await r.hmget(P + "user", "lang", "nope", "visits"), ["en", null, "5"]);
    assert.equal(await r.hlen(P + "user"), 3);
    assert.equal(await r.hdel(P + "user", "lang", "nope"), 1);
    assert.deepEqual((await r.hkeys(P + "user")).sort(), ["name", "visits"]);
    assert.deepEqual(await r.hgetall(P + "nohash"), {});
    await rejects(r.hget(P + "greeting", "x"), /^WRONGTYPE /, "HGET on a string");
  });

  await check("lists", async () => {
    assert.equal(await r.rpush(P + "list", "b", "c", "d"), 3);
    assert.equal(await r.lpush(P + "list", "a"), 4);
    assert.deepEqual(await r.lrange(P + "list", 0, -1), ["a", "b", "c", "d"]);
    assert.equal(await r.llen(P + "list"), 4);
    assert.equal(await r.lindex(P + "list", -1), "d");
    assert.equal(await r.lpop(P + "list"), "a");
    assert.deepEqual(await r.rpop(P + "list", 2), ["d", "c"]);
    assert.deepEqual(await r.lrange(P + "list", 0, -1), ["b"]);
  });

  await check("sets", async () => {
    assert.equal(await r.sadd(P + "set", "x", "y", "z", "x"), 3);
    assert.deepEqual((await r.smembers(P + "set")).sort(), ["x", "y", "z"]);
    assert.equal(await r.sismember(P + "set", "y"), 1);
    assert.equal(await r.sismember(P + "set", "w"), 0);
    assert.equal(await r.scard(P + "set"), 3);
    assert.equal(await r.srem(P + "set", "y", "w"), 1);
    await r.sadd(P + "set2", "z", "q");
    assert.deepEqual(await r.sinter(P + "set", P + "set2"), ["z"]);
    assert.deepEqual((await r.sunion(P + "set", P + "set2")).sort(), ["q", "x", "z"]);
  });

  await check("sorted sets (ZADD, ZRANGE WITHSCORES, ZRANGEBYSCORE LIMIT)", async () => {
    assert.equal(await r.zadd(P + "z", 1, "one", 2, "two", 3, "three", 4.5, "four.5"), 4);
    assert.deepEqual(await r.zrange(P + "z", 0, -1, "WITHSCORES"),
      ["one", "1", "two", "2", "three", "3", "four.5", "4.5"]);
    assert.deepEqual(await r.zrangebyscore(P + "z", "(1", "+inf", "LIMIT", 1, 2), ["three", "four.5"]);
    assert.deepEqual(await r.zrangebyscore(P + "z", "-inf", "+inf", "WITHSCORES", "LIMIT", 0, 1),
      ["one", "1"]);
    assert.deepEqual(await r.zrevrange(P + "z", 0, 1), ["four.5", "three"]);
    assert.equal(await r.zscore(P + "z", "two"), "2");
    assert.equal(await r.zincrby(P + "z", 10, "one"), "11");
    assert.equal(await r.zrank(P + "z", "one"), 3);
    assert.equal(await r.zcard(P + "z"), 4);
    assert.equal(await r.zcount(P + "z", 2, 4.5), 3);
    assert.equal(await r.zadd(P + "z", "XX", "CH", 0, "two"), 1);
    assert.deepEqual(await r.zrange(P + "z", 0, 0), ["two"]);
  });

  await check("pipeline of 1000 commands", async () => {
    const pipe = r.pipeline();
    for (let i = 0; i < 250; i++) {
      pipe.set(`${P}pipe:${i}`, `v${i}`);
      pipe.incr(P + "pipe:count");
      pipe.get(`${P}pipe:${i}`);
      pipe.rpush(P + "pipe:list", i);
    }
    assert.equal(pipe.length, 1000);
    const res = await pipe.exec();
    assert.equal(res.length, 1000);
    for (let i = 0; i < 250; i++) {
      const [s, inc, g, push] = res.slice(4 * i, 4 * i + 4);
      assert.deepEqual(s, [null, "OK"], `pipeline SET #${i}`);
      assert.deepEqual(inc, [null, i + 1], `pipeline INCR #${i}`);
      assert.deepEqual(g, [null, `v${i}`], `pipeline GET #${i}`);
      assert.deepEqual(push, [null, i + 1], `pipeline RPUSH #${i}`);
    }
    assert.equal(await r.llen(P + "pipe:list"), 250);
    // an error inside a pipeline is reported in place, the rest still runs
    const res2 = await r.pipeline().set(P + "p2", "a").incr(P + "p2").get(P + "p2").exec();
    assert.deepEqual(res2[0], [null, "OK"]);
    assert.match(res2[1][0].message, /^ERR value is not an integer/);
    assert.deepEqual(res2[2], [null, "a"]);
  });

  await check("MULTI/EXEC transaction", async () => {
    const res = await r.multi().set(P + "tx", 10).incrby(P + "tx", 5).get(P + "tx")
      .lpush(P + "txlist", "a", "b").exec();
    assert.deepEqual(res, [[null, "OK"], [null, 15], [null, "15"], [null, 2]]);
    // an error inside EXEC does not abort the others (Redis semantics)
    const res2 = await r.multi().set(P + "tx2", "text").incr(P + "tx2").set(P + "tx3", "ok").exec();
    assert.deepEqual(res2[0], [null, "OK"]);
    assert.match(res2[1][0].message, /^ERR value is not an integer/);
    assert.deepEqual(res2[2], [null, "OK"]);
    // DISCARD
    assert.equal(await r.multi({ pipeline: false }), "OK");
    assert.equal(await r.set(P + "discarded", 1), "QUEUED");
    assert.equal(await r.discard(), "OK");
    assert.equal(await r.exists(P + "discarded"), 0);
  });

  await check("WATCH with a conflicting write from another connection (EXEC -> null)", async () => {
    await r.set(P + "balance", 100);
    assert.equal(await r.watch(P + "balance"), "OK");
    const seen = Number(await r.get(P + "balance"));
    assert.equal(await other.set(P + "balance", 1), "OK"); // the conflicting write
    const res = await r.multi().set(P + "balance", seen - 10).exec();
    assert.equal(res, null, "EXEC after a conflicting write must be aborted (null)");
    assert.equal(await r.get(P + "balance"), "1");
    // without a conflict the same transaction goes through
    await r.watch(P + "balance");
    const res2 = await r.multi().decrby(P + "balance", 1).exec();
    assert.deepEqual(res2, [[null, 0]]);
    // UNWATCH forgets the watch
    await r.watch(P + "balance");
    await other.set(P + "balance", 7);
    assert.equal(await r.unwatch(), "OK");
    assert.deepEqual(await r.multi().incr(P + "balance").exec(), [[null, 8]]);
  });

  await check("pub/sub with a second connection", async () => {
    const sub = newClient({ connectionName: "node-session-sub" });
    await sub.connect();
    const chan = P + "news";
    const got = [];
    let resolveAll;
    const all = new Promise((res) => { resolveAll = res; });
    sub.on("message", (channel, message) => {
      got.push(["message", channel, message]);
      if (got.length === 3) resolveAll();
    });
    sub.on("pmessage", (pattern, channel, message) => {
      got.push(["pmessage", pattern, channel, message]);
      if (got.length === 3) resolveAll();
    });
    assert.equal(await sub.subscribe(chan), 1);
    assert.equal(await sub.psubscribe(P + "alerts.*"), 2);
    await rejects(sub.get(P + "greeting"), /subscriber mode/i, "GET in subscriber mode");
    assert.deepEqual(await r.pubsub("NUMSUB", chan), [chan, 1]);
    assert.equal(await r.publish(chan, "first"), 1);
    assert.equal(await r.publish(P + "alerts.disk", "full"), 1);
    assert.equal(await r.publish(chan, "second"), 1);
    assert.equal(await r.publish(P + "nobody", "lost"), 0);
    await Promise.race([all, sleep(5000)]);
    assert.deepEqual(got, [
      ["message", chan, "first"],
      ["pmessage", P + "alerts.*", P + "alerts.disk", "full"],
      ["message", chan, "second"],
    ]);
    assert.equal(await sub.unsubscribe(chan), 1); // one pattern subscription is left
    assert.equal(await sub.punsubscribe(), 0);
    assert.equal(await sub.ping(), "PONG"); // back to normal mode
    await sub.quit();
  });

  await check("BLPOP woken by an RPUSH from another connection", async () => {
    const blocker = newClient({ connectionName: "node-session-blocker" });
    await blocker.connect();
    const key = P + "queue";
    const t0 = Date.now();
    const popped = blocker.blpop(key, 5);
    const blocked = await waitBlocked(r, 1, 2000);
    if (!blocked) {
      log("     (INFO clients never showed blocked_clients >= 1; pushing after a pause)");
      await sleep(200); // give BLPOP time to arrive anyway
    }
    assert.equal(await other.rpush(key, "job-1", "job-2"), 2);
    assert.deepEqual(await popped, [key, "job-1"]);
    assert.ok(Date.now() - t0 < 4500, "BLPOP returned only after its timeout");
    assert.deepEqual(await r.lrange(key, 0, -1), ["job-2"]);
    // a timeout returns null
    assert.equal(await blocker.blpop(P + "emptyqueue", 0.1), null);
    await blocker.quit();
  });

  await check("scanStream collects every key", async () => {
    await r.del(P + "greeting"); // keep the expected set simple to state
    const expected = new Set(await r.keys(P + "*"));
    assert.ok(expected.size > 250, `expected > 250 keys, KEYS found ${expected.size}`);
    const seen = new Set();
    let batches = 0;
    await new Promise((resolve, reject) => {
      const stream = r.scanStream({ match: P + "*", count: 20 });
      stream.on("data", (keys) => { batches++; for (const k of keys) seen.add(k); });
      stream.on("end", resolve);
      stream.on("error", reject);
    });
    assert.ok(batches > 1, "scanStream should need several SCAN calls");
    assert.deepEqual([...seen].sort(), [...expected].sort());
    // with TYPE
    const hashes = [];
    await new Promise((resolve, reject) => {
      const stream = r.scanStream({ match: P + "*", type: "hash", count: 100 });
      stream.on("data", (keys) => hashes.push(...keys));
      stream.on("end", resolve);
      stream.on("error", reject);
    });
    assert.deepEqual([...new Set(hashes)], [P + "user"]);
  });

  await check("CLIENT SETNAME/GETNAME", async () => {
    assert.equal(await r.client("GETNAME"), "node-session-main"); // set by ioredis on connect
    assert.equal(await r.client("SETNAME", "node-renamed"), "OK");
    assert.equal(await r.client("GETNAME"), "node-renamed");
    const list = await r.client("LIST");
    assert.match(list, /(^| )name=node-renamed( |$)/m);
    assert.match(list, /(^| )name=node-session-other( |$)/m);
    const id = await r.client("ID");
    assert.ok(Number.isInteger(id) && id > 0, `CLIENT ID: ${id}`);
  });

  await check("INFO parsing (redis_version)", async () => {
    const info = parseInfo(await r.info());
    assert.match(info.redis_version || "", /^\d+\.\d+\.\d+/, "INFO has no redis_version");
    assert.ok(Number(info.tcp_port) === port, `INFO tcp_port ${info.tcp_port} != ${port}`);
    assert.ok(Number(info.connected_clients) >= 2, `connected_clients ${info.connected_clients}`);
    const server = parseInfo(await r.info("server"));
    assert.equal(server.redis_version, info.redis_version);
    log(`     server says redis_version ${info.redis_version}`);
  });

  await check("Buffer values with binary bytes round-trip", async () => {
    const bytes = Buffer.alloc(256 * 4 + 6);
    for (let i = 0; i < 256 * 4; i++) bytes[i] = i & 255;
    bytes.write("\r\n\0$*\n", 256 * 4, "latin1");
    const key = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x20, 0x80]); // a binary key too
    assert.equal(await r.set(key, bytes), "OK");
    const back = await r.getBuffer(key);
    assert.ok(Buffer.isBuffer(back));
    assert.ok(back.equals(bytes), "binary value changed on the way");
    assert.equal(await r.strlen(key), bytes.length);
    assert.equal(await r.append(key, Buffer.from([0, 1])), bytes.length + 2);
    const h = await r.hgetallBuffer(P + "user");
    assert.ok(Buffer.isBuffer(h.name) && h.name.toString() === "Ada");
    assert.equal(await r.del(key), 1);
  });

  if (skipTags) {
    log("skip tag commands TPUT/TGET (CTE_SKIP_TAGS)");
  } else {
    await check("tag commands TPUT/TGET via call()", async () => {
      const tag = P + "tag";
      assert.equal(await r.call("TPUT", tag, "blob", 0, "hello world"), 11);
      assert.equal(await r.call("TGET", tag, "blob"), "hello world");
      assert.equal(await r.type(tag), "tag");
      assert.equal(await r.call("TPUT", tag, "blob", 6, "there"), 11);
      assert.equal(await r.call("TGET", tag, "blob"), "hello there");
      assert.equal(await r.call("TGET", tag, "blob", 6, 3), "the");
      assert.equal(await r.call("TGET", tag, "nope"), null);
      // a gap past the end reads as zero bytes; binary data through callBuffer
      const bin = Buffer.from([0xde, 0xad, 0x0d, 0x0a, 0x00, 0xbe, 0xef]);
      assert.equal(await r.call("TPUT", tag, "bin", 3, bin), 10);
      const got = await r.callBuffer("TGET", tag, "bin");
      assert.ok(Buffer.isBuffer(got));
      assert.ok(got.equals(Buffer.concat([Buffer.alloc(3), bin])), `TGET bin: ${got.toString("hex")}`);
      // in a pipeline too
      const res = await r.pipeline().call("TPUT", tag, "p", 0, "abc").call("TGET", tag, "p").exec();
      assert.deepEqual(res, [[null, 3], [null, "abc"]]);
      await rejects(r.call("TPUT", tag, "blob", "notanumber", "x"),
        /^ERR value is not an integer or out of range/, "TPUT with a bad offset");
      await rejects(r.call("TGET", P + "user", "x"), /^WRONGTYPE /, "TGET on a hash");
      assert.equal(await r.del(tag), 1);
      assert.equal(await r.exists(tag), 0);
    });
  }

  await check("cleanup and QUIT", async () => {
    const keys = await r.keys(P + "*");
    if (keys.length) await r.del(...keys);
    assert.deepEqual(await r.keys(P + "*"), []);
    assert.equal(await other.quit(), "OK");
    assert.equal(await r.quit(), "OK");
  });

  assert.deepEqual(unexpectedErrors, [], "connection errors were reported");
}

const timer = setTimeout(() => {
  process.stderr.write(`FAIL: session timed out after ${timeoutMs} ms in step "${step}"\n`);
  process.exit(2);
}, timeoutMs);

main().then(() => {
  clearTimeout(timer);
  log("PASS: ioredis session completed");
  process.exit(0);
}, (err) => {
  clearTimeout(timer);
  process.stderr.write(`FAIL in step "${step}": ${err && err.stack ? err.stack : err}\n`);
  if (unexpectedErrors.length) process.stderr.write(`connection errors: ${unexpectedErrors.join("; ")}\n`);
  for (const c of clients) c.disconnect();
  process.exit(1);
});
