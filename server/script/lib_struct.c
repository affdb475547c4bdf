/* lib_struct.c - the struct library of Redis's scripts: binary packing of numbers and
 * strings by a format, as Roberto Ierusalimschy's struct library (the version Redis ships).
 *
 * struct.pack(fmt, v...), struct.unpack(fmt, s [, pos]) (the values, then the next 1-based
 * position) and struct.size(fmt). Format: '<' little and '>' big endian (default: little,
 * the machine's), '!n' alignment (a power of 2, default 1), 'b'/'B' char, 'h'/'H' short,
 * 'l'/'L' long, 'T' size_t, 'i'/'I'[n] an integer of n bytes (default 4, at most 32), 'f'
 * float, 'd' double, 's' zero-terminated string, 'c'[n] n chars ('c0': the string's length
 * when packing, the previous value when unpacking), 'x' a zero byte, ' ' nothing. Lower case
 * is signed. Sizes in the format are checked against overflow; every read is checked against
 * the data's length. Loop thread. */
#include "server/script/libs.h"

#include <ctype.h>
#include <lauxlib.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAXINTSIZE 32
#define MAXALIGN 8
enum { BIG = 0, LITTLE = 1 };

typedef struct header {
    int endian;
    int align;
} header_t;

static const int native_endian = LITTLE; /* x86-64 and the other targets we build for */

static int getnum(lua_State *L, const char **fmt, int df)
{
    if (!isdigit((unsigned char)**fmt)) return df;
    int a = 0;
    do {
        if (a > INT_MAX / 10 || a * 10 > INT_MAX - (**fmt - '0'))
            luaL_error(L, "integral size overflow");
        a = a * 10 + *((*fmt)++) - '0';
    } while (isdigit((unsigned char)**fmt));
    return a;
}

static size_t optsize(lua_State *L, char opt, const char **fmt)
{
    switch (opt) {
    case 'B':
    case 'b':
        return sizeof(char);
    case 'H':
    case 'h':
        return sizeof(short);
    case 'L':
    case 'l':
        return sizeof(long);
    case 'T':
        return sizeof(size_t);
    case 'f':
        return sizeof(float);
    case 'd':
        return sizeof(double);
    case 'x':
        return 1;
    case 'c':
        return (size_t)getnum(L, fmt, 1);
    case 'i':
    case 'I': {
        int sz = getnum(L, fmt, sizeof(int));
        if (sz > MAXINTSIZE)
            luaL_error(L, "integral size %d is larger than limit of %d", sz, MAXINTSIZE);
        return (size_t)sz;
    }
    default:
        return 0;
    }
}

static int gettoalign(size_t len, header_t *h, int opt, size_t size)
{
    if (size == 0 || opt == 'c') return 0;
    if (size > (size_t)h->align) size = (size_t)h->align;
    return (int)((size - (len & (size - 1))) & (size - 1));
}

static void controloptions(lua_State *L, int opt, const char **fmt, header_t *h)
{
    switch (opt) {
    case ' ':
        return;
    case '>':
        h->endian = BIG;
        return;
    case '<':
        h->endian = LITTLE;
        return;
    case '!': {
        int a = getnum(L, fmt, MAXALIGN);
        if (a <= 0 || (a & (a - 1))) luaL_error(L, "alignment %d is not a power of 2", a);
        h->align = a;
        return;
    }
    default: {
        const char *msg = lua_pushfstring(L, "invalid format option '%c'", opt);
        luaL_argerror(L, 1, msg);
    }
    }
}

/* A walk over a format string, the one pack, unpack and size share. */
typedef struct fmt_walk {
    const char *fmt;
    header_t h;
} fmt_walk_t;

/* The next item of w's format at offset pos: its option letter, its size and the padding
 * that aligns it; the control options on the way ('>', '<', '!n', ' ') are applied to w->h.
 * An unknown letter comes back as an item (pack and unpack refuse it, size counts it as 0).
 * Returns 0 at the end of the format; raises a Lua error for a bad size or control option. */
static int next_item(lua_State *L, fmt_walk_t *w, size_t pos, int *opt, size_t *size, size_t *pad)
{
    while (*w->fmt) {
        int o = *w->fmt++;
        size_t sz = optsize(L, (char)o, &w->fmt);
        if (!isalnum(o)) {
            controloptions(L, o, &w->fmt, &w->h);
            continue;
        }
        *opt = o;
        *size = sz;
        *pad = (size_t)gettoalign(pos, &w->h, o, sz);
        return 1;
    }
    return 0;
}

static void putinteger(lua_State *L, luaL_Buffer *b, int arg, int endian, int size)
{
    lua_Number n = luaL_checknumber(L, arg);
    uint64_t value = n < 0 ? (uint64_t)(int64_t)n : (uint64_t)n;
    char buff[MAXINTSIZE];
    for (int i = 0; i < size; i++) {
        int at = endian == LITTLE ? i : size - 1 - i;
        buff[at] = (char)(value & 0xff);
        value = i < 7 ? value >> 8 : 0;
    }
    luaL_addlstring(b, buff, (size_t)size);
}

static void correctbytes(char *b, int size, int endian)
{
    if (endian == native_endian) return;
    for (int i = 0; i < --size; i++) {
        char t = b[i];
        b[i] = b[size];
        b[size] = t;
    }
}

static int b_pack(lua_State *L)
{
    luaL_Buffer b;
    fmt_walk_t w = {luaL_checkstring(L, 1), {native_endian, 1}};
    int arg = 2, opt;
    size_t totalsize = 0, size, pad;
    lua_pushnil(L); /* separates the arguments from the buffer */
    luaL_buffinit(L, &b);
    while (next_item(L, &w, totalsize, &opt, &size, &pad)) {
        totalsize += pad;
        while (pad-- > 0) luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I':
            putinteger(L, &b, arg++, w.h.endian, (int)size);
            break;
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float f = (float)luaL_checknumber(L, arg++);
            correctbytes((char *)&f, (int)size, w.h.endian);
            luaL_addlstring(&b, (char *)&f, size);
            break;
        }
        case 'd': {
            double d = luaL_checknumber(L, arg++);
            correctbytes((char *)&d, (int)size, w.h.endian);
            luaL_addlstring(&b, (char *)&d, size);
            break;
        }
        case 'c':
        case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);
            if (size == 0) size = l;
            luaL_argcheck(L, l >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default: /* an unknown letter: raises */
            controloptions(L, opt, &w.fmt, &w.h);
        }
        totalsize += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number getinteger(const char *buff, int endian, int issigned, int size)
{
    uint64_t l = 0;
    for (int i = 0; i < size; i++) {
        int at = endian == BIG ? i : size - 1 - i;
        l = (l << 8) | (unsigned char)buff[at];
    }
    if (!issigned) return (lua_Number)l;
    if (size * 8 - 1 < 64) {
        uint64_t mask = ~(uint64_t)0 << (size * 8 - 1);
        if (l & mask) l |= mask;
    }
    return (lua_Number)(int64_t)l;
}

static int b_unpack(lua_State *L)
{
    fmt_walk_t w = {luaL_checkstring(L, 1), {native_endian, 1}};
    size_t ld, size, pad;
    const char *data = luaL_checklstring(L, 2, &ld);
    lua_Integer start = luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, start > 0, 3, "offset must be 1 or greater");
    size_t pos = (size_t)start - 1;
    int n = 0, opt;
    while (next_item(L, &w, pos, &opt, &size, &pad)) {
        pos += pad;
        luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I':
            lua_pushnumber(L, getinteger(data + pos, w.h.endian, islower(opt), (int)size));
            n++;
            break;
        case 'x':
            break;
        case 'f': {
            float f;
            memcpy(&f, data + pos, size);
            correctbytes((char *)&f, sizeof(f), w.h.endian);
            lua_pushnumber(L, f);
            n++;
            break;
        }
        case 'd': {
            double d;
            memcpy(&d, data + pos, size);
            correctbytes((char *)&d, sizeof(d), w.h.endian);
            lua_pushnumber(L, d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1))
                    luaL_error(L, "format 'c0' needs a previous size");
                lua_Number want = lua_tonumber(L, -1);
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, want >= 0 && want <= (lua_Number)ld && pos <= ld - (size_t)want, 2,
                              "data string too short");
                size = (size_t)want;
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (!e) luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default: /* an unknown letter: raises */
            controloptions(L, opt, &w.fmt, &w.h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1);
    return n + 1;
}

static int b_size(lua_State *L)
{
    fmt_walk_t w = {luaL_checkstring(L, 1), {native_endian, 1}};
    size_t pos = 0, size, pad;
    int opt;
    while (next_item(L, &w, pos, &opt, &size, &pad)) {
        pos += pad;
        if (opt == 's')
            luaL_argerror(L, 1, "options 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int script_open_struct(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", b_pack},
        {"unpack", b_unpack},
        {"size", b_size},
        {NULL, NULL},
    };
    luaL_register(L, "struct", fns);
    return 1;
}
