/* sha256.h - SHA-256 (FIPS 180-4), for hashing ACL passwords.
 *
 * Incremental: sha256_init, any number of sha256_update, sha256_final. The state is a plain
 * struct the caller owns (no allocation, no failure). Any thread; one state per thread. */
#ifndef CTE_COMMON_SHA256_H
#define CTE_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32
#define SHA256_HEX_LEN 64

typedef struct sha256 {
    uint32_t h[8];
    uint64_t bytes; /* total fed so far */
    uint8_t block[64];
    size_t fill; /* bytes waiting in block */
} sha256_t;

void sha256_init(sha256_t *s);
void sha256_update(sha256_t *s, const void *p, size_t len);
/* Writes the 32-byte digest; s must be initialised again before reuse. */
void sha256_final(sha256_t *s, uint8_t out[SHA256_DIGEST_LEN]);
/* One call: the digest of p[0..len) as 64 lower-case hex digits and a NUL in hex (65 bytes). */
void sha256_hex(const void *p, size_t len, char hex[SHA256_HEX_LEN + 1]);

#endif
