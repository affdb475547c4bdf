/* Tests for the cmsgpack and struct libraries (server/script/lib_cmsgpack.c, lib_struct.c). */
#include "server/script/libs.h"

#include <criterion/criterion.h>
#include <lauxlib.h>
#include <lualib.h>
#include <string.h>

static lua_State *L;

static void setup(void)
{
    L = luaL_newstate();
    luaL_openlibs(L);
    lua_pushcfunction(L, script_open_cmsgpack);
    lua_call(L, 0, 0);
    lua_pushcfunction(L, script_open_struct);
    lua_call(L, 0, 0);
}

static void teardown(void)
{
    lua_close(L);
}

TestSuite(script_libs, .init = setup, .fini = teardown);

/* Runs code and returns its string result (or the error). */
static const char *run(const char *code)
{
    static char buf[1024];
    lua_settop(L, 0);
    if (luaL_dostring(L, code))
        snprintf(buf, sizeof(buf), "error: %s", lua_tostring(L, -1));
    else
        snprintf(buf, sizeof(buf), "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(nil)");
    return buf;
}

#define HEX                                                                                        \
    "local function hex(s) local h = '' for i = 1, #s do h = h .. "                                \
    "string.format('%02x', string.byte(s, i)) end return h end "

Test(script_libs, cmsgpack_encodes_numbers_in_their_smallest_form)
{
    cr_assert_str_eq(run(HEX "return hex(cmsgpack.pack(0.1))"), "cb3fb999999999999a");
    cr_assert_str_eq(run(HEX "return hex(cmsgpack.pack(-1099511627776))"), "d3ffffff0000000000");
    cr_assert_str_eq(run(HEX "return hex(cmsgpack.pack(1, 200, 70000, -5, -200, 1.5))"),
                     "01ccc8ce00011170fbd1ff38ca3fc00000");
}

Test(script_libs, cmsgpack_tables_are_arrays_or_maps)
{
    cr_assert_str_eq(run(HEX "return hex(cmsgpack.pack({1,2}))"), "920102");
    cr_assert_str_eq(run(HEX "return hex(cmsgpack.pack({a=true}))"), "81a161c3");
    cr_assert_str_eq(run(HEX "return hex(cmsgpack.pack({}))"), "90");
    cr_assert_str_eq(run(HEX "return hex(cmsgpack.pack(nil, false, 'hi'))"), "c0c2a26869");
}

Test(script_libs, cmsgpack_round_trips)
{
    cr_assert_str_eq(run("local t = cmsgpack.unpack(cmsgpack.pack({1, 'two', {x=3.25}, true}))"
                         " return t[1] .. t[2] .. t[3].x .. tostring(t[4])"),
                     "1two3.25true");
    cr_assert_str_eq(run("local a, b = cmsgpack.unpack(cmsgpack.pack(7, 'z')) return a .. b"),
                     "7z");
    cr_assert_str_eq(run("local s = string.rep('x', 70000) "
                         "return #cmsgpack.unpack(cmsgpack.pack(s))"),
                     "70000");
}

Test(script_libs, cmsgpack_circular_tables_stop_at_depth_16)
{
    cr_assert_str_eq(run("local a = {} a[1] = a local t = cmsgpack.unpack(cmsgpack.pack(a)) "
                         "local d = 0 while type(t) == 'table' do d = d + 1 t = t[1] end "
                         "return d"),
                     "16");
}

Test(script_libs, cmsgpack_unpack_one_and_limit_return_offsets)
{
    cr_assert_str_eq(run("local p = cmsgpack.pack(1, 2, 3) local o, v = cmsgpack.unpack_one(p)"
                         " local o2, v2 = cmsgpack.unpack_one(p, o) "
                         " local o3, a, b = cmsgpack.unpack_limit(p, 2, o)"
                         " return o .. v .. o2 .. v2 .. o3 .. a .. b"),
                     "1122-123");
}

Test(script_libs, cmsgpack_bad_input_is_an_error)
{
    cr_assert(strstr(run("return cmsgpack.unpack('\\146\\1')"), "Missing bytes in input."));
    cr_assert(strstr(run("return cmsgpack.unpack('\\193')"), "Bad data format in input."));
    cr_assert(strstr(run("return cmsgpack.pack()"), "MessagePack pack needs input."));
    /* nesting past the limit is refused, not recursed into */
    cr_assert(strstr(run("return cmsgpack.unpack(string.rep('\\145', 5000) .. '\\1')"),
                     "too many items"));
}

Test(script_libs, struct_packs_and_unpacks)
{
    cr_assert_str_eq(run(HEX "return hex(struct.pack('>I2', 258))"), "0102");
    cr_assert_str_eq(run(HEX "return hex(struct.pack('<i4', -2))"), "feffffff");
    cr_assert_str_eq(run(HEX "return hex(struct.pack('bc0s', 2, 'ab', 'z'))"), "0261627a00");
    cr_assert_str_eq(run("local a, b, n = struct.unpack('>I2i1', '\\1\\2\\255') "
                         "return a .. ' ' .. b .. ' ' .. n"),
                     "258 -1 4");
    cr_assert_str_eq(run("local s, n = struct.unpack('s', 'hey\\0rest') return s .. n"), "hey5");
    cr_assert_str_eq(run("local s, n = struct.unpack('Bc0', '\\3abc') return s .. n"), "abc5");
    cr_assert_str_eq(run("return struct.size('!4bi4d')"), "16");
    /* alignment and byte order switched inside one format, the three walks alike (the
     * values of redis-server 7.0.15) */
    cr_assert_str_eq(run(HEX "return hex(struct.pack('!4 b >i4 <h', 1, 2, 3))"),
                     "01000000000000020300");
    cr_assert_str_eq(run("local a, b, c, n = struct.unpack('!4 b >i4 <h', "
                         "struct.pack('!4 b >i4 <h', 1, 2, 3)) return a .. b .. c .. ' ' .. n"),
                     "123 11");
    cr_assert_str_eq(run("return struct.size('!8 b d')"), "16");
    cr_assert_str_eq(run("return struct.size('z')"), "0"); /* an unknown letter counts 0 */
    cr_assert(strstr(run("return struct.unpack('q', 'a')"), "invalid format option 'q'"));
}

Test(script_libs, struct_checks_formats_and_lengths)
{
    cr_assert(strstr(run("return struct.unpack('I4', 'ab')"), "data string too short"));
    cr_assert(strstr(run("return struct.pack('i33', 1)"), "integral size 33 is larger"));
    cr_assert(strstr(run("return struct.size('s')"), "has no fixed size"));
    cr_assert(strstr(run("return struct.pack('q', 1)"), "invalid format option 'q'"));
    cr_assert(strstr(run("return struct.pack('!3i', 1)"), "alignment 3 is not a power of 2"));
    cr_assert(strstr(run("return struct.unpack('i99999999999', 'a')"), "integral size overflow"));
}
