/* server/cmd/acl.c - the ACL command: CAT DELUSER DRYRUN GENPASS GETUSER HELP LIST LOAD LOG
 * SAVE SETUSER USERS WHOAMI, replies and errors as Redis 7.0's (the users, rules and checks
 * are server/acl.h's). Loop thread. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/acl.h"
#include "server/cmd/cmd.h"
#include "server/reply.h"
#include "server/server.h"

#include <stdio.h>
#include <string.h>

static void reply_usage_error_n(client_t *c)
{
    int n = (int)(c->argv[1].len > 128 ? 128 : c->argv[1].len);
    reply_errorf(c,
                 "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL "
                 "HELP.",
                 n, c->argv[1].ptr);
}

static void setuser_cmd(client_t *c)
{
    buf_t err;
    buf_init(&err);
    if (acl_setuser(c->argv[2].ptr, c->argv[2].len, c->argc - 3, c->argv + 3, &err) == 0)
        reply_ok(c);
    else
        reply_errorf(c, "ERR %s", err.data);
    buf_deinit(&err);
}

static void getuser_cmd(client_t *c)
{
    acl_user_t *u = acl_user_find(c->argv[2].ptr, c->argv[2].len);
    if (!u)
        reply_null(c);
    else
        acl_getuser_reply(c, u);
}

static void deluser_cmd(client_t *c)
{
    for (int j = 2; j < c->argc; j++) {
        if (c->argv[j].len == 7 && !memcmp(c->argv[j].ptr, "default", 7)) {
            reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    }
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) deleted += acl_deluser(c, c->argv[j].ptr, c->argv[j].len);
    reply_int(c, deleted);
}

static void count_user(void *ud, acl_user_t *u)
{
    (*(long long *)ud)++;
}

static void reply_user_name(void *ud, acl_user_t *u)
{
    reply_bulk_cstr(ud, acl_user_name(u));
}

static void reply_user_line(void *ud, acl_user_t *u)
{
    buf_t line;
    buf_init(&line);
    buf_printf(&line, "user %s ", acl_user_name(u));
    acl_user_describe(u, &line);
    reply_bulk(ud, line.data, line.len);
    buf_deinit(&line);
}

static void users_cmd(client_t *c)
{
    long long n = 0;
    acl_foreach_user(count_user, &n);
    reply_array(c, n);
    acl_foreach_user(reply_user_name, c);
}

static void list_cmd(client_t *c)
{
    long long n = 0;
    acl_foreach_user(count_user, &n);
    reply_array(c, n);
    acl_foreach_user(reply_user_line, c);
}

static void whoami_cmd(client_t *c)
{
    reply_bulk_cstr(c, acl_client_user_name(c));
}

typedef struct cat_list {
    client_t *c;
    long long n;
} cat_list_t;

static void count_cat_cmd(void *ud, const char *name)
{
    ((cat_list_t *)ud)->n++;
}

static void reply_cat_cmd(void *ud, const char *name)
{
    reply_bulk_cstr(((cat_list_t *)ud)->c, name);
}

static void cat_cmd(client_t *c)
{
    if (c->argc > 3) {
        reply_usage_error_n(c);
        return;
    }
    if (c->argc == 2) {
        reply_array(c, acl_category_count());
        for (int i = 0; i < acl_category_count(); i++) reply_bulk_cstr(c, acl_category_name(i));
        return;
    }
    int cat = acl_category_find(c->argv[2].ptr, c->argv[2].len);
    if (cat < 0) {
        reply_errorf(c, "ERR Unknown category '%.*s'", (int)c->argv[2].len, c->argv[2].ptr);
        return;
    }
    cat_list_t l = {c, 0};
    acl_category_commands(cat, count_cat_cmd, &l);
    reply_array(c, l.n);
    acl_category_commands(cat, reply_cat_cmd, &l);
}

static void log_cmd(client_t *c)
{
    if (c->argc > 3) {
        reply_usage_error_n(c);
        return;
    }
    long long count = 10;
    if (c->argc == 3) {
        if (arg_is(&c->argv[2], "RESET")) {
            acl_log_reset();
            reply_ok(c);
            return;
        }
        if (arg_ll_or_reply(c, &c->argv[2], &count, NULL) < 0) return;
        if (count < 0) count = 0;
    }
    acl_log_reply(c, count);
}

static void genpass_cmd(client_t *c)
{
    long long bits = 256;
    if (c->argc > 3) {
        reply_usage_error_n(c);
        return;
    }
    if (c->argc == 3 && arg_ll_or_reply(c, &c->argv[2], &bits, NULL) < 0) return;
    if (bits <= 0 || bits > 4096) {
        reply_error(c, "ERR ACL GENPASS argument must be the number of bits for the output "
                       "password, a positive number up to 4096");
        return;
    }
    static const char digits[] = "0123456789abcdef";
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[512];
    char out[1025];
    random_bytes(raw, (chars + 1) / 2);
    for (size_t i = 0; i < chars; i++) out[i] = digits[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    reply_bulk(c, out, chars);
}

static void dryrun_cmd(client_t *c)
{
    acl_user_t *u = acl_user_find(c->argv[2].ptr, c->argv[2].len);
    if (!u) {
        reply_errorf(c, "ERR User '%.*s' not found", (int)c->argv[2].len, c->argv[2].ptr);
        return;
    }
    const resp_arg_t *argv = c->argv + 3;
    int argc = c->argc - 3;
    const command_t *cmd = command_lookup(&argv[0]);
    /* a container alone stays itself (then fails its arity check), as Redis's lookup */
    if (cmd && cmd->subcommands && argc >= 2) cmd = command_lookup_sub(cmd, &argv[1]);
    if (!cmd) {
        reply_errorf(c, "ERR Command '%.*s' not found", (int)argv[0].len, argv[0].ptr);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        return;
    }
    int pos, r = acl_check_user(u, cmd, argc, argv, &pos);
    if (r == ACL_OK) {
        reply_ok(c);
        return;
    }
    buf_t msg;
    buf_init(&msg);
    if (r == ACL_DENIED_CMD)
        buf_printf(&msg, "This user has no permissions to run the '%s' command", cmd->fullname);
    else
        buf_printf(&msg, "This user has no permissions to access the '%.*s' %s", (int)argv[pos].len,
                   argv[pos].ptr, r == ACL_DENIED_KEY ? "key" : "channel");
    reply_bulk(c, msg.data, msg.len);
    buf_deinit(&msg);
}

static void save_cmd(client_t *c)
{
    char err[512];
    if (acl_save(err, sizeof(err)) == 0)
        reply_ok(c);
    else
        reply_errorf(c, "ERR %s", err);
}

static void load_cmd(client_t *c)
{
    buf_t err;
    buf_init(&err);
    if (acl_load(c, &err) == 0)
        reply_ok(c);
    else
        reply_errorf(c, "ERR %s", err.data);
    buf_deinit(&err);
}

static void help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        ("    Returns whether the user can execute the given command without executing the "
         "command."),
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof(lines) / sizeof(lines[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, lines[i]);
}

#define ACL_ADMIN (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define ACL_PLAIN (CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)

static command_t acl_subcommands[] = {
    {"cat", cat_cmd, -2, ACL_PLAIN, 0, 0, 0, "server", "6.0.0",
     "Lists the ACL categories, or the commands inside a category.",
     "O(1) since the categories and commands are a fixed set."},
    {"deluser", deluser_cmd, -3, ACL_ADMIN, 0, 0, 0, "server", "6.0.0",
     "Deletes ACL users, and terminates their connections.",
     "O(1) amortized time considering "
     "the typical user."},
    {"dryrun", dryrun_cmd, -4, ACL_ADMIN, 0, 0, 0, "server", "7.0.0",
     "Simulates the execution of a command by a user, without executing the command.", "O(1)."},
    {"genpass", genpass_cmd, -2, ACL_PLAIN, 0, 0, 0, "server", "6.0.0",
     "Generates a pseudorandom, secure password that can be used to identify ACL users.", "O(1)"},
    {"getuser", getuser_cmd, 3, ACL_ADMIN, 0, 0, 0, "server", "6.0.0",
     "Lists the ACL rules of a user.",
     "O(N). Where N is the number of password, command and "
     "pattern rules that the user has."},
    {"help", help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "6.0.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {"list", list_cmd, 2, ACL_ADMIN, 0, 0, 0, "server", "6.0.0",
     "Dumps the effective rules in ACL file format.",
     "O(N). Where N is the number of "
     "configured users."},
    {"load", load_cmd, 2, ACL_ADMIN, 0, 0, 0, "server", "6.0.0",
     "Reloads the rules from the configured ACL file.",
     "O(N). Where N is the number of "
     "configured users."},
    {"log", log_cmd, -2, ACL_ADMIN, 0, 0, 0, "server", "6.0.0",
     "Lists recent security events generated due to ACL rules.",
     "O(N) with N being the number of entries shown."},
    {"save", save_cmd, 2, ACL_ADMIN, 0, 0, 0, "server", "6.0.0",
     "Saves the effective ACL rules in the configured ACL file.",
     "O(N). Where N is the number of configured users."},
    {"setuser", setuser_cmd, -3, ACL_ADMIN, 0, 0, 0, "server", "6.0.0",
     "Creates and modifies an ACL user and its rules.",
     "O(N). Where N is the number of rules provided."},
    {"users", users_cmd, 2, ACL_ADMIN, 0, 0, 0, "server", "6.0.0", "Lists all ACL users.",
     "O(N). Where N is the number of configured users."},
    {"whoami", whoami_cmd, 2, ACL_PLAIN, 0, 0, 0, "server", "6.0.0",
     "Returns the authenticated username of the current connection.", "O(1)"},
    {NULL},
};

static void acl_container_cmd(client_t *c)
{
    /* only reached with no subcommand: the dispatcher resolves subcommands */
    reply_arity_error(c);
}

command_t cmds_acl[] = {
    {"acl", acl_container_cmd, -2, CMD_SENTINEL, 0, 0, 0, "server", "6.0.0",
     "A container for Access List Control commands.", "Depends on subcommand.", NULL,
     acl_subcommands},
    {NULL},
};
