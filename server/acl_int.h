/* acl_int.h - inside the ACL module: the user and selector layouts shared by acl.c (rules,
 * matching, descriptions, categories) and acl_users.c (the registry, clients, AUTH, the log
 * and the aclfile). Only those two files and their unit tests include it.
 *
 * Commands are numbered at acl_init (acl__index): every top-level command in name order,
 * each followed by its subcommands. A selector's allowed[] has one bit per number, plus
 * ACL__FUTURE_BIT, which only +@all / allcommands sets: it marks a selector that started
 * from everything (ACL GETUSER then describes it as "+@all" minus what was removed). */
#ifndef CTE_SERVER_ACL_INT_H
#define CTE_SERVER_ACL_INT_H

#include "common/sha256.h"
#include "server/acl.h"

#define ACL__MAX_CMDS 1024
#define ACL__WORDS (ACL__MAX_CMDS / 64)
#define ACL__FUTURE_BIT (ACL__MAX_CMDS - 1)

/* Limits of one user (a rule past them is refused): key patterns and channel patterns per
 * selector, first arguments per command per selector, selectors besides the root. */
#define ACL__MAX_PATTERNS 10000
#define ACL__MAX_FIRSTARGS 1000
#define ACL__MAX_SELECTORS 1000
#define ACL__STR(x) #x
#define ACL__XSTR(x) ACL__STR(x)

/* selector flags */
#define ACL__SEL_ROOT 1u
#define ACL__SEL_ALLKEYS 2u
#define ACL__SEL_ALLCHANNELS 4u
#define ACL__SEL_ALLCOMMANDS 8u

/* user flags, in the order ACL LIST shows them */
#define ACL__USER_ON 1u
#define ACL__USER_OFF 2u
#define ACL__USER_NOPASS 4u
#define ACL__USER_SKIP_SANITIZE 8u
#define ACL__USER_SANITIZE 16u

/* the user flags' names, in that order, ending with {0, NULL} */
typedef struct acl__flag_name {
    uint32_t flag;
    const char *name;
} acl__flag_name_t;
extern const acl__flag_name_t acl__user_flags[];

/* key pattern permissions */
#define ACL__KEY_READ 1
#define ACL__KEY_WRITE 2

typedef struct acl__pattern {
    char *s;
    size_t len;
    int flags; /* keys: ACL__KEY_*; channels: 0 */
} acl__pattern_t;

typedef struct acl__firstargs {
    int id;
    int n;
    char **args; /* NUL-terminated, compared case-insensitively */
} acl__firstargs_t;

typedef struct acl__selector {
    uint32_t flags;
    uint64_t allowed[ACL__WORDS];
    acl__pattern_t *keys;
    int nkeys;
    acl__pattern_t *chans;
    int nchans;
    acl__firstargs_t *fa;
    int nfa;
} acl__selector_t;

struct acl_user {
    char *name;
    size_t len;
    uint32_t flags;
    char (*pass)[SHA256_HEX_LEN + 1]; /* hex hashes, in the order added */
    int npass;
    acl__selector_t **sel; /* sel[0] is the root selector */
    int nsel;
};

/* Numbers the commands and works out their categories. Idempotent. */
void acl__index(void);
/* Deep copy of src into dst (which owns nothing yet). */
void acl__user_copy(acl_user_t *dst, const acl_user_t *src);
/* Frees what u owns, leaving the struct. */
void acl__user_clear(acl_user_t *u);
/* Whether channel[0..len) (a pattern itself when is_pattern) is allowed by the patterns. */
int acl__channel_ok(const acl__pattern_t *pats, int n, const char *ch, size_t len, int is_pattern);
/* Merges "(a", "b", "c)" into "(a b c)": words[0..returned) get the merged words (each a
 * buf_t the caller deinitializes; words has room for argc), or -1 with the index of an
 * unclosed '(' in *bad (nothing to free). */
int acl__merge_args(int argc, const resp_arg_t *argv, buf_t *words, int *bad);
/* "Unknown command or category name in ACL" (the one reason an aclfile reports per rule). */
const char *acl__unknown_reason(void);
/* GETUSER's commands, keys and channels strings of one selector, appended to the buffers. */
void acl__describe_fields(const acl__selector_t *s, buf_t *commands, buf_t *keys, buf_t *chans);
/* Whether acl-pubsub-default is allchannels. */
int acl__pubsub_default_all(void);

#endif
