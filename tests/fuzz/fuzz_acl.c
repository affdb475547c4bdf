/* fuzz_acl.c - libFuzzer target for ACL rules: server/acl.c's parser (acl_user_setrules, the
 * words of ACL SETUSER and of aclfile lines), its descriptions and its matcher.
 *
 * Input layout: byte 0's low bit sets acl-pubsub-default (allchannels when set); the rest is
 * lines, each a list of rules separated by spaces, applied in turn to one user; after the
 * rules, a line may start with '!' to be checked as a command line instead ("!GET k").
 *
 * Invariants checked:
 *  - all or nothing: a refused list of rules leaves the user's description as it was, with a
 *    NUL-terminated message;
 *  - the description (what ACL LIST and ACL SAVE write) applied to a new user describes that
 *    user the same way (ACL LOAD relies on this), unless a pattern holds '(' or ')' (a
 *    selector then cannot be told apart, in Redis too) or a "*" pattern came after others
 *    (it loads back as allkeys, or is refused when more patterns follow it: then the second
 *    description must load back as itself);
 *  - checking commands never fails on any user.
 * ASan, UBSan and libFuzzer's leak check catch memory errors and leaks. */
#include "common/buf.h"
#include "server/acl.h"
#include "server/command.h"
#include "server/rooms.h"
#include "server/server.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_acl.c:%d: CHECK(%s) failed\n", __LINE__, #cond);                 \
            __builtin_trap();                                                                      \
        }                                                                                          \
    } while (0)

#define MAX_WORDS 64

static int split(char *line, resp_arg_t *w)
{
    int n = 0;
    for (char *p = line; *p && n < MAX_WORDS;) {
        while (*p == ' ') p++;
        if (!*p) break;
        char *s = p;
        while (*p && *p != ' ') p++;
        w[n].ptr = s;
        w[n].len = (size_t)(p - s);
        n++;
    }
    return n;
}

static void describe(const acl_user_t *u, buf_t *out)
{
    buf_init(out);
    acl_user_describe(u, out);
}

/* Whether a word has a parenthesis besides one opening or closing a selector: a pattern or
 * a first argument may then hold one, and a description with it reads back otherwise. */
static int odd_parens(const resp_arg_t *w, int n)
{
    for (int i = 0; i < n; i++) {
        size_t b = 0, e = w[i].len;
        if (e && w[i].ptr[0] == '(') b++;
        if (e > b && w[i].ptr[e - 1] == ')') e--;
        if (memchr(w[i].ptr + b, '(', e - b) || memchr(w[i].ptr + b, ')', e - b)) return 1;
    }
    return 0;
}

/* The user the words of description d make, or NULL when they are refused. */
static acl_user_t *load(const char *d)
{
    char *copy = strdup(d);
    static resp_arg_t w[4096];
    int n = 0;
    for (char *p = copy; *p && n < (int)(sizeof(w) / sizeof(w[0]));) {
        while (*p == ' ') p++;
        if (!*p) break;
        char *s = p;
        while (*p && *p != ' ') p++;
        w[n++] = (resp_arg_t){s, (size_t)(p - s)};
    }
    acl_user_t *v = acl_user_new("v", 1);
    buf_t err;
    buf_init(&err);
    int rc = acl_user_setrules(v, n, w, &err);
    buf_deinit(&err);
    free(copy);
    if (rc == 0) return v;
    acl_user_free(v);
    return NULL;
}

/* A key pattern "*" next to others ("%RW~*" after "~a") is described as "~a ~*", which loads
 * back as allkeys alone, as in Redis: the same keys, another description. Then the loaded one
 * must describe itself stably. */
static void check_round_trip(const acl_user_t *u)
{
    buf_t d1, d2, d3;
    describe(u, &d1);
    acl_user_t *v = load(d1.data);
    if (!v) { /* "~* %W~x": a pattern after "~*" is refused on load, in Redis too */
        CHECK(strstr(d1.data, "~* ") != NULL);
        buf_deinit(&d1);
        return;
    }
    describe(v, &d2);
    if (d1.len != d2.len || memcmp(d1.data, d2.data, d1.len)) {
        CHECK(strstr(d1.data, "~* ") != NULL);
        acl_user_t *x = load(d2.data);
        CHECK(x != NULL);
        describe(x, &d3);
        CHECK(d2.len == d3.len && !memcmp(d2.data, d3.data, d2.len));
        buf_deinit(&d3);
        acl_user_free(x);
    }
    buf_deinit(&d1);
    buf_deinit(&d2);
    acl_user_free(v);
}

static void check_command(const acl_user_t *u, resp_arg_t *w, int n)
{
    if (n == 0) return;
    const command_t *cmd = command_lookup(&w[0]);
    if (cmd && cmd->subcommands) cmd = n > 1 ? command_lookup_sub(cmd, &w[1]) : NULL;
    if (!cmd) return;
    if ((cmd->arity > 0 && cmd->arity != n) || n < -cmd->arity) return;
    int pos = -1, r = acl_check_user(u, cmd, n, w, &pos);
    CHECK(r >= ACL_OK && r <= ACL_DENIED_CHANNEL && pos >= 0 && pos < n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        server_rooms_register();
        command_table_init();
        ready = 1;
    }
    if (size == 0 || size > 4096) return 0;
    srv.cfg.acl_pubsub_default = data[0] & 1;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    acl_user_t *u = acl_user_new("u", 1);
    int odd = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        resp_arg_t w[MAX_WORDS];
        if (line[0] == '!') {
            check_command(u, w, split(line + 1, w));
            continue;
        }
        int n = split(line, w);
        odd |= odd_parens(w, n);
        buf_t before, after, err;
        describe(u, &before);
        buf_init(&err);
        if (acl_user_setrules(u, n, w, &err) < 0) {
            CHECK(err.len > 0 && strlen(err.data) == err.len);
            describe(u, &after);
            CHECK(before.len == after.len && !memcmp(before.data, after.data, before.len));
            buf_deinit(&after);
        }
        buf_deinit(&before);
        buf_deinit(&err);
    }
    if (!odd) check_round_trip(u);
    acl_user_free(u);
    free(text);
    return 0;
}
