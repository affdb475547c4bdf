/* acl.h - users and their permissions, as Redis 7.0's ACL has them.
 *
 * A user has a name, on/off, a set of SHA-256 password hashes (or nopass) and one or more
 * selectors: the root selector plus any added with "(...)". A selector allows a set of
 * commands (by category, by command, by subcommand, or a command with a given first
 * argument), key patterns (read, write or both) and channel patterns. A command runs when
 * any one selector allows all of it. Rules are Redis's ACL SETUSER words: on off nopass
 * resetpass >pw <pw #hash !hash ~pat %R~pat %W~pat allkeys resetkeys &pat allchannels
 * resetchannels +cmd -cmd +cmd|sub +cmd|firstarg +@cat -@cat allcommands nocommands (...)
 * clearselectors reset.
 *
 * The commands' categories come from their rows (flags and group, as Redis derives them,
 * plus facts this file keeps for the categories flags do not give).
 *
 * Users live in one registry; "default" always exists. A client_t points at its user
 * (c->user, never NULL once acl_init ran); deleting a user closes the clients that use it.
 * Loop thread only. */
#ifndef CTE_SERVER_ACL_H
#define CTE_SERVER_ACL_H

#include "common/buf.h"
#include "resp/resp.h"
#include "server/client.h"
#include "server/command.h"

#include <stddef.h>
#include <stdint.h>

typedef struct acl_user acl_user_t;

/* Outcomes of a check, in Redis's order (a larger one is the more relevant denial). */
enum acl_result {
    ACL_OK = 0,
    ACL_DENIED_CMD = 1,
    ACL_DENIED_KEY = 2,
    ACL_DENIED_AUTH = 3,
    ACL_DENIED_CHANNEL = 4,
};

/* Where a denial happened, for ACL LOG's context field. */
enum acl_context { ACL_CTX_TOPLEVEL, ACL_CTX_MULTI, ACL_CTX_LUA };

/* ---- set-up ---------------------------------------------------------------------------- */

/* Indexes the command table (command_table_init must have run), creates the default user
 * ("on nopass ~* &* +@all"), applies requirepass, then the users of the config (`users:`) or
 * of the aclfile. 0, or -1 with a message in err (the server must not start: a bad rule, a
 * duplicate user, a bad aclfile line: "<file>:<line>: <reason>"). */
int acl_init(char *err, size_t errlen);
/* Frees every user and the log. */
void acl_deinit(void);
/* Before CONFIG REWRITE: srv.cfg.users becomes every user's rules ("name rules..."), as Redis
 * writes its `user` lines; left alone when an aclfile holds the users. */
void acl_config_sync_users(void);
/* A setting changed: requirepass updates the default user's password (as Redis does). */
int acl_config_changed(const char *name, char *err, size_t errlen);

/* ---- users ----------------------------------------------------------------------------- */

/* The user named name[0..len), or NULL. Valid until it is deleted (ACL DELUSER, LOAD). */
acl_user_t *acl_user_find(const char *name, size_t len);
acl_user_t *acl_default_user(void);
const char *acl_user_name(const acl_user_t *u);

/* A user outside the registry, as a new one starts ("off", no passwords, no permissions;
 * channels as acl-pubsub-default says). For tests and the fuzzer. Free with acl_user_free. */
acl_user_t *acl_user_new(const char *name, size_t len);
void acl_user_free(acl_user_t *u);
/* Applies one rule op[0..len) to u. 0, or -1 with the reason in *why (a static string, the
 * text Redis gives: "Syntax error", "Unknown command or category name in ACL", ...). On
 * failure u may be partly changed: callers that need all-or-nothing apply rules to a copy
 * (acl_user_setrules does). */
int acl_user_apply(acl_user_t *u, const char *op, size_t len, const char **why);
/* Applies the rules argv[0..argc) to u all or nothing: words of a selector spread over
 * several arguments ("(~a", "+get)") are merged first. 0, or -1 with the error line
 * (without "ERR ") appended to err and u unchanged. */
int acl_user_setrules(acl_user_t *u, int argc, const resp_arg_t *argv, buf_t *err);
/* Appends the rules that recreate u, as ACL LIST shows them after "user <name> ". */
void acl_user_describe(const acl_user_t *u, buf_t *out);
/* Whether u needs no password (nopass). */
int acl_user_nopass(const acl_user_t *u);
/* Whether pass[0..len) is one of u's passwords (or u is nopass), in time that does not
 * depend on where a stored hash differs nor on nopass (the password is always hashed, so
 * AUTH costs the same for a missing user). Ignores on/off. */
int acl_user_password_ok(const acl_user_t *u, const char *pass, size_t len);

/* ACL SETUSER name rules...: creates the user if missing; all or nothing. Clients of the
 * user that are subscribed to channels it may no longer use are closed. 0, or -1 with the
 * error line (without "ERR ") in err. */
int acl_setuser(const char *name, size_t len, int argc, const resp_arg_t *argv, buf_t *err);
/* Deletes the user (not "default") and closes its clients (the current one after its
 * reply). Returns 1 if it existed. */
int acl_deluser(client_t *current, const char *name, size_t len);
/* Calls fn for every user in name order. */
void acl_foreach_user(void (*fn)(void *ud, acl_user_t *u), void *ud);

/* ---- checks ---------------------------------------------------------------------------- */

/* Whether user u may run cmd with argv[0..argc) (argv[0] is the command name): ACL_OK or
 * the most relevant denial, with the argv index of the key or channel refused in *pos (0
 * for a command denial). u NULL allows everything. */
int acl_check_user(const acl_user_t *u, const command_t *cmd, int argc, const resp_arg_t *argv,
                   int *pos);
/* The same for client c's user (clients replaying the append-only file may do anything).
 * The one check every caller uses: the dispatcher, EXEC and scripts' redis.call. */
int acl_check_command(const client_t *c, const command_t *cmd, int argc, const resp_arg_t *argv,
                      int *pos);
/* Checks c->cmd with c->argv; when denied, adds an ACL LOG entry (context as given) and
 * replies with Redis's -NOPERM error (for EXEC: -EXECABORT, discarding the transaction, see
 * multi_exec_rejected), returning -1. 0 when allowed. */
int acl_reject_or_reply(client_t *c, int context);
/* Whether one selector of c's user that allows c->cmd with c->argv may also touch every key
 * (allkeys, or a "*" pattern with the access asked: ACL_KEYS_READ and/or ACL_KEYS_WRITE).
 * SORT's BY and GET patterns need it. */
#define ACL_KEYS_READ 1
#define ACL_KEYS_WRITE 2
int acl_check_all_keys(const client_t *c, int access);
/* The -NOPERM line (without the '-') Redis replies for a denial at the top level. */
void acl_denial_message(int result, const command_t *cmd, buf_t *out);
/* The error Redis 7.0 gives a script's redis.call for a denial (without "ERR "): "The user
 * executing the script can't run this command or subcommand", ... The caller logs it with
 * acl_log_add(..., ACL_CTX_LUA, ...). */
const char *acl_script_denial_message(int result);
/* Adds (or counts again) an ACL LOG entry: reason is an acl_result, object the command's
 * full name, the key, the channel or (for ACL_DENIED_AUTH) the command that tried;
 * username NULL means c's user. */
void acl_log_add(client_t *c, int reason, int context, const char *object, size_t objlen,
                 const char *username, size_t ulen);

/* ---- clients --------------------------------------------------------------------------- */

/* Gives c the default user, authenticated if that user is on and nopass (new connections,
 * RESET). */
void acl_client_reset(client_t *c);
/* Whether c must authenticate before running cmd (the default user has a password or is
 * off, and c did not authenticate). */
int acl_auth_required(const client_t *c);
/* AUTH / HELLO AUTH: on success c becomes the user and 0 is returned; else an ACL LOG entry
 * is added (object argv[0] of the command) and -1 returned; the caller replies. */
int acl_authenticate(client_t *c, const resp_arg_t *user, const resp_arg_t *pass);
/* The name of c's user, for CLIENT LIST's user= field. */
const char *acl_client_user_name(const client_t *c);

/* ---- categories ------------------------------------------------------------------------ */

/* Calls fn with each of cmd's categories ("write", "fast", ... without '@'). */
void acl_command_categories(const command_t *cmd, void (*fn)(void *ud, const char *cat), void *ud);
/* The number of categories. */
int acl_category_count(void);
/* The name of category i (0 <= i < acl_category_count()), as ACL CAT lists them. */
const char *acl_category_name(int i);
/* The index of the category named name[0..len) (case-insensitive), or -1. */
int acl_category_find(const char *name, size_t len);
/* Calls fn with the full name of every command and subcommand of category i. */
void acl_category_commands(int i, void (*fn)(void *ud, const char *fullname), void *ud);

/* ---- ACL LOG, SAVE, LOAD (server/cmd/acl.c) --------------------------------------------- */

/* ACL GETUSER's reply for u: flags, passwords, commands, keys, channels, selectors. */
void acl_getuser_reply(client_t *c, const acl_user_t *u);
/* Replies with the newest count entries (count < 0: all). */
void acl_log_reply(client_t *c, long long count);
void acl_log_reset(void);
/* ACL SAVE: writes every user to the aclfile. 0, or -1 with the message in err. */
int acl_save(char *err, size_t errlen);
/* ACL LOAD: replaces every user by the aclfile's (all or nothing); the clients of users that
 * were replaced are closed (current after its reply). 0, or -1 with the message in err. */
int acl_load(client_t *current, buf_t *err);

#endif
