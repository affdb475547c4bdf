/* lzf.h - LZF compression with the exact choices of the liblzf 3.6 that Redis bundles.
 *
 * Redis compresses RDB strings with liblzf built with HLOG 16, VERY_FAST, no table
 * initialisation. lzf_compress() makes the same choices (same hash of the next three bytes and
 * the byte before them, same 16-bit table, same re-hashing after a match, a match never
 * starting at offset 0, the last two bytes never matched), so its output is byte for byte what
 * Redis writes for the same input: DUMP payloads compare equal. Redis's table starts with
 * whatever the stack held; ours starts empty (see lzf.c).
 *
 * Format (what lzf_decompress reads):
 *   000LLLLL + L+1 bytes        literal run of 1..32 bytes
 *   LLLooooo oooooooo           back-reference of L+2 (3..8) bytes, offset o+1 (1..8192)
 *   111ooooo LLLLLLLL oooooooo  back-reference of L+9 (9..264) bytes
 *
 * Both functions are safe on any input and thread-safe (the compressor's table is per
 * thread, allocated on first use and kept). */
#ifndef CTE_COMMON_LZF_H
#define CTE_COMMON_LZF_H

#include <stddef.h>

/* Compresses in[0..in_len) into out (out_len bytes). Returns the compressed size, or 0 when
 * it does not fit in out_len bytes (or in_len or out_len is 0). Redis calls it with
 * out_len = in_len - 4 and stores the string verbatim on 0. */
size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_len);
/* Decompresses in[0..in_len) into out (out_len bytes). Returns the decompressed size, or 0 if
 * the input is malformed (a reference before the start, a run past either buffer) or does not
 * fit. */
size_t lzf_decompress(const void *in, size_t in_len, void *out, size_t out_len);

#endif
