/* tests/unit/server/script/test_eval.c - EVAL, SCRIPT and FUNCTION (server/script/eval.c,
 * function.c, engine.c) through the socketless client: the exact replies (texts taken from
 * redis-server 7.0.15), the script client sharing the caller's database, and statistics. */
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <string.h>

static client_t *C;

static void setup(void)
{
    C = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(script_eval, .init = setup, .fini = teardown);

static void expect(const char *line, const char *want)
{
    harness_expect(C, line, want);
}

Test(script_eval, values_come_back_converted)
{
    expect("EVAL \"return 'hello'\" 0", "$5\r\nhello\r\n");
    expect("EVAL \"return {1,2,{3}}\" 0", "*3\r\n:1\r\n:2\r\n*1\r\n:3\r\n");
    expect("EVAL \"return {KEYS[1],ARGV[1]}\" 1 k a", "*2\r\n$1\r\nk\r\n$1\r\na\r\n");
    expect("EVAL \"return redis.call('SET', KEYS[1], ARGV[1])\" 1 k v", "+OK\r\n");
    expect("EVAL \"return redis.call('GET', KEYS[1])\" 1 k", "$1\r\nv\r\n");
    expect("EVAL \"return redis.call('GET', 'nokey')\" 0", "$-1\r\n");
}

Test(script_eval, errors_name_the_script)
{
    /* sha1("return redis.call('select',99)") as Redis names it */
    expect("EVAL \"return redis.call('select',99)\" 0",
           "-ERR DB index is out of range script: 4ad5abfc50bbccb484223905f9a16f09cd043ba8, on "
           "@user_script:1.\r\n");
    expect("EVAL \"return 1\" -1", "-ERR Number of keys can't be negative\r\n");
    expect("EVAL \"return 1\" 2 a", "-ERR Number of keys can't be greater than number of args\r\n");
    expect("EVALSHA abc 0", "-NOSCRIPT No matching script. Please use EVAL.\r\n");
    expect("EVAL \"#!lua flags=foo\nreturn 1\" 0",
           "-ERR Unexpected flag in script shebang: foo\r\n");
}

Test(script_eval, select_inside_a_script_keeps_the_callers_database)
{
    expect("EVAL \"redis.call('SELECT', 3) return redis.call('SET', 'x', 1)\" 0", "+OK\r\n");
    cr_assert_eq(C->dbid, 0);
    expect("EXISTS x", ":0\r\n");
    expect("SELECT 3", "+OK\r\n");
    expect("GET x", "$1\r\n1\r\n");
}

Test(script_eval, the_script_client_is_not_listed)
{
    uint64_t before = srv.nclients;
    expect("EVAL \"return redis.call('PING')\" 0", "+PONG\r\n");
    cr_assert_eq(srv.nclients, before);
}

Test(script_eval, script_load_exists_flush)
{
    expect("SCRIPT LOAD \"return 'loaded'\"",
           "$40\r\nb534286061d4b9e4026607613b95c06c06015ae8\r\n");
    expect("EVALSHA B534286061D4B9E4026607613B95C06C06015AE8 0", "$6\r\nloaded\r\n");
    expect("SCRIPT EXISTS b534286061d4b9e4026607613b95c06c06015ae8 x", "*2\r\n:1\r\n:0\r\n");
    expect("SCRIPT FLUSH ASYNC", "+OK\r\n");
    expect("SCRIPT EXISTS b534286061d4b9e4026607613b95c06c06015ae8", "*1\r\n:0\r\n");
    expect("SCRIPT FLUSH x", "-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n");
    expect("SCRIPT KILL", "-NOTBUSY No scripts in execution right now.\r\n");
}

Test(script_eval, functions_load_call_and_delete)
{
    expect("FUNCTION LOAD \"#!lua name=lib\nredis.register_function('f', function(keys, args) "
           "return args[1] end)\"",
           "$3\r\nlib\r\n");
    expect("FCALL F 0 hi", "$2\r\nhi\r\n");
    expect("FCALL nosuch 0", "-ERR Function not found\r\n");
    expect("FCALL_RO f 0 x",
           "-ERR Can not execute a script with write flag using *_ro command.\r\n");
    expect("FUNCTION DELETE lib", "+OK\r\n");
    expect("FUNCTION DELETE lib", "-ERR Library not found\r\n");
    expect("FUNCTION KILL", "-NOTBUSY No scripts in execution right now.\r\n");
}

/* The flags command_call_flags gives c's call of the command in words[0..n) */
static uint32_t call_flags(int n, const char *const *words)
{
    resp_arg_t argv[8];
    for (int i = 0; i < n; i++) argv[i] = (resp_arg_t){(char *)words[i], strlen(words[i])};
    const command_t *cmd = command_lookup(&argv[0]);
    cr_assert(cmd);
    int saved_argc = C->argc;
    resp_arg_t *saved_argv = C->argv;
    C->argc = n;
    C->argv = argv;
    uint32_t f = command_call_flags(C, cmd);
    C->argc = saved_argc;
    C->argv = saved_argv;
    return f;
}

Test(script_eval, call_flags_follow_the_script_flags)
{
    const uint32_t wd = CMD_WRITE | CMD_DENYOOM;
    /* no shebang: EVAL's own flags (may replicate), as Redis's compatibility mode */
    const char *compat[] = {"EVAL", "return 1", "0"};
    cr_assert_eq(call_flags(3, compat) & (wd | CMD_MAY_REPLICATE), CMD_MAY_REPLICATE);
    const char *plain[] = {"EVAL", "#!lua\nreturn 1", "0"};
    cr_assert_eq(call_flags(3, plain) & (wd | CMD_MAY_REPLICATE | CMD_STALE), wd);
    const char *ro[] = {"EVAL", "#!lua flags=no-writes,allow-stale\nreturn 1", "0"};
    cr_assert_eq(call_flags(3, ro) & (wd | CMD_MAY_REPLICATE | CMD_STALE), CMD_STALE);
    const char *oom[] = {"EVAL", "#!lua flags=allow-oom\nreturn 1", "0"};
    cr_assert_eq(call_flags(3, oom) & wd, CMD_WRITE);
    const char *bad[] = {"EVAL", "#!lua flags=nosuch\nreturn 1", "0"};
    cr_assert_eq(call_flags(3, bad), command_lookup(&(resp_arg_t){"eval", 4})->flags);
    /* EVALSHA: the cached script's; an unknown one keeps the command's */
    expect("SCRIPT LOAD \"#!lua flags=no-writes\nreturn 1\"",
           "$40\r\n77f21361171213377cb083e2ffc2ae24ffdff8fb\r\n");
    const char *sha[] = {"EVALSHA", "77F21361171213377CB083E2FFC2AE24FFDFF8FB", "0"};
    cr_assert_eq(call_flags(3, sha) & (wd | CMD_MAY_REPLICATE), 0);
    const char *nosha[] = {"EVALSHA", "0000000000000000000000000000000000000000", "0"};
    cr_assert_eq(call_flags(3, nosha) & (wd | CMD_MAY_REPLICATE), CMD_MAY_REPLICATE);
    /* FCALL: the function's */
    expect("FUNCTION LOAD \"#!lua name=lib\nredis.register_function('w', function() return 1 "
           "end)\nredis.register_function{function_name='r', callback=function() return 1 end, "
           "flags={'no-writes'}}\"",
           "$3\r\nlib\r\n");
    const char *fw[] = {"FCALL", "W", "0"}, *fr[] = {"FCALL_RO", "r", "0"};
    cr_assert_eq(call_flags(3, fw) & (wd | CMD_MAY_REPLICATE), wd);
    cr_assert_eq(call_flags(3, fr) & (wd | CMD_MAY_REPLICATE), 0);
}

Test(script_eval, exec_takes_the_flags_of_what_it_queued)
{
    const char *exec[] = {"EXEC"};
    expect("MULTI", "+OK\r\n");
    expect("EVAL \"#!lua flags=no-writes\nreturn 1\" 0", "+QUEUED\r\n");
    cr_assert_eq(call_flags(1, exec) & (CMD_WRITE | CMD_DENYOOM | CMD_MAY_REPLICATE), 0);
    expect("EVAL \"return 1\" 0", "+QUEUED\r\n");
    cr_assert_eq(call_flags(1, exec) & (CMD_WRITE | CMD_MAY_REPLICATE), CMD_MAY_REPLICATE);
    expect("SET k v", "+QUEUED\r\n");
    cr_assert(call_flags(1, exec) & CMD_WRITE);
    expect("DISCARD", "+OK\r\n");
    cr_assert_eq(call_flags(1, exec) & (CMD_WRITE | CMD_MAY_REPLICATE), 0);
}

Test(script_eval, shebang_lines_are_split_whole_then_read_as_redis)
{
    /* replies of redis-server 7.0.15 */
    expect("EVAL \"#!lua flags=no-writes,\nreturn 1\" 0",
           "-ERR Unexpected flag in script shebang: \r\n");
    expect("EVAL \"#!lua flags=\nreturn 1\" 0", ":1\r\n");
    expect("EVAL \"#!lua flags=no-writes,,allow-oom\nreturn 1\" 0",
           "-ERR Unexpected flag in script shebang: \r\n");
    /* the line is split before any word is read: unbalanced quotes win over a bad flag */
    expect("EVAL \"#!lua flags=foo 'unb\nreturn 1\" 0",
           "-ERR Invalid engine in script shebang\r\n");
    expect("EVAL \"#!lua 'flags=no-writes'\nreturn 1\" 0", ":1\r\n");
    expect("EVAL \"#!  \nreturn 1\" 0", "-ERR Unexpected engine in script shebang: #!\r\n");
    expect("EVAL #!lua 0", "-ERR Invalid script shebang\r\n");
    expect("FUNCTION LOAD \"#!lua name=a name=b\nreturn\"",
           "-ERR Invalid metadata value, name argument was given multiple times\r\n");
    expect("FUNCTION LOAD \"#!lua name=x 'unb\nreturn\"", "-ERR Invalid library metadata\r\n");
    expect("FUNCTION LOAD \"#!lua\nreturn\"", "-ERR Library name was not given\r\n");
    expect("FUNCTION LOAD \"#!lua name=z foo\n\"", "-ERR Invalid metadata value given: foo\r\n");
    expect("FUNCTION LOAD \"return 1\"", "-ERR Missing library metadata\r\n");
    expect("FUNCTION LOAD \"#!lua NAME='q'\nredis.register_function('fq', function() return 1 "
           "end)\"",
           "$1\r\nq\r\n");
}
