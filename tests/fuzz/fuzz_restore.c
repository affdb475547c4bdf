/* fuzz_restore.c - libFuzzer target for RESTORE's decoder: server/persist/rdb_load.c (every
 * value type and encoding of RDB 1-10) and common/rdb_walk.c.
 *
 * Input layout: the payload body (type byte and value). The target adds a version-10 footer
 * with a correct CRC, so that mutations reach the decoder rather than stop at the checksum,
 * and also hands the input as it is to rdb_dump_verify (its own footer, usually wrong).
 *
 * Invariants checked:
 *  - decoding answers RDB_OK or one of the error codes (RESTORE's "Bad data format"), never
 *    crashes, never reads outside the input (ASan), never allocates by an unchecked count;
 *  - a decoded value dumps again, and that payload decodes to a value of the same type and
 *    length and dumps to the same bytes (for encodings whose order is not a dict's);
 *  - the walker (rdbw_skip_value) never reads outside the input either; when the decoder
 *    accepted a value, the walker accepts it too.
 * Tag payloads (type 200) are left out: building a tag needs the server's tier store; the
 * integration tests restore corrupt tag payloads against the real server.
 * Seed corpus: corpus/restore/, payloads DUMPed by redis-server 7.0 of every type and
 * encoding (their footers stripped). */
#include "common/buf.h"
#include "common/crc64.h"
#include "server/persist/rdb.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_restore: check failed: %s (line %d)\n", #cond, __LINE__);        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void with_footer(buf_t *b, const uint8_t *data, size_t size)
{
    buf_append(b, data, size);
    buf_append(b, "\x0a\x00", 2);
    uint64_t crc = crc64(0, b->data, b->len);
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(crc >> (8 * i));
    buf_append(b, le, 8);
}

static void check_redump(const obj_t *o)
{
    buf_t again, third;
    obj_t *back = NULL;
    int version;
    buf_init(&again);
    buf_init(&third);
    rdb_dump(&again, o, 1);
    CHECK(rdb_dump_verify(again.data, again.len, &version));
    CHECK(rdb_dump_decode(again.data, again.len, version, &back) == RDB_OK);
    CHECK(back->type == o->type);
    CHECK(obj_length(back) == obj_length(o));
    rdb_dump(&third, back, 1);
    if (o->enc != ENC_HT && o->enc != ENC_SKIPLIST)
        CHECK(third.len == again.len && memcmp(third.data, again.data, again.len) == 0);
    obj_free(back);
    buf_deinit(&again);
    buf_deinit(&third);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    buf_t b;
    obj_t *o = NULL;
    int version;
    if (size == 0) return 0;
    if (data[0] == RDB_TYPE_CTE_TAG) return 0; /* tags need the server's tiers (tested there) */
    if (rdb_dump_verify(data, size, &version) && size > 10) { /* a footer that happens to fit */
        if (rdb_dump_decode(data, size, version, &o) == RDB_OK) obj_free(o);
        o = NULL;
    }
    buf_init(&b);
    with_footer(&b, data, size);
    CHECK(rdb_dump_verify(b.data, b.len, &version));
    int rc = rdb_dump_decode(b.data, b.len, version, &o);
    CHECK(rc == RDB_OK || rc == RDB_ERR || rc == RDB_ERR_EMPTY || rc == RDB_ERR_UNSUPPORTED ||
          rc == RDB_ERR_NOMEM);
    rdb_reader_t r = {.p = (const unsigned char *)b.data + 1,
                      .end = (const unsigned char *)b.data + b.len - 10,
                      .version = 10};
    int wrc = rdbw_is_value_type(data[0]) && data[0] != RDB_TYPE_MODULE
                  ? rdbw_skip_value(&r, data[0])
                  : RDB_ERR;
    if (rc == RDB_OK) {
        CHECK(o != NULL);
        CHECK(wrc == RDB_OK);
        check_redump(o);
        obj_free(o);
    }
    buf_deinit(&b);
    return 0;
}
