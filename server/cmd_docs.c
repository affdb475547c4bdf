/* cmd_docs.c - the documentation of every command and subcommand that COMMAND DOCS answers
 * beyond the table rows (summary, since, group and complexity stay in the rows), and COMMAND
 * INFO's tips and key-spec notes.
 *
 * One row per full name ("set", "client|kill"), with designated initializers for what few rows
 * have: .history ("<version> <text>" lines), .tips (space separated), .key_notes (COMMAND
 * INFO's key spec notes, '|' separated), .deprecated_since, .replaced_by, .doc_flags. The
 * second field is the argument list in this notation, parsed once at start (cmd_docs_init)
 * into cmd_doc_arg_t trees:
 *
 *     list  := arg { ' ' arg }
 *     arg   := word ':' type [index] { flag | '@' since | '!' deprecated | '=' token }
 *              [ '(' list ')' ]
 *     type  := s string | i integer | d double | k key | p pattern | u unix-time |
 *              t pure-token | o oneof | b block
 *     index := the key_spec_index, digits: required for a key, possible for others (SORT's
 *              BY and GET patterns name key specs too)
 *     flag  := '?' optional | '*' multiple | '+' multiple_token
 *     word  := [A-Za-z0-9_.-]+ | "'" anything but "'", possibly nothing "'"
 *
 * A pure-token without '=' has its name upper-cased as its token ("nx:t" is NX). oneof and
 * block take their nested arguments in parentheses. Example, SET's:
 *
 *     key:k0 value:s condition:o?@2.6.12(nx:t xx:t) get:t?@6.2.0 expiration:o?(seconds:i=EX ...)
 *
 * The rows of Redis's commands say what Redis 7.0 answers for them (its API: argument names,
 * types, tokens, key spec indexes, versions; tools/cmd-docs-from-redis.py prints them from a
 * running Redis); the rows at the end are cte-server's own commands, written from
 * COMMANDS.md's syntax. The parse keeps every string in one block per command: a copy of the
 * notation whose delimiters become NULs, followed by the upper-cased tokens. Loop thread. */
#include "server/cmd_docs.h"

#include "common/alloc.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static cmd_doc_t docs[] = {
    // clang-format off
    {"acl", ""},
    {"acl|cat", "categoryname:s?"},
    {"acl|deluser", "username:s*"},
    {"acl|dryrun", "username:s command:s arg:s?*"},
    {"acl|genpass", "bits:i?"},
    {"acl|getuser", "username:s", .history = "6.2.0 Added Pub/Sub channel patterns.\n7.0.0 Added selectors and changed the format of key and channel patterns from a list to their rule representation."},
    {"acl|help", ""},
    {"acl|list", ""},
    {"acl|load", ""},
    {"acl|log", "operation:o?(count:i reset:t)"},
    {"acl|save", ""},
    {"acl|setuser", "username:s rule:s?*", .history = "6.2.0 Added Pub/Sub channel patterns.\n7.0.0 Added selectors and key based permissions."},
    {"acl|users", ""},
    {"acl|whoami", ""},
    {"append", "key:k0 value:s"},
    {"asking", ""},
    {"auth", "username:s?@6.0.0 password:s", .history = "6.0.0 Added ACL style (username and password)."},
    {"bgrewriteaof", ""},
    {"bgsave", "schedule:t?@3.2.2", .history = "3.2.2 Added the `SCHEDULE` option."},
    {"bitcount", "key:k0 index:b?(start:i end:i index_unit:o?@7.0.0(byte:t bit:t))", .history = "7.0.0 Added the `BYTE|BIT` option."},
    {"bitfield", "key:k0 operation:o?*(encoding_offset:b=GET(encoding:s offset:i) write:b(wrap_sat_fail:o?=OVERFLOW(wrap:t sat:t fail:t) write_operation:o(encoding_offset_value:b=SET(encoding:s offset:i value:i) encoding_offset_increment:b=INCRBY(encoding:s offset:i increment:i))))", .key_notes = "This command allows both access and modification of the key"},
    {"bitfield_ro", "key:k0 encoding_offset:b?*+=GET(encoding:s offset:i)"},
    {"bitop", "operation:s destkey:k0 key:k1*"},
    {"bitpos", "key:k0 bit:i index:b?(start:i end_index:b?(end:i index_unit:o?@7.0.0(byte:t bit:t)))", .history = "7.0.0 Added the `BYTE|BIT` option."},
    {"blmove", "source:k0 destination:k1 wherefrom:o(left:t right:t) whereto:o(left:t right:t) timeout:d"},
    {"blmpop", "timeout:d numkeys:i key:k0* where:o(left:t right:t) count:i?=COUNT"},
    {"blpop", "key:k0* timeout:d", .history = "6.0.0 `timeout` is interpreted as a double instead of an integer."},
    {"brpop", "key:k0* timeout:d", .history = "6.0.0 `timeout` is interpreted as a double instead of an integer."},
    {"brpoplpush", "source:k0 destination:k1 timeout:d", .history = "6.0.0 `timeout` is interpreted as a double instead of an integer.", .deprecated_since = "6.2.0", .replaced_by = "`BLMOVE` with the `RIGHT` and `LEFT` arguments", .doc_flags = CMD_DOC_DEPRECATED},
    {"bzmpop", "timeout:d numkeys:i key:k0* where:o(min:t max:t) count:i?=COUNT"},
    {"bzpopmax", "key:k0* timeout:d", .history = "6.0.0 `timeout` is interpreted as a double instead of an integer."},
    {"bzpopmin", "key:k0* timeout:d", .history = "6.0.0 `timeout` is interpreted as a double instead of an integer."},
    {"client", ""},
    {"client|caching", "mode:o(yes:t no:t)"},
    {"client|getname", ""},
    {"client|getredir", ""},
    {"client|help", ""},
    {"client|id", ""},
    {"client|info", "", .tips = "nondeterministic_output"},
    {"client|kill", "filter:o('ip:port':s!2.8.12 new-format:o*(client-id:i?@2.8.12=ID normal_master_slave_pubsub:o?@2.8.12=TYPE(normal:t master:t@3.2.0 slave:t replica:t@5.0.0 pubsub:t) username:s?=USER 'ip:port':s?=ADDR 'ip:port':s?@6.2.0=LADDR 'yes/no':s?=SKIPME))", .history = "2.8.12 Added new filter format.\n2.8.12 `ID` option.\n3.2.0 Added `master` type in for `TYPE` option.\n5.0.0 Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility.\n6.2.0 `LADDR` option."},
    {"client|list", "normal_master_replica_pubsub:o?@5.0.0=TYPE(normal:t master:t replica:t pubsub:t) id:b?@6.2.0=ID(client-id:i*)", .history = "2.8.12 Added unique client `id` field.\n5.0.0 Added optional `TYPE` filter.\n6.0.0 Added `user` field.\n6.2.0 Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter.\n7.0.0 Added `resp`, `multi-mem`, `rbs` and `rbp` fields.\n7.0.3 Added `ssub` field.", .tips = "nondeterministic_output"},
    {"client|no-evict", "enabled:o(on:t off:t)"},
    {"client|pause", "timeout:i mode:o?@6.2.0(write:t all:t)", .history = "6.2.0 `CLIENT PAUSE WRITE` mode added along with the `mode` option."},
    {"client|reply", "on_off_skip:o(on:t off:t skip:t)"},
    {"client|setname", "connection-name:s"},
    {"client|tracking", "status:o(on:t off:t) client-id:i?=REDIRECT prefix:s?*+=PREFIX bcast:t? optin:t? optout:t? noloop:t?"},
    {"client|trackinginfo", ""},
    {"client|unblock", "client-id:i timeout_error:o?(timeout:t error:t)"},
    {"client|unpause", ""},
    {"cluster", ""},
    {"cluster|addslots", "slot:i*"},
    {"cluster|addslotsrange", "start-slot_end-slot:b*(start-slot:i end-slot:i)"},
    {"cluster|bumpepoch", "", .tips = "nondeterministic_output"},
    {"cluster|count-failure-reports", "node-id:s", .tips = "nondeterministic_output"},
    {"cluster|countkeysinslot", "slot:i"},
    {"cluster|delslots", "slot:i*"},
    {"cluster|delslotsrange", "start-slot_end-slot:b*(start-slot:i end-slot:i)"},
    {"cluster|failover", "options:o?(force:t takeover:t)"},
    {"cluster|flushslots", ""},
    {"cluster|forget", "node-id:s"},
    {"cluster|getkeysinslot", "slot:i count:i", .tips = "nondeterministic_output"},
    {"cluster|help", ""},
    {"cluster|info", "", .tips = "nondeterministic_output"},
    {"cluster|keyslot", "key:s"},
    {"cluster|links", "", .tips = "nondeterministic_output"},
    {"cluster|meet", "ip:s port:i cluster_bus_port:i?@4.0.0", .history = "4.0.0 Added the optional `cluster_bus_port` argument."},
    {"cluster|myid", ""},
    {"cluster|nodes", "", .tips = "nondeterministic_output"},
    {"cluster|replicas", "node-id:s", .tips = "nondeterministic_output"},
    {"cluster|replicate", "node-id:s"},
    {"cluster|reset", "hard_soft:o?(hard:t soft:t)"},
    {"cluster|saveconfig", ""},
    {"cluster|set-config-epoch", "config-epoch:i"},
    {"cluster|setslot", "slot:i subcommand:o(node-id:s=IMPORTING node-id:s=MIGRATING node-id:s=NODE stable:t)"},
    {"cluster|shards", "", .tips = "nondeterministic_output"},
    {"cluster|slaves", "node-id:s", .tips = "nondeterministic_output", .deprecated_since = "5.0.0", .replaced_by = "`CLUSTER REPLICAS`", .doc_flags = CMD_DOC_DEPRECATED},
    {"cluster|slots", "", .history = "4.0.0 Added node IDs.\n7.0.0 Added additional networking metadata field.", .tips = "nondeterministic_output", .deprecated_since = "7.0.0", .replaced_by = "`CLUSTER SHARDS`", .doc_flags = CMD_DOC_DEPRECATED},
    {"command", "", .tips = "nondeterministic_output_order"},
    {"command|count", ""},
    {"command|docs", "command-name:s?*", .tips = "nondeterministic_output_order"},
    {"command|getkeys", ""},
    {"command|getkeysandflags", ""},
    {"command|help", ""},
    {"command|info", "command-name:s?*", .history = "7.0.0 Allowed to be called with no argument to get info on all commands.", .tips = "nondeterministic_output_order"},
    {"command|list", "filterby:o?=FILTERBY(module-name:s=MODULE category:s=ACLCAT pattern:p=PATTERN)", .tips = "nondeterministic_output_order"},
    {"config", ""},
    {"config|get", "parameter:b*(parameter:s)", .history = "7.0.0 Added the ability to pass multiple pattern parameters in one call"},
    {"config|help", ""},
    {"config|resetstat", ""},
    {"config|rewrite", ""},
    {"config|set", "parameter_value:b*(parameter:s value:s)", .history = "7.0.0 Added the ability to set multiple parameters in one call.", .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    {"copy", "source:k0 destination:k1 destination-db:i?=DB replace:t?"},
    {"dbsize", "", .tips = "request_policy:all_shards response_policy:agg_sum"},
    {"debug", "", .doc_flags = CMD_DOC_SYSCMD},
    {"decr", "key:k0"},
    {"decrby", "key:k0 decrement:i"},
    {"del", "key:k0*", .tips = "request_policy:multi_shard response_policy:agg_sum"},
    {"discard", ""},
    {"dump", "key:k0", .tips = "nondeterministic_output"},
    {"echo", "message:s"},
    {"eval", "script:s numkeys:i key:k0?* arg:s?*", .key_notes = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"},
    {"eval_ro", "script:s numkeys:i key:k0?* arg:s?*", .key_notes = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"},
    {"evalsha", "sha1:s numkeys:i key:k0?* arg:s?*"},
    {"evalsha_ro", "sha1:s numkeys:i key:k0?* arg:s?*"},
    {"exec", ""},
    {"exists", "key:k0*", .history = "3.0.3 Accepts multiple `key` arguments.", .tips = "request_policy:multi_shard response_policy:agg_sum"},
    {"expire", "key:k0 seconds:i condition:o?@7.0.0(nx:t xx:t gt:t lt:t)", .history = "7.0.0 Added options: `NX`, `XX`, `GT` and `LT`."},
    {"expireat", "key:k0 unix-time-seconds:u condition:o?@7.0.0(nx:t xx:t gt:t lt:t)", .history = "7.0.0 Added options: `NX`, `XX`, `GT` and `LT`."},
    {"expiretime", "key:k0"},
    {"failover", "target:b?=TO(host:s port:i force:t?) abort:t? milliseconds:i?=TIMEOUT"},
    {"fcall", "function:s numkeys:i key:k0?* arg:s?*", .key_notes = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"},
    {"fcall_ro", "function:s numkeys:i key:k0?* arg:s?*", .key_notes = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"},
    {"flushall", "async:o?(async:t@4.0.0 sync:t@6.2.0)", .history = "4.0.0 Added the `ASYNC` flushing mode modifier.\n6.2.0 Added the `SYNC` flushing mode modifier.", .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {"flushdb", "async:o?(async:t@4.0.0 sync:t@6.2.0)", .history = "4.0.0 Added the `ASYNC` flushing mode modifier.\n6.2.0 Added the `SYNC` flushing mode modifier.", .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {"function", ""},
    {"function|delete", "library-name:s", .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {"function|dump", ""},
    {"function|flush", "async:o?(async:t sync:t)", .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {"function|help", ""},
    {"function|kill", "", .tips = "request_policy:all_shards response_policy:one_succeeded"},
    {"function|list", "library-name-pattern:s?=LIBRARYNAME withcode:t?", .tips = "nondeterministic_output_order"},
    {"function|load", "replace:t? function-code:s", .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {"function|restore", "serialized-value:s policy:o?(flush:t append:t replace:t)", .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {"function|stats", "", .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"geoadd", "key:k0 condition:o?@6.2.0(nx:t xx:t) change:t?@6.2.0=CH longitude_latitude_member:b*(longitude:d latitude:d member:s)", .history = "6.2.0 Added the `CH`, `NX` and `XX` options."},
    {"geodist", "key:k0 member1:s member2:s unit:o?(m:t km:t ft:t mi:t)"},
    {"geohash", "key:k0 member:s*"},
    {"geopos", "key:k0 member:s*"},
    {"georadius", "key:k0 longitude:d latitude:d radius:d unit:o(m:t km:t ft:t mi:t) withcoord:t? withdist:t? withhash:t? count:b?(count:i=COUNT any:t?@6.2.0) order:o?(asc:t desc:t) key:k1?=STORE key:k2?=STOREDIST", .history = "6.2.0 Added the `ANY` option for `COUNT`.\n7.0.0 Added support for uppercase unit names.", .deprecated_since = "6.2.0", .replaced_by = "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument", .doc_flags = CMD_DOC_DEPRECATED},
    {"georadius_ro", "key:k0 longitude:d latitude:d radius:d unit:o(m:t km:t ft:t mi:t) withcoord:t? withdist:t? withhash:t? count:b?(count:i=COUNT any:t?@6.2.0) order:o?(asc:t desc:t)", .history = "6.2.0 Added the `ANY` option for `COUNT`.", .deprecated_since = "6.2.0", .replaced_by = "`GEOSEARCH` with the `BYRADIUS` argument", .doc_flags = CMD_DOC_DEPRECATED},
    {"georadiusbymember", "key:k0 member:s radius:d unit:o(m:t km:t ft:t mi:t) withcoord:t? withdist:t? withhash:t? count:b?(count:i=COUNT any:t?) order:o?(asc:t desc:t) key:k1?=STORE key:k2?=STOREDIST", .history = "7.0.0 Added support for uppercase unit names.", .deprecated_since = "6.2.0", .replaced_by = "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments", .doc_flags = CMD_DOC_DEPRECATED},
    {"georadiusbymember_ro", "key:k0 member:s radius:d unit:o(m:t km:t ft:t mi:t) withcoord:t? withdist:t? withhash:t? count:b?(count:i=COUNT any:t?) order:o?(asc:t desc:t)", .deprecated_since = "6.2.0", .replaced_by = "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments", .doc_flags = CMD_DOC_DEPRECATED},
    {"geosearch", "key:k0 from:o(member:s=FROMMEMBER longitude_latitude:b=FROMLONLAT(longitude:d latitude:d)) by:o(circle:b(radius:d=BYRADIUS unit:o(m:t km:t ft:t mi:t)) box:b(width:d=BYBOX height:d unit:o(m:t km:t ft:t mi:t))) order:o?(asc:t desc:t) count:b?(count:i=COUNT any:t?) withcoord:t? withdist:t? withhash:t?", .history = "7.0.0 Added support for uppercase unit names."},
    {"geosearchstore", "destination:k0 source:k1 from:o(member:s=FROMMEMBER longitude_latitude:b=FROMLONLAT(longitude:d latitude:d)) by:o(circle:b(radius:d=BYRADIUS unit:o(m:t km:t ft:t mi:t)) box:b(width:d=BYBOX height:d unit:o(m:t km:t ft:t mi:t))) order:o?(asc:t desc:t) count:b?(count:i=COUNT any:t?) storedist:t?", .history = "7.0.0 Added support for uppercase unit names."},
    {"get", "key:k0"},
    {"getbit", "key:k0 offset:i"},
    {"getdel", "key:k0"},
    {"getex", "key:k0 expiration:o?(seconds:i=EX milliseconds:i=PX unix-time-seconds:u=EXAT unix-time-milliseconds:u=PXAT persist:t)", .key_notes = "RW and UPDATE because it changes the TTL"},
    {"getrange", "key:k0 start:i end:i"},
    {"getset", "key:k0 value:s", .deprecated_since = "6.2.0", .replaced_by = "`SET` with the `!GET` argument", .doc_flags = CMD_DOC_DEPRECATED},
    {"hdel", "key:k0 field:s*", .history = "2.4.0 Accepts multiple `field` arguments."},
    {"hello", "arguments:b?(protover:i username_password:b?=AUTH(username:s password:s) clientname:s?=SETNAME)", .history = "6.2.0 `protover` made optional; when called without arguments the command reports the current connection's context."},
    {"hexists", "key:k0 field:s"},
    {"hget", "key:k0 field:s"},
    {"hgetall", "key:k0", .tips = "nondeterministic_output_order"},
    {"hincrby", "key:k0 field:s increment:i"},
    {"hincrbyfloat", "key:k0 field:s increment:d"},
    {"hkeys", "key:k0", .tips = "nondeterministic_output_order"},
    {"hlen", "key:k0"},
    {"hmget", "key:k0 field:s*"},
    {"hmset", "key:k0 field_value:b*(field:s value:s)", .deprecated_since = "4.0.0", .replaced_by = "`HSET` with multiple field-value pairs", .doc_flags = CMD_DOC_DEPRECATED},
    {"hrandfield", "key:k0 options:b?(count:i withvalues:t?)", .tips = "nondeterministic_output"},
    {"hscan", "key:k0 cursor:i pattern:p?=MATCH count:i?=COUNT", .tips = "nondeterministic_output"},
    {"hset", "key:k0 field_value:b*(field:s value:s)", .history = "4.0.0 Accepts multiple `field` and `value` arguments."},
    {"hsetnx", "key:k0 field:s value:s"},
    {"hstrlen", "key:k0 field:s"},
    {"hvals", "key:k0", .tips = "nondeterministic_output_order"},
    {"incr", "key:k0"},
    {"incrby", "key:k0 increment:i"},
    {"incrbyfloat", "key:k0 increment:d"},
    {"info", "section:s?*", .history = "7.0.0 Added support for taking multiple section arguments.", .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"keys", "pattern:p", .tips = "request_policy:all_shards nondeterministic_output_order"},
    {"lastsave", "", .tips = "nondeterministic_output"},
    {"latency", ""},
    {"latency|doctor", "", .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {"latency|help", ""},
    {"latency|histogram", "command:s?*", .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {"latency|history", "event:s", .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {"latency|latest", "", .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {"latency|reset", "event:s?*", .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    {"lcs", "key1:k0 key2:k0 len:t? idx:t? len:i?=MINMATCHLEN withmatchlen:t?"},
    {"lindex", "key:k0 index:i"},
    {"linsert", "key:k0 where:o(before:t after:t) pivot:s element:s"},
    {"llen", "key:k0"},
    {"lmove", "source:k0 destination:k1 wherefrom:o(left:t right:t) whereto:o(left:t right:t)"},
    {"lmpop", "numkeys:i key:k0* where:o(left:t right:t) count:i?=COUNT"},
    {"lolwut", "version:i?=VERSION"},
    {"lpop", "key:k0 count:i?@6.2.0", .history = "6.2.0 Added the `count` argument."},
    {"lpos", "key:k0 element:s rank:i?=RANK num-matches:i?=COUNT len:i?=MAXLEN"},
    {"lpush", "key:k0 element:s*", .history = "2.4.0 Accepts multiple `element` arguments."},
    {"lpushx", "key:k0 element:s*", .history = "4.0.0 Accepts multiple `element` arguments."},
    {"lrange", "key:k0 start:i stop:i"},
    {"lrem", "key:k0 count:i element:s"},
    {"lset", "key:k0 index:i element:s"},
    {"ltrim", "key:k0 start:i stop:i"},
    {"memory", ""},
    {"memory|doctor", "", .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"memory|help", ""},
    {"memory|malloc-stats", "", .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"memory|purge", "", .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {"memory|stats", "", .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"memory|usage", "key:k0 count:i?=SAMPLES"},
    {"mget", "key:k0*", .tips = "request_policy:multi_shard"},
    {"migrate", "host:s port:i key_or_empty_string:o(key:k0 empty_string:t='') destination-db:i timeout:i copy:t?@3.0.0 replace:t?@3.0.0 authentication:o?(password:s?@4.0.7=AUTH username_password:b?@6.0.0=AUTH2(username:s password:s)) key:k1?*@3.0.6=KEYS", .history = "3.0.0 Added the `COPY` and `REPLACE` options.\n3.0.6 Added the `KEYS` option.\n4.0.7 Added the `AUTH` option.\n6.0.0 Added the `AUTH2` option.", .tips = "nondeterministic_output"},
    {"module", ""},
    {"module|help", ""},
    {"module|list", "", .tips = "nondeterministic_output_order"},
    {"module|load", "path:s arg:s?*"},
    {"module|loadex", "path:s configs:b?*+=CONFIG(name:s value:s) args:b?*=ARGS(arg:s)"},
    {"module|unload", "name:s"},
    {"monitor", ""},
    {"move", "key:k0 db:i"},
    {"mset", "key_value:b*(key:k0 value:s)", .tips = "request_policy:multi_shard response_policy:all_succeeded"},
    {"msetnx", "key_value:b*(key:k0 value:s)", .tips = "request_policy:multi_shard response_policy:agg_min"},
    {"multi", ""},
    {"object", ""},
    {"object|encoding", "key:k0", .tips = "nondeterministic_output"},
    {"object|freq", "key:k0", .tips = "nondeterministic_output"},
    {"object|help", ""},
    {"object|idletime", "key:k0", .tips = "nondeterministic_output"},
    {"object|refcount", "key:k0", .tips = "nondeterministic_output"},
    {"persist", "key:k0"},
    {"pexpire", "key:k0 milliseconds:i condition:o?@7.0.0(nx:t xx:t gt:t lt:t)", .history = "7.0.0 Added options: `NX`, `XX`, `GT` and `LT`."},
    {"pexpireat", "key:k0 unix-time-milliseconds:u condition:o?@7.0.0(nx:t xx:t gt:t lt:t)", .history = "7.0.0 Added options: `NX`, `XX`, `GT` and `LT`."},
    {"pexpiretime", "key:k0"},
    {"pfadd", "key:k0 element:s?*"},
    {"pfcount", "key:k0*", .key_notes = "RW because it may change the internal representation of the key, and propagate to replicas"},
    {"pfdebug", "subcommand:s key:k0", .doc_flags = CMD_DOC_SYSCMD},
    {"pfmerge", "destkey:k0 sourcekey:k1*"},
    {"pfselftest", "", .doc_flags = CMD_DOC_SYSCMD},
    {"ping", "message:s?", .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {"psetex", "key:k0 milliseconds:i value:s"},
    {"psubscribe", "pattern:b*(pattern:p)"},
    {"pttl", "key:k0", .history = "2.8.0 Added the -2 reply.", .tips = "nondeterministic_output"},
    {"publish", "channel:s message:s"},
    {"pubsub", ""},
    {"pubsub|channels", "pattern:p?"},
    {"pubsub|help", ""},
    {"pubsub|numpat", ""},
    {"pubsub|numsub", "channel:s?*"},
    {"punsubscribe", "pattern:p?*"},
    {"quit", ""},
    {"randomkey", "", .tips = "request_policy:all_shards nondeterministic_output"},
    {"readonly", ""},
    {"readwrite", ""},
    {"rename", "key:k0 newkey:k1"},
    {"renamenx", "key:k0 newkey:k1", .history = "3.2.0 The command no longer returns an error when source and destination names are the same."},
    {"replicaof", "args:o(host-port:b(host:s port:i) no-one:b(no:t one:t))"},
    {"reset", ""},
    {"restore", "key:k0 ttl:i serialized-value:s replace:t?@3.0.0 absttl:t?@5.0.0 seconds:i?@5.0.0=IDLETIME frequency:i?@5.0.0=FREQ", .history = "3.0.0 Added the `REPLACE` modifier.\n5.0.0 Added the `ABSTTL` modifier.\n5.0.0 Added the `IDLETIME` and `FREQ` options."},
    {"restore-asking", "key:k0 ttl:i serialized-value:s replace:t?@3.0.0 absttl:t?@5.0.0 seconds:i?@5.0.0=IDLETIME frequency:i?@5.0.0=FREQ", .history = "3.0.0 Added the `REPLACE` modifier.\n5.0.0 Added the `ABSTTL` modifier.\n5.0.0 Added the `IDLETIME` and `FREQ` options.", .doc_flags = CMD_DOC_SYSCMD},
    {"role", ""},
    {"rpop", "key:k0 count:i?@6.2.0", .history = "6.2.0 Added the `count` argument."},
    {"rpoplpush", "source:k0 destination:k1", .deprecated_since = "6.2.0", .replaced_by = "`LMOVE` with the `RIGHT` and `LEFT` arguments", .doc_flags = CMD_DOC_DEPRECATED},
    {"rpush", "key:k0 element:s*", .history = "2.4.0 Accepts multiple `element` arguments."},
    {"rpushx", "key:k0 element:s*", .history = "4.0.0 Accepts multiple `element` arguments."},
    {"sadd", "key:k0 member:s*", .history = "2.4.0 Accepts multiple `member` arguments."},
    {"save", ""},
    {"scan", "cursor:i pattern:p?=MATCH count:i?=COUNT type:s?@6.0.0=TYPE", .history = "6.0.0 Added the `TYPE` subcommand.", .tips = "nondeterministic_output request_policy:special"},
    {"scard", "key:k0"},
    {"script", ""},
    {"script|exists", "sha1:s*", .tips = "request_policy:all_shards response_policy:agg_logical_and"},
    {"script|flush", "async:o?@6.2.0(async:t sync:t)", .history = "6.2.0 Added the `ASYNC` and `SYNC` flushing mode modifiers.", .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    {"script|help", ""},
    {"script|kill", "", .tips = "request_policy:all_shards response_policy:one_succeeded"},
    {"script|load", "script:s", .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    {"sdiff", "key:k0*", .tips = "nondeterministic_output_order"},
    {"sdiffstore", "destination:k0 key:k1*"},
    {"select", "index:i"},
    {"set", "key:k0 value:s condition:o?@2.6.12(nx:t xx:t) get:t?@6.2.0 expiration:o?(seconds:i@2.6.12=EX milliseconds:i@2.6.12=PX unix-time-seconds:u@6.2.0=EXAT unix-time-milliseconds:u@6.2.0=PXAT keepttl:t@6.0.0)", .history = "2.6.12 Added the `EX`, `PX`, `NX` and `XX` options.\n6.0.0 Added the `KEEPTTL` option.\n6.2.0 Added the `GET`, `EXAT` and `PXAT` option.\n7.0.0 Allowed the `NX` and `GET` options to be used together.", .key_notes = "RW and ACCESS due to the optional `GET` argument"},
    {"setbit", "key:k0 offset:i value:i"},
    {"setex", "key:k0 seconds:i value:s"},
    {"setnx", "key:k0 value:s"},
    {"setrange", "key:k0 offset:i value:s"},
    {"shutdown", "nosave_save:o?(nosave:t save:t) now:t?@7.0.0 force:t?@7.0.0 abort:t?@7.0.0", .history = "7.0.0 Added the `NOW`, `FORCE` and `ABORT` modifiers."},
    {"sinter", "key:k0*", .tips = "nondeterministic_output_order"},
    {"sintercard", "numkeys:i key:k0* limit:i?=LIMIT"},
    {"sinterstore", "destination:k0 key:k1*"},
    {"sismember", "key:k0 member:s"},
    {"slaveof", "args:o(host-port:b(host:s port:i) no-one:b(no:t one:t))", .deprecated_since = "5.0.0", .replaced_by = "`REPLICAOF`", .doc_flags = CMD_DOC_DEPRECATED},
    {"slowlog", ""},
    {"slowlog|get", "count:i?", .history = "4.0.0 Added client IP address, port and name to the reply.", .tips = "request_policy:all_nodes nondeterministic_output"},
    {"slowlog|help", ""},
    {"slowlog|len", "", .tips = "request_policy:all_nodes response_policy:agg_sum nondeterministic_output"},
    {"slowlog|reset", "", .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    {"smembers", "key:k0", .tips = "nondeterministic_output_order"},
    {"smismember", "key:k0 member:s*"},
    {"smove", "source:k0 destination:k1 member:s"},
    {"sort", "key:k0 pattern:p1?=BY offset_count:b?=LIMIT(offset:i count:i) pattern:p1?*+=GET order:o?(asc:t desc:t) sorting:t?=ALPHA destination:k2?=STORE", .key_notes = "|For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort|For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"},
    {"sort_ro", "key:k0 pattern:p1?=BY offset_count:b?=LIMIT(offset:i count:i) pattern:p1?*+=GET order:o?(asc:t desc:t) sorting:t?=ALPHA", .key_notes = "|For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"},
    {"spop", "key:k0 count:i?@3.2.0", .history = "3.2.0 Added the `count` argument.", .tips = "nondeterministic_output"},
    {"srandmember", "key:k0 count:i?@2.6.0", .history = "2.6.0 Added the optional `count` argument.", .tips = "nondeterministic_output"},
    {"srem", "key:k0 member:s*", .history = "2.4.0 Accepts multiple `member` arguments."},
    {"sscan", "key:k0 cursor:i pattern:p?=MATCH count:i?=COUNT", .tips = "nondeterministic_output"},
    {"strlen", "key:k0"},
    {"subscribe", "channel:s*"},
    {"substr", "key:k0 start:i end:i", .deprecated_since = "2.0.0", .replaced_by = "`GETRANGE`", .doc_flags = CMD_DOC_DEPRECATED},
    {"sunion", "key:k0*", .tips = "nondeterministic_output_order"},
    {"sunionstore", "destination:k0 key:k1*"},
    {"swapdb", "index1:i index2:i"},
    {"time", "", .tips = "nondeterministic_output"},
    {"touch", "key:k0*", .tips = "request_policy:multi_shard response_policy:agg_sum"},
    {"ttl", "key:k0", .history = "2.8.0 Added the -2 reply.", .tips = "nondeterministic_output"},
    {"type", "key:k0"},
    {"unlink", "key:k0*", .tips = "request_policy:multi_shard response_policy:agg_sum"},
    {"unsubscribe", "channel:s?*"},
    {"unwatch", ""},
    {"wait", "numreplicas:i timeout:i", .tips = "request_policy:all_shards response_policy:agg_min"},
    {"watch", "key:k0*"},
    {"xack", "key:k0 group:s id:s*"},
    {"xadd", "key:k0 nomkstream:t?@6.2.0 trim:b?(strategy:o(maxlen:t minid:t@6.2.0) operator:o?(equal:t='=' approximately:t='~') threshold:s count:i?@6.2.0=LIMIT) id_or_auto:o(auto_id:t='*' id:s) field_value:b*(field:s value:s)", .history = "6.2.0 Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option.\n7.0.0 Added support for the `<ms>-*` explicit ID form.", .tips = "nondeterministic_output", .key_notes = "UPDATE instead of INSERT because of the optional trimming feature"},
    {"xautoclaim", "key:k0 group:s consumer:s min-idle-time:s start:s count:i?=COUNT justid:t?", .history = "7.0.0 Added an element to the reply array, containing deleted entries the command cleared from the PEL", .tips = "nondeterministic_output"},
    {"xclaim", "key:k0 group:s consumer:s min-idle-time:s id:s* ms:i?=IDLE unix-time-milliseconds:u?=TIME count:i?=RETRYCOUNT force:t? justid:t? id:s?=LASTID", .tips = "nondeterministic_output"},
    {"xdel", "key:k0 id:s*"},
    {"xgroup", ""},
    {"xgroup|create", "key:k0 groupname:s id:o(id:s new_id:t='$') mkstream:t? entries_read:i?=ENTRIESREAD", .history = "7.0.0 Added the `entries_read` named argument."},
    {"xgroup|createconsumer", "key:k0 groupname:s consumername:s"},
    {"xgroup|delconsumer", "key:k0 groupname:s consumername:s"},
    {"xgroup|destroy", "key:k0 groupname:s"},
    {"xgroup|help", ""},
    {"xgroup|setid", "key:k0 groupname:s id:o(id:s new_id:t='$') entries_read:i?=ENTRIESREAD", .history = "7.0.0 Added the optional `entries_read` argument."},
    {"xinfo", ""},
    {"xinfo|consumers", "key:k0 groupname:s", .tips = "nondeterministic_output"},
    {"xinfo|groups", "key:k0", .history = "7.0.0 Added the `entries-read` and `lag` fields"},
    {"xinfo|help", ""},
    {"xinfo|stream", "key:k0 full:b?=FULL(count:i?=COUNT)", .history = "6.0.0 Added the `FULL` modifier.\n7.0.0 Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields"},
    {"xlen", "key:k0"},
    {"xpending", "key:k0 group:s filters:b?(min-idle-time:i?@6.2.0=IDLE start:s end:s count:i consumer:s?)", .history = "6.2.0 Added the `IDLE` option and exclusive range intervals.", .tips = "nondeterministic_output"},
    {"xrange", "key:k0 start:s end:s count:i?=COUNT", .history = "6.2.0 Added exclusive ranges."},
    {"xread", "count:i?=COUNT milliseconds:i?=BLOCK streams:b=STREAMS(key:k0* id:s*)"},
    {"xreadgroup", "group_consumer:b=GROUP(group:s consumer:s) count:i?=COUNT milliseconds:i?=BLOCK noack:t? streams:b=STREAMS(key:k0* id:s*)"},
    {"xrevrange", "key:k0 end:s start:s count:i?=COUNT", .history = "6.2.0 Added exclusive ranges."},
    {"xsetid", "key:k0 last-id:s entries_added:i?@7.0.0=ENTRIESADDED max_deleted_entry_id:s?@7.0.0=MAXDELETEDID", .history = "7.0.0 Added the `entries_added` and `max_deleted_entry_id` arguments."},
    {"xtrim", "key:k0 trim:b(strategy:o(maxlen:t minid:t@6.2.0) operator:o?(equal:t='=' approximately:t='~') threshold:s count:i?@6.2.0=LIMIT)", .history = "6.2.0 Added the `MINID` trimming strategy and the `LIMIT` option.", .tips = "nondeterministic_output"},
    {"zadd", "key:k0 condition:o?@3.0.2(nx:t xx:t) comparison:o?@6.2.0(gt:t lt:t) change:t?@3.0.2=CH increment:t?@3.0.2=INCR score_member:b*(score:d member:s)", .history = "2.4.0 Accepts multiple elements.\n3.0.2 Added the `XX`, `NX`, `CH` and `INCR` options.\n6.2.0 Added the `GT` and `LT` options."},
    {"zcard", "key:k0"},
    {"zcount", "key:k0 min:d max:d"},
    {"zdiff", "numkeys:i key:k0* withscores:t?"},
    {"zdiffstore", "destination:k0 numkeys:i key:k1*"},
    {"zincrby", "key:k0 increment:i member:s"},
    {"zinter", "numkeys:i key:k0* weight:i?*=WEIGHTS aggregate:o?=AGGREGATE(sum:t min:t max:t) withscores:t?"},
    {"zintercard", "numkeys:i key:k0* limit:i?=LIMIT"},
    {"zinterstore", "destination:k0 numkeys:i key:k1* weight:i?*=WEIGHTS aggregate:o?=AGGREGATE(sum:t min:t max:t)"},
    {"zlexcount", "key:k0 min:s max:s"},
    {"zmpop", "numkeys:i key:k0* where:o(min:t max:t) count:i?=COUNT"},
    {"zmscore", "key:k0 member:s*"},
    {"zpopmax", "key:k0 count:i?"},
    {"zpopmin", "key:k0 count:i?"},
    {"zrandmember", "key:k0 options:b?(count:i withscores:t?)", .tips = "nondeterministic_output"},
    {"zrange", "key:k0 start:s stop:s sortby:o?@6.2.0(byscore:t bylex:t) rev:t?@6.2.0 offset_count:b?@6.2.0=LIMIT(offset:i count:i) withscores:t?", .history = "6.2.0 Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options."},
    {"zrangebylex", "key:k0 min:s max:s offset_count:b?=LIMIT(offset:i count:i)", .deprecated_since = "6.2.0", .replaced_by = "`ZRANGE` with the `BYLEX` argument", .doc_flags = CMD_DOC_DEPRECATED},
    {"zrangebyscore", "key:k0 min:d max:d withscores:t?@2.0.0 offset_count:b?=LIMIT(offset:i count:i)", .history = "2.0.0 Added the `WITHSCORES` modifier.", .deprecated_since = "6.2.0", .replaced_by = "`ZRANGE` with the `BYSCORE` argument", .doc_flags = CMD_DOC_DEPRECATED},
    {"zrangestore", "dst:k0 src:k1 min:s max:s sortby:o?(byscore:t bylex:t) rev:t? offset_count:b?=LIMIT(offset:i count:i)"},
    {"zrank", "key:k0 member:s"},
    {"zrem", "key:k0 member:s*", .history = "2.4.0 Accepts multiple elements."},
    {"zremrangebylex", "key:k0 min:s max:s"},
    {"zremrangebyrank", "key:k0 start:i stop:i"},
    {"zremrangebyscore", "key:k0 min:d max:d"},
    {"zrevrange", "key:k0 start:i stop:i withscores:t?", .deprecated_since = "6.2.0", .replaced_by = "`ZRANGE` with the `REV` argument", .doc_flags = CMD_DOC_DEPRECATED},
    {"zrevrangebylex", "key:k0 max:s min:s offset_count:b?=LIMIT(offset:i count:i)", .deprecated_since = "6.2.0", .replaced_by = "`ZRANGE` with the `REV` and `BYLEX` arguments", .doc_flags = CMD_DOC_DEPRECATED},
    {"zrevrangebyscore", "key:k0 max:d min:d withscores:t? offset_count:b?=LIMIT(offset:i count:i)", .history = "2.1.6 `min` and `max` can be exclusive.", .deprecated_since = "6.2.0", .replaced_by = "`ZRANGE` with the `REV` and `BYSCORE` arguments", .doc_flags = CMD_DOC_DEPRECATED},
    {"zrevrank", "key:k0 member:s"},
    {"zscan", "key:k0 cursor:i pattern:p?=MATCH count:i?=COUNT", .tips = "nondeterministic_output"},
    {"zscore", "key:k0 member:s"},
    {"zunion", "numkeys:i key:k0* weight:i?*=WEIGHTS aggregate:o?=AGGREGATE(sum:t min:t max:t) withscores:t?"},
    {"zunionstore", "destination:k0 numkeys:i key:k1* weight:i?*=WEIGHTS aggregate:o?=AGGREGATE(sum:t min:t max:t)"},
    /* cte-server's own commands (COMMANDS.md sections 2 and 5, and MIGRATE's last step) */
    {"client|setinfo", "attr:o(libname:s=LIB-NAME libver:s=LIB-VER)"},
    {"cte.shm.attach", "ring-size:i? data-size:i?"},
    {"migrate-commit", "temporary-key:s key:k0 ttl:i blobs:i bytes:i replace:t? absttl:t?"},
    {"reorg", "tag:k0 blob:s score:d"},
    {"tdel", "tag:k0 blob:s*"},
    {"tget", "tag:k0 blob:s range:b?(offset:i count:i?)"},
    {"tiers", ""},
    {"tinfo", "tag:k0 blob:s"},
    {"tlen", "tag:k0"},
    {"tlist", "tag:k0 from:s?=FROM count:i?=COUNT"},
    {"tmeta", "tag:k0 blob:s ctime:i mtime:i atime:i reads:i writes:i"},
    {"tput", "tag:k0 blob:s offset:i data:s score:d?"},
    {"tquery", "what:o(tags:b(tags:t regex:p) blobs:b(blobs:t tagregex:p blobregex:p since:i?=SINCE until:i?=UNTIL)) limit:i?=LIMIT"},
    {"tscan", "tag:k0 cursor:i regex:p?=MATCH count:i?=COUNT"},
    {"tscore", "tag:k0 blob:s"},
    {"tsearch", "query:s tagregex:p?=TAG blobregex:p?=BLOB limit:i?=LIMIT withscores:t?"},
    {"tsize", "tag:k0 blob:s"},
    {"ttruncate", "tag:k0 blob:s size:i"},
    // clang-format on
};

static const char *const type_names[] = {"string",    "integer",    "double", "key",  "pattern",
                                         "unix-time", "pure-token", "oneof",  "block"};
static const char type_chars[] = "sidkputob";
static int docs_ready;

/* The notation's reader: p is the next character, c what it was before a NUL may have been
 * written over it (a word ends where its delimiter was). up is where the next upper-cased token
 * goes. */
struct lex {
    char *p;
    char c;
    char *up;
};

static void lex_next(struct lex *x)
{
    x->p++;
    x->c = *x->p;
}

static int bare(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '-';
}

/* A word, NUL-terminated in place. */
static const char *lex_word(struct lex *x)
{
    if (x->c == '\'') {
        char *w = x->p + 1, *q = strchr(w, '\'');
        assert(q); /* may be empty: MIGRATE's "" token */
        *q = '\0';
        x->p = q;
        lex_next(x);
        return w;
    }
    char *w = x->p;
    while (bare(x->c)) lex_next(x);
    assert(x->p > w);
    *x->p = '\0'; /* x->c keeps the delimiter */
    return w;
}

static const char *upper_copy(struct lex *x, const char *s)
{
    char *out = x->up;
    while (*s) *x->up++ = (char)toupper((unsigned char)*s++);
    *x->up++ = '\0';
    return out;
}

static void parse_list(struct lex *x, const cmd_doc_arg_t **out, size_t *n);

static void parse_arg(struct lex *x, cmd_doc_arg_t *a)
{
    memset(a, 0, sizeof(*a));
    a->key_spec_index = -1;
    a->name = lex_word(x);
    assert(x->c == ':');
    lex_next(x);
    const char *t = x->c ? strchr(type_chars, x->c) : NULL;
    assert(t);
    a->type = (int)(t - type_chars);
    lex_next(x);
    if (isdigit((unsigned char)x->c)) {
        a->key_spec_index = 0;
        for (; isdigit((unsigned char)x->c); lex_next(x))
            a->key_spec_index = a->key_spec_index * 10 + (x->c - '0');
    }
    assert(a->type != CMD_DOC_ARG_KEY || a->key_spec_index >= 0);
    for (;;) {
        char ch = x->c;
        if (ch == '?' || ch == '*' || ch == '+') {
            a->flags |= ch == '?'   ? CMD_DOC_ARG_OPTIONAL
                        : ch == '*' ? CMD_DOC_ARG_MULTIPLE
                                    : CMD_DOC_ARG_MULTIPLE_TOKEN;
            lex_next(x);
            continue;
        }
        if (ch != '@' && ch != '!' && ch != '=') break;
        lex_next(x);
        const char *w = lex_word(x);
        if (ch == '@')
            a->since = w;
        else if (ch == '!')
            a->deprecated_since = w;
        else
            a->token = w;
    }
    if (a->type == CMD_DOC_ARG_PURE_TOKEN && !a->token) a->token = upper_copy(x, a->name);
    int nested = a->type == CMD_DOC_ARG_ONEOF || a->type == CMD_DOC_ARG_BLOCK;
    assert(nested == (x->c == '('));
    if (!nested) return;
    lex_next(x);
    parse_list(x, &a->args, &a->nargs);
    assert(x->c == ')');
    lex_next(x);
}

/* Arguments up to the end of the notation or a ')' (left for the caller). */
static void parse_list(struct lex *x, const cmd_doc_arg_t **out, size_t *n)
{
    cmd_doc_arg_t *v = NULL;
    size_t cap = 0;
    *n = 0;
    while (x->c && x->c != ')') {
        if (*n == cap) v = xrealloc(v, (cap = cap ? cap * 2 : 4) * sizeof(*v));
        parse_arg(x, &v[(*n)++]);
        if (x->c == ' ') lex_next(x);
    }
    *out = v;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const cmd_doc_t *)a)->name, ((const cmd_doc_t *)b)->name);
}

void cmd_docs_init(void)
{
    if (docs_ready) return;
    size_t ndocs = sizeof(docs) / sizeof(docs[0]);
    qsort(docs, ndocs, sizeof(docs[0]), by_name);
    for (size_t i = 0; i < ndocs; i++) {
        assert(i == 0 || strcmp(docs[i - 1].name, docs[i].name) < 0);
        if (!docs[i].src[0]) continue;
        size_t len = strlen(docs[i].src);
        char *block = xmalloc(2 * len + 2); /* the copy, then the upper-cased tokens */
        memcpy(block, docs[i].src, len + 1);
        struct lex x = {block, block[0], block + len + 1};
        parse_list(&x, &docs[i].args, &docs[i].nargs);
        assert(x.c == '\0');
    }
    docs_ready = 1;
}

const cmd_doc_t *cmd_docs_find(const char *fullname)
{
    cmd_doc_t key = {.name = fullname};
    return bsearch(&key, docs, sizeof(docs) / sizeof(docs[0]), sizeof(docs[0]), by_name);
}

const char *cmd_docs_key_note(const cmd_doc_t *d, int i, size_t *len)
{
    const char *p = d ? d->key_notes : NULL;
    for (; p && i > 0; i--) {
        p = strchr(p, '|');
        if (p) p++;
    }
    if (!p) return NULL;
    *len = strcspn(p, "|");
    return *len ? p : NULL;
}

const char *cmd_doc_arg_type_name(int type)
{
    assert(type >= 0 && type < (int)(sizeof(type_names) / sizeof(type_names[0])));
    return type_names[type];
}

size_t cmd_docs_words(const char *list, void (*fn)(void *ud, const char *w, size_t len), void *ud)
{
    size_t n = 0;
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, " ");
        if (!len) break;
        if (fn) fn(ud, p, len);
        n++;
        p += len;
    }
    return n;
}
