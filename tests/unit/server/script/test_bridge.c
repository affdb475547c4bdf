/* Tests for the Lua <-> RESP conversions (server/script/bridge.c) on a bare Lua state. */
#include "common/buf.h"
#include "server/script/bridge.h"

#include <criterion/criterion.h>
#include <lauxlib.h>
#include <lualib.h>
#include <string.h>

static lua_State *L;
static buf_t out;

static void setup(void)
{
    L = luaL_newstate();
    luaL_openlibs(L);
    buf_init(&out);
}

static void teardown(void)
{
    buf_deinit(&out);
    lua_close(L);
}

TestSuite(script_bridge, .init = setup, .fini = teardown);

/* Runs "return <expr>" and converts its value: the reply as a C string. */
static const char *to_reply(const char *expr, int proto, int lua_resp)
{
    char code[512];
    snprintf(code, sizeof(code), "return %s", expr);
    cr_assert_eq(luaL_dostring(L, code), 0, "%s", lua_tostring(L, -1));
    buf_clear(&out);
    bridge_lua_to_reply(L, &out, proto, lua_resp, NULL, NULL);
    cr_assert_eq(lua_gettop(L), 0, "the value was popped");
    return out.data ? out.data : "";
}

Test(script_bridge, numbers_are_integers_truncated)
{
    cr_assert_str_eq(to_reply("100.5", 2, 2), ":100\r\n");
    cr_assert_str_eq(to_reply("-3.9", 3, 2), ":-3\r\n");
}

Test(script_bridge, strings_booleans_and_nil)
{
    cr_assert_str_eq(to_reply("'hello'", 2, 2), "$5\r\nhello\r\n");
    cr_assert_str_eq(to_reply("true", 2, 2), ":1\r\n");
    cr_assert_str_eq(to_reply("false", 2, 2), "$-1\r\n");
    cr_assert_str_eq(to_reply("false", 3, 2), "_\r\n");
    cr_assert_str_eq(to_reply("nil", 2, 2), "$-1\r\n");
    /* a RESP3 script (redis.setresp(3)) writes booleans */
    cr_assert_str_eq(to_reply("false", 3, 3), "#f\r\n");
    cr_assert_str_eq(to_reply("true", 2, 3), ":1\r\n");
}

Test(script_bridge, arrays_stop_at_the_first_nil)
{
    cr_assert_str_eq(to_reply("{1,2,3,'ciao',{1,2}}", 2, 2),
                     "*5\r\n:1\r\n:2\r\n:3\r\n$4\r\nciao\r\n*2\r\n:1\r\n:2\r\n");
    cr_assert_str_eq(to_reply("{1,nil,3}", 2, 2), "*1\r\n:1\r\n");
    cr_assert_str_eq(to_reply("{}", 2, 2), "*0\r\n");
}

Test(script_bridge, status_error_double_and_big_number_tables)
{
    cr_assert_str_eq(to_reply("{ok='fine'}", 2, 2), "+fine\r\n");
    cr_assert_str_eq(to_reply("{ok='a\\r\\nb'}", 2, 2), "+a  b\r\n");
    cr_assert_str_eq(to_reply("{err='ERR this is an error'}", 2, 2), "-ERR this is an error\r\n");
    cr_assert_str_eq(to_reply("{double=3.5}", 2, 2), "$3\r\n3.5\r\n");
    cr_assert_str_eq(to_reply("{double=3.5}", 3, 2), ",3.5\r\n");
    cr_assert_str_eq(to_reply("{big_number='123'}", 3, 2), "(123\r\n");
    cr_assert_str_eq(to_reply("{big_number='123'}", 2, 2), "$3\r\n123\r\n");
}

Test(script_bridge, maps_and_sets_by_protocol)
{
    cr_assert_str_eq(to_reply("{map={a=1}}", 3, 2), "%1\r\n$1\r\na\r\n:1\r\n");
    cr_assert_str_eq(to_reply("{map={a=1}}", 2, 2), "*2\r\n$1\r\na\r\n:1\r\n");
    cr_assert_str_eq(to_reply("{set={x=true}}", 3, 2), "~1\r\n$1\r\nx\r\n");
    cr_assert_str_eq(to_reply("{set={x=true}}", 2, 2), "*1\r\n$1\r\nx\r\n");
}

typedef struct seen {
    int n, counted;
    char last[64];
} seen_t;

static void on_error(void *ud, const char *msg, size_t len, int counted)
{
    seen_t *s = ud;
    s->n++;
    s->counted += counted;
    snprintf(s->last, sizeof(s->last), "%.*s", (int)len, msg);
}

Test(script_bridge, errors_are_reported_with_whether_they_were_counted)
{
    seen_t s = {0};
    luaL_dostring(L, "return {1, {err='MY_ERR x'}, {err='ERR y', ignore_error_stats_update=true}}");
    bridge_lua_to_reply(L, &out, 2, 2, on_error, &s);
    cr_assert_str_eq(out.data, "*3\r\n:1\r\n-MY_ERR x\r\n-ERR y\r\n");
    cr_assert_eq(s.n, 2);
    cr_assert_eq(s.counted, 1);
    cr_assert_str_eq(s.last, "ERR y");
}

Test(script_bridge, recursive_tables_end_in_a_stack_error)
{
    luaL_dostring(L, "local a = {}; local b = {a}; a[1] = b; return a");
    bridge_lua_to_reply(L, &out, 2, 2, NULL, NULL);
    cr_assert(strstr(out.data, "-ERR reached lua stack limit\r\n") != NULL);
    cr_assert_eq(lua_gettop(L), 0);
}

/* Converts reply into a Lua value and returns cjson-free description built in Lua. */
static const char *from_reply(const char *reply, const char *describe)
{
    cr_assert_eq(bridge_reply_to_lua(L, reply, strlen(reply)), strlen(reply));
    lua_setglobal(L, "v");
    cr_assert_eq(luaL_dostring(L, describe), 0, "%s", lua_tostring(L, -1));
    static char buf[256];
    snprintf(buf, sizeof(buf), "%s", lua_tostring(L, -1));
    lua_settop(L, 0);
    return buf;
}

Test(script_bridge, replies_become_lua_values)
{
    cr_assert_str_eq(from_reply(":42\r\n", "return type(v)..v"), "number42");
    cr_assert_str_eq(from_reply("$3\r\nfoo\r\n", "return v"), "foo");
    cr_assert_str_eq(from_reply("$-1\r\n", "return tostring(v)"), "false");
    cr_assert_str_eq(from_reply("*-1\r\n", "return tostring(v)"), "false");
    cr_assert_str_eq(from_reply("+OK\r\n", "return v.ok"), "OK");
    cr_assert_str_eq(
        from_reply("*3\r\n:1\r\n$1\r\na\r\n*1\r\n:2\r\n", "return v[1]..v[2]..v[3][1]..#v"),
        "1a23");
}

Test(script_bridge, error_replies_keep_their_code_and_are_marked_counted)
{
    cr_assert_str_eq(from_reply("-WRONGTYPE Operation\r\n",
                                "return v.err..tostring(v.ignore_error_stats_update)"),
                     "WRONGTYPE Operationtrue");
}

Test(script_bridge, resp3_replies_become_tables)
{
    cr_assert_str_eq(from_reply("%1\r\n$1\r\nf\r\n$1\r\nv\r\n", "return v.map.f"), "v");
    cr_assert_str_eq(from_reply("~1\r\n$1\r\nm\r\n", "return tostring(v.set.m)"), "true");
    cr_assert_str_eq(from_reply(",3.5\r\n", "return v.double"), "3.5");
    cr_assert_str_eq(from_reply("(12345678901234567890\r\n", "return v.big_number"),
                     "12345678901234567890");
    cr_assert_str_eq(from_reply("_\r\n", "return tostring(v)"), "nil");
    cr_assert_str_eq(from_reply("#t\r\n", "return tostring(v)"), "true");
    cr_assert_str_eq(from_reply("=7\r\ntxt:abc\r\n",
                                "return v.verbatim_string.format..v.verbatim_string.string"),
                     "txtabc");
}

Test(script_bridge, a_cut_reply_pushes_nothing)
{
    cr_assert_eq(bridge_reply_to_lua(L, "*2\r\n:1\r\n", 8), 0);
    cr_assert_eq(lua_gettop(L), 0);
}

Test(script_bridge, push_error_splits_the_code_as_redis)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"-MY_ERR custom msg", "MY_ERR custom msg"}, {"-", "ERR "},
        {"plain message", "ERR plain message"},      {"-NOCODE", "ERR NOCODE"},
        {"-OOM no room\r\n", "OOM no room"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bridge_push_error(L, cases[i].in, strlen(cases[i].in));
        lua_getfield(L, -1, "err");
        cr_assert_str_eq(lua_tostring(L, -1), cases[i].want, "for %s", cases[i].in);
        lua_settop(L, 0);
    }
}
