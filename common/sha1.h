/* sha1.h - SHA-1 (FIPS 180-4) of a whole buffer, as script names need it (EVALSHA,
 * redis.sha1hex). No allocation, no failure. Any thread. */
#ifndef CTE_COMMON_SHA1_H
#define CTE_COMMON_SHA1_H

#include <stddef.h>

/* Writes the 40 lower-case hex digits of SHA-1(p[0..len)) and a NUL to hex (41 bytes). */
void sha1_hex(const void *p, size_t len, char hex[41]);

#endif
