/* fuzz_bus_msg.c - libFuzzer target for the cluster bus codec (server/cluster/bus_msg.c): any
 * bytes a peer could send to the bus port.
 *
 * Invariants checked:
 *  - bus_msg_peek answers ST_PENDING, a BUS_E* code, or a length within the bounds;
 *  - bus_msg_decode of the whole input answers 0 or a BUS_E* code, and of every prefix the
 *    reader would hand it (peek's length) the same as of a copy of exactly that size;
 *  - a message that decodes re-encodes to exactly the same bytes (the format has one encoding
 *    per message), and its gossip entries all read back.
 * ASan and UBSan catch any read past the input. */
#include "common/buf.h"
#include "common/status.h"
#include "server/cluster/bus_msg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "check failed: %s (line %d)\n", #cond, __LINE__);                      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static int is_bus_err(int rc)
{
    return rc == BUS_EMAGIC || rc == BUS_EVERSION || rc == BUS_ETYPE || rc == BUS_ELENGTH ||
           rc == BUS_EFIELD;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t len = 0;
    int rc = bus_msg_peek(data, size, &len);
    CHECK(rc == 0 || rc == ST_PENDING || is_bus_err(rc));
    if (rc == 0) CHECK(len >= BUS_HDR_LEN && len <= BUS_MSG_MAX);
    if (rc == ST_PENDING) CHECK(size < BUS_PREFIX_LEN);

    /* exactly the bytes the reader would collect */
    size_t n = rc == 0 && len <= size ? len : size;
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, data, n);
    bus_msg_t m;
    int drc = bus_msg_decode(copy, n, &m);
    CHECK(drc == 0 || is_bus_err(drc));
    if (drc == 0) {
        CHECK(m.hdr.type >= BUS_MEET && m.hdr.type <= BUS_TYPE_LAST);
        bus_gossip_t *g = m.count ? malloc(sizeof(*g) * m.count) : NULL;
        for (int i = 0; i < m.count; i++) bus_msg_gossip(&m, i, &g[i]);
        m.gossip = g;
        buf_t b;
        buf_init(&b);
        CHECK(bus_msg_encode(&m, &b) == n);
        CHECK(memcmp(b.data, copy, n) == 0);
        buf_deinit(&b);
        free(g);
    }
    free(copy);
    return 0;
}
