#!/usr/bin/python3
"""Prints the rows of server/cmd_docs.c's table for the Redis commands, in its notation (see the
top of that file), from what a running Redis 7.0 answers to COMMAND DOCS and COMMAND INFO (the
argument trees, history, doc flags and tips are facts of Redis's API that cte-server answers the
same way). Only commands that cte-server also has are printed; cte-server's own commands are
written by hand at the end of the table.

    tools/cmd-docs-from-redis.py REDIS_PORT CTE_PORT > rows.txt

then replace the generated part of server/cmd_docs.c with rows.txt."""
import re
import sys

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..",
                                              "tests", "integration"))
from conftest import RespConn  # noqa: E402

TYPES = {"string": "s", "integer": "i", "double": "d", "key": "k", "pattern": "p",
         "unix-time": "u", "pure-token": "t", "oneof": "o", "block": "b"}
FLAGS = {"optional": "?", "multiple": "*", "multiple_token": "+"}
BARE = re.compile(r"[A-Za-z0-9_.-]+")


def py(r):
    if r.kind in "*~":
        return [py(x) for x in r.val]
    if r.kind == "%":
        return {py(a): py(b) for a, b in r.val}
    if r.kind in "$+":
        return r.val.decode()
    return r.val


def word(s):
    return s if BARE.fullmatch(s) else "'%s'" % s


def arg(a):
    out = word(a["name"]) + ":" + TYPES[a["type"]]
    if "key_spec_index" in a:
        out += str(a["key_spec_index"])
    out += "".join(FLAGS[f] for f in a.get("flags", []))
    if "since" in a:
        out += "@" + a["since"]
    if "deprecated_since" in a:
        out += "!" + a["deprecated_since"]
    tok = a.get("token")
    if tok is not None and not (a["type"] == "pure-token" and tok == a["name"].upper()):
        out += "=" + word(tok)
    if "arguments" in a:
        out += "(" + " ".join(arg(x) for x in a["arguments"]) + ")"
    return out


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def row(name, d, tips, notes):
    args = " ".join(arg(a) for a in d.get("arguments", []))
    parts = ['{%s, %s' % (cstr(name), cstr(args))]
    if "history" in d:
        parts.append(".history = " + cstr("\n".join("%s %s" % (v, t) for v, t in d["history"])))
    if tips:
        parts.append(".tips = " + cstr(" ".join(tips)))
    if any(notes):
        parts.append(".key_notes = " + cstr("|".join(notes).rstrip("|")))
    if "deprecated_since" in d:
        parts.append(".deprecated_since = " + cstr(d["deprecated_since"]))
    if "replaced_by" in d:
        parts.append(".replaced_by = " + cstr(d["replaced_by"]))
    flags = [{"deprecated": "CMD_DOC_DEPRECATED", "syscmd": "CMD_DOC_SYSCMD"}[f]
             for f in d.get("doc_flags", [])]
    if flags:
        parts.append(".doc_flags = " + " | ".join(flags))
    return "    " + ", ".join(parts) + "},"


def main():
    redis = RespConn(port=int(sys.argv[1]))
    cte = RespConn(port=int(sys.argv[2]))
    redis.call("HELLO", "3")
    docs = py(redis.call("COMMAND", "DOCS"))
    tips, notes = {}, {}
    for info in py(redis.call("COMMAND", "INFO")):
        for i in [info] + info[9]:
            tips[i[0]] = i[7]
            notes[i[0]] = [spec.get("notes", "") for spec in i[8]]
    ours = set()
    for name in py(cte.call("COMMAND", "LIST")):
        ours.add(name)
    rows = []

    def add(name, d):
        if name in ours:
            rows.append((name, row(name, d, tips.get(name), notes.get(name, []))))
        for sub, sd in d.get("subcommands", {}).items():
            add(sub, sd)

    for name, d in docs.items():
        add(name, d)
    for _, text in sorted(rows):
        print(text)


if __name__ == "__main__":
    main()
