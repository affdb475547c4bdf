/* crc64.h - the CRC-64 that Redis puts at the end of RDB files and DUMP payloads.
 *
 * Jones polynomial (0xad93d23594c935a9), reflected input and output, initial value 0, no final
 * xor: crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca. Computed eight bytes at a time from
 * tables built once (crc64_init, or lazily by the first call). Thread-safe after the tables
 * exist; crc64_init is idempotent but not itself thread-safe, so call it once at start-up when
 * threads may compute CRCs. */
#ifndef CTE_COMMON_CRC64_H
#define CTE_COMMON_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* Builds the tables (the first crc64() call does it too). */
void crc64_init(void);
/* Continues crc over p[0..len): crc64(crc64(0, a, n), b, m) == crc64(0, a||b, n+m). */
uint64_t crc64(uint64_t crc, const void *p, size_t len);

#endif
