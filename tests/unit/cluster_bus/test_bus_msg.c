/* Tests for server/cluster/bus_msg.c: the cluster bus codec round-trips every message type,
 * and refuses every truncation, random garbage, an oversize length, a wrong version and each
 * malformed field without reading past what it was given. */
#include "common/status.h"
#include "common/util.h"
#include "server/cluster/bus_msg.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define ID_A "0123456789abcdef0123456789abcdef01234567"
#define ID_B "fedcba9876543210fedcba9876543210fedcba98"

static void sample_hdr(bus_hdr_t *h, int type)
{
    memset(h, 0, sizeof(*h));
    h->type = type;
    h->flags = BUS_F_PRIMARY;
    strcpy(h->sender, ID_A);
    h->current_epoch = 0x0102030405060708ull;
    h->config_epoch = 7;
    h->port = 30001;
    h->bus_port = 40001;
    strcpy(h->ip, "127.0.0.1");
    h->slots[0] = 0x81;
    h->slots[BUS_SLOT_BYTES - 1] = 0x80; /* slot 16383 */
    strcpy(h->hostname, "node-1.example.org");
}

static bus_gossip_t sample_gossip[3] = {
    {ID_B, 100, 200, "10.0.0.2", 7000, 17000, BUS_F_PRIMARY | BUS_F_PFAIL},
    {ID_A, 0, 0, "::1", 1, 65535, BUS_F_REPLICA},
    {ID_B, 0xffffffffu, 1, "", 0, 0, BUS_F_PRIMARY | BUS_F_NOADDR},
};

/* Encodes a PING with the three sample gossip entries into b. */
static void sample_ping(buf_t *b)
{
    bus_msg_t m = {0};
    sample_hdr(&m.hdr, BUS_PING);
    m.count = 3;
    m.gossip = sample_gossip;
    buf_init(b);
    cr_assert_eq(bus_msg_encode(&m, b), BUS_HDR_LEN + 3 * BUS_GOSSIP_LEN);
}

static void assert_hdr_eq(const bus_hdr_t *a, const bus_hdr_t *b)
{
    cr_assert_eq(a->type, b->type);
    cr_assert_eq(a->flags, b->flags);
    cr_assert_str_eq(a->sender, b->sender);
    cr_assert_str_eq(a->primary, b->primary);
    cr_assert_eq(a->current_epoch, b->current_epoch);
    cr_assert_eq(a->config_epoch, b->config_epoch);
    cr_assert_eq(a->port, b->port);
    cr_assert_eq(a->bus_port, b->bus_port);
    cr_assert_str_eq(a->ip, b->ip);
    cr_assert_eq(memcmp(a->slots, b->slots, BUS_SLOT_BYTES), 0);
    cr_assert_str_eq(a->hostname, b->hostname);
}

Test(bus_msg, ping_round_trips_with_its_gossip)
{
    buf_t b;
    sample_ping(&b);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), 0);
    bus_hdr_t want;
    sample_hdr(&want, BUS_PING);
    assert_hdr_eq(&d.hdr, &want);
    cr_assert_eq(d.count, 3);
    for (int i = 0; i < 3; i++) {
        bus_gossip_t g;
        bus_msg_gossip(&d, i, &g);
        cr_assert_str_eq(g.id, sample_gossip[i].id);
        cr_assert_eq(g.ping_sent, sample_gossip[i].ping_sent);
        cr_assert_eq(g.pong_received, sample_gossip[i].pong_received);
        cr_assert_str_eq(g.ip, sample_gossip[i].ip);
        cr_assert_eq(g.port, sample_gossip[i].port);
        cr_assert_eq(g.bus_port, sample_gossip[i].bus_port);
        cr_assert_eq(g.flags, sample_gossip[i].flags);
    }
    buf_deinit(&b);
}

Test(bus_msg, replica_header_carries_its_primary)
{
    bus_msg_t m = {0};
    sample_hdr(&m.hdr, BUS_PONG);
    m.hdr.flags = BUS_F_REPLICA | BUS_F_NOFAILOVER;
    strcpy(m.hdr.primary, ID_B);
    m.hdr.ip[0] = '\0';
    buf_t b;
    buf_init(&b);
    bus_msg_encode(&m, &b);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), 0);
    assert_hdr_eq(&d.hdr, &m.hdr);
    cr_assert_eq(d.count, 0);
    buf_deinit(&b);
}

Test(bus_msg, fail_and_update_round_trip)
{
    bus_msg_t m = {0};
    sample_hdr(&m.hdr, BUS_FAIL);
    strcpy(m.about, ID_B);
    buf_t b;
    buf_init(&b);
    cr_assert_eq(bus_msg_encode(&m, &b), BUS_HDR_LEN + BUS_FAIL_LEN);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), 0);
    cr_assert_str_eq(d.about, ID_B);
    assert_hdr_eq(&d.hdr, &m.hdr);

    buf_clear(&b);
    sample_hdr(&m.hdr, BUS_UPDATE);
    m.about_config_epoch = 99;
    memset(m.about_slots, 0, sizeof(m.about_slots));
    m.about_slots[100] = 0x5a;
    cr_assert_eq(bus_msg_encode(&m, &b), BUS_HDR_LEN + BUS_UPDATE_LEN);
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), 0);
    cr_assert_str_eq(d.about, ID_B);
    cr_assert_eq(d.about_config_epoch, 99);
    cr_assert_eq(memcmp(d.about_slots, m.about_slots, BUS_SLOT_BYTES), 0);
    buf_deinit(&b);
}

/* Every proper prefix of b: peek wants more or knows the length, decode refuses. Each prefix
 * is copied to a block of exactly its size, so a read past it would be caught by ASan. */
static void assert_truncations_refused(const buf_t *b)
{
    for (size_t n = 0; n < b->len; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, b->data, n);
        uint32_t len = 0;
        int rc = bus_msg_peek(p, n, &len);
        if (n < BUS_PREFIX_LEN)
            cr_assert_eq(rc, ST_PENDING, "n=%zu rc=%d", n, rc);
        else
            cr_assert(rc == 0 && len == b->len, "n=%zu", n);
        bus_msg_t d;
        cr_assert_eq(bus_msg_decode(p, n, &d), BUS_ELENGTH, "n=%zu", n);
        free(p);
    }
}

Test(bus_msg, every_truncation_is_refused)
{
    buf_t b;
    sample_ping(&b);
    assert_truncations_refused(&b);
    buf_deinit(&b);
}

Test(bus_msg, random_garbage_never_decodes)
{
    uint8_t p[BUS_HDR_LEN + 2 * BUS_GOSSIP_LEN];
    for (int round = 0; round < 2000; round++) {
        size_t n = rand_u64() % sizeof(p);
        random_bytes(p, n);
        if (round % 2 && n >= 4) memcpy(p, BUS_MAGIC, 4); /* get past the magic half the time */
        uint32_t len;
        int rc = bus_msg_peek(p, n, &len);
        cr_assert(rc == ST_PENDING || rc < 0 || (len >= BUS_HDR_LEN && len <= BUS_MSG_MAX));
        bus_msg_t d;
        cr_assert_lt(bus_msg_decode(p, n, &d), 0);
    }
}

Test(bus_msg, an_http_request_is_refused_by_its_first_byte)
{
    const char *req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    uint32_t len;
    cr_assert_eq(bus_msg_peek((const uint8_t *)req, 1, &len), BUS_EMAGIC);
    cr_assert_eq(bus_msg_peek((const uint8_t *)req, strlen(req), &len), BUS_EMAGIC);
}

static void put32be(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

Test(bus_msg, a_length_out_of_bounds_is_refused_from_the_prefix)
{
    buf_t b;
    sample_ping(&b);
    uint8_t *p = (uint8_t *)b.data;
    uint32_t len;
    uint32_t bad[] = {0, BUS_HDR_LEN - 1, BUS_MSG_MAX + 1, 0xffffffffu, BUS_HDR_LEN + 5};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        put32be(p + 8, bad[i]);
        cr_assert_eq(bus_msg_peek(p, BUS_PREFIX_LEN, &len), BUS_ELENGTH, "len %u", bad[i]);
    }
    /* a FAIL must be exactly header + id */
    p[7] = BUS_FAIL;
    put32be(p + 8, BUS_HDR_LEN + 3 * BUS_GOSSIP_LEN);
    cr_assert_eq(bus_msg_peek(p, BUS_PREFIX_LEN, &len), BUS_ELENGTH);
    buf_deinit(&b);
}

Test(bus_msg, another_version_or_type_is_refused)
{
    buf_t b;
    sample_ping(&b);
    uint8_t *p = (uint8_t *)b.data;
    uint32_t len;
    p[5] = BUS_VERSION + 1;
    cr_assert_eq(bus_msg_peek(p, 6, &len), BUS_EVERSION);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode(p, b.len, &d), BUS_EVERSION);
    p[5] = BUS_VERSION;
    p[7] = 0;
    cr_assert_eq(bus_msg_decode(p, b.len, &d), BUS_ETYPE);
    p[7] = BUS_TYPE_LAST + 1;
    cr_assert_eq(bus_msg_decode(p, b.len, &d), BUS_ETYPE);
    p[7] = BUS_PING;
    cr_assert_eq(bus_msg_decode(p, b.len, &d), 0);
    buf_deinit(&b);
}

/* Changes one byte of a valid PING and expects the decoder to refuse it. */
static void expect_field_refused(size_t off, uint8_t v)
{
    buf_t b;
    sample_ping(&b);
    b.data[off] = (char)v;
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), BUS_EFIELD, "offset %zu = %u", off,
                 v);
    buf_deinit(&b);
}

Test(bus_msg, each_malformed_field_is_refused)
{
    expect_field_refused(16, 'G');         /* sender id: not hex */
    expect_field_refused(16 + 39, 'A');    /* sender id: uppercase */
    expect_field_refused(56, 'a');         /* primary id on a primary */
    expect_field_refused(15, 0);           /* flags: neither primary nor replica */
    expect_field_refused(15, 3);           /* flags: both */
    expect_field_refused(15, 1 | 4);       /* flags: a sender never says it is PFAIL */
    expect_field_refused(14, 0x80);        /* flags: unknown bit */
    expect_field_refused(119, 1);          /* reserved */
    expect_field_refused(120 + 3, ' ');    /* ip with a space */
    expect_field_refused(120 + 10, 'x');   /* ip: bytes after its NUL */
    expect_field_refused(167, 9);          /* reserved */
    expect_field_refused(2216 + 4, '\t');  /* hostname: a control character */
    expect_field_refused(2216 + 4, ',');   /* hostname: not a letter, digit, '.' or '-' */
    expect_field_refused(120 + 3, 'x');    /* ip: not a hex digit, '.' or ':' */
    expect_field_refused(2216 + 200, 'x'); /* hostname: bytes after its NUL */
    size_t g = BUS_HDR_LEN;                /* the first gossip entry */
    expect_field_refused(g + 5, 'z');      /* id */
    expect_field_refused(g + 99, 0x40);    /* flags: unknown bit */
    expect_field_refused(g + 2 * BUS_GOSSIP_LEN + 99, BUS_F_PRIMARY); /* no address, no NOADDR */
    expect_field_refused(g + 101, 1);                                 /* reserved */
    /* an ip that fills all 46 bytes has no NUL */
    buf_t b;
    sample_ping(&b);
    memset(b.data + 120, '1', BUS_IP_LEN);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), BUS_EFIELD);
    buf_deinit(&b);
    sample_ping(&b);
    memset(b.data + 2216, 'h', BUS_HOST_LEN); /* a hostname without its NUL */
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), BUS_EFIELD);
    buf_deinit(&b);
}

Test(bus_msg, a_port_of_zero_is_refused)
{
    buf_t b;
    sample_ping(&b);
    b.data[112] = b.data[113] = 0;
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), BUS_EFIELD);
    b.data[112] = 1;
    b.data[114] = b.data[115] = 0;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), BUS_EFIELD);
    buf_deinit(&b);
}

Test(bus_msg, gossip_count_must_match_the_length)
{
    buf_t b;
    sample_ping(&b);
    bus_msg_t d;
    b.data[13] = 2; /* says 2 entries, carries 3 */
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), BUS_ELENGTH);
    b.data[12] = (char)0xff;
    b.data[13] = (char)0xff;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), BUS_ELENGTH);
    buf_deinit(&b);
}

Test(bus_msg, the_largest_ping_fits_the_bound)
{
    cr_assert_leq(BUS_HDR_LEN + (size_t)BUS_GOSSIP_MAX * BUS_GOSSIP_LEN, BUS_MSG_MAX);
    bus_gossip_t *g = calloc(BUS_GOSSIP_MAX, sizeof(*g));
    for (int i = 0; i < BUS_GOSSIP_MAX; i++) g[i] = sample_gossip[0];
    bus_msg_t m = {0};
    sample_hdr(&m.hdr, BUS_MEET);
    m.count = BUS_GOSSIP_MAX;
    m.gossip = g;
    buf_t b;
    buf_init(&b);
    bus_msg_encode(&m, &b);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), 0);
    cr_assert_eq(d.count, BUS_GOSSIP_MAX);
    buf_deinit(&b);
    free(g);
}

Test(bus_msg, names_and_errors_have_text)
{
    cr_assert_str_eq(bus_msg_type_name(BUS_UPDATE), "update");
    cr_assert_str_eq(bus_msg_type_name(BUS_PUBLISH), "publish");
    cr_assert_str_eq(bus_msg_type_name(77), "unknown");
    cr_assert_str_eq(bus_msg_strerror(BUS_EVERSION), "unsupported version");
}

/* ---- PUBLISH ---- */

/* Encodes a PUBLISH of channel and message (clen, mlen bytes) into b (initialized here). */
static void sample_publish(buf_t *b, const char *ch, uint32_t clen, const char *msg, uint32_t mlen)
{
    bus_msg_t m = {0};
    sample_hdr(&m.hdr, BUS_PUBLISH);
    m.channel = (const uint8_t *)ch;
    m.channel_len = clen;
    m.message = (const uint8_t *)msg;
    m.message_len = mlen;
    buf_init(b);
    cr_assert_eq(bus_msg_encode(&m, b), BUS_HDR_LEN + BUS_PUBLISH_MIN + clen + mlen);
}

Test(bus_msg, publish_round_trips_binary_channel_and_message)
{
    buf_t b;
    sample_publish(&b, "news\0x", 6, "hello\r\n\0world", 14);
    const uint8_t *body = (const uint8_t *)b.data + BUS_HDR_LEN;
    cr_assert_eq(body[3], 6); /* the channel length, big-endian */
    cr_assert_eq(body[7], 14);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), 0);
    bus_hdr_t want;
    sample_hdr(&want, BUS_PUBLISH);
    assert_hdr_eq(&d.hdr, &want);
    cr_assert_eq(d.count, 0);
    cr_assert_eq(d.channel_len, 6);
    cr_assert_eq(memcmp(d.channel, "news\0x", 6), 0);
    cr_assert_eq(d.message_len, 14);
    cr_assert_eq(memcmp(d.message, "hello\r\n\0world", 14), 0);
    cr_assert(d.channel >= (const uint8_t *)b.data && d.message + 14 == (uint8_t *)b.data + b.len);
    buf_deinit(&b);

    /* empty channel and message: the smallest PUBLISH */
    sample_publish(&b, NULL, 0, NULL, 0);
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), 0);
    cr_assert_eq(d.channel_len + d.message_len, 0);
    buf_deinit(&b);
}

Test(bus_msg, the_largest_publish_fits_the_bound)
{
    char *big = malloc(BUS_PUBLISH_DATA_MAX);
    memset(big, 'm', BUS_PUBLISH_DATA_MAX);
    buf_t b;
    sample_publish(&b, big, 3, big, BUS_PUBLISH_DATA_MAX - 3);
    cr_assert_eq(b.len, BUS_MSG_MAX);
    uint32_t len;
    cr_assert_eq(bus_msg_peek((uint8_t *)b.data, BUS_PREFIX_LEN, &len), 0);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), 0);
    cr_assert_eq(d.message_len, BUS_PUBLISH_DATA_MAX - 3);
    /* one byte more is refused from the prefix */
    put32be((uint8_t *)b.data + 8, BUS_MSG_MAX + 1);
    cr_assert_eq(bus_msg_peek((uint8_t *)b.data, BUS_PREFIX_LEN, &len), BUS_ELENGTH);
    buf_deinit(&b);
    free(big);
}

Test(bus_msg, every_publish_truncation_is_refused)
{
    buf_t b;
    sample_publish(&b, "chan", 4, "message", 7);
    assert_truncations_refused(&b);
    /* a total length that cuts the body short of its two length fields */
    uint32_t len;
    put32be((uint8_t *)b.data + 8, BUS_HDR_LEN + BUS_PUBLISH_MIN - 1);
    cr_assert_eq(bus_msg_peek((uint8_t *)b.data, BUS_PREFIX_LEN, &len), BUS_ELENGTH);
    buf_deinit(&b);
}

/* Sets the channel and message length fields of a PUBLISH and expects decode to answer rc. */
static void expect_publish_lengths(uint32_t clen, uint32_t mlen, int rc)
{
    buf_t b;
    sample_publish(&b, "chan", 4, "message", 7); /* 11 bytes of data */
    uint8_t *body = (uint8_t *)b.data + BUS_HDR_LEN;
    put32be(body, clen);
    put32be(body + 4, mlen);
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), rc, "clen %u mlen %u", clen, mlen);
    if (rc == 0) cr_assert(d.channel_len == clen && d.message_len == mlen);
    buf_deinit(&b);
}

Test(bus_msg, publish_lengths_must_add_up_exactly)
{
    expect_publish_lengths(4, 7, 0);
    expect_publish_lengths(11, 0, 0); /* another split of the same bytes is still a message */
    expect_publish_lengths(0, 11, 0);
    expect_publish_lengths(4, 6, BUS_ELENGTH);  /* a byte left over */
    expect_publish_lengths(4, 8, BUS_ELENGTH);  /* a byte short */
    expect_publish_lengths(12, 0, BUS_ELENGTH); /* the channel alone is longer than the body */
    expect_publish_lengths(0xffffffffu, 12, BUS_ELENGTH); /* would wrap around in 32 bits */
    expect_publish_lengths(5, 0xffffffffu, BUS_ELENGTH);
    expect_publish_lengths(BUS_MSG_MAX, BUS_MSG_MAX, BUS_ELENGTH);
    /* a PUBLISH has no gossip count */
    buf_t b;
    sample_publish(&b, "chan", 4, "message", 7);
    b.data[13] = 1;
    bus_msg_t d;
    cr_assert_eq(bus_msg_decode((uint8_t *)b.data, b.len, &d), BUS_ELENGTH);
    buf_deinit(&b);
}
