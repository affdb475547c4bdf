/* server/cluster/bus_msg.c - the cluster bus wire codec (format: docs/cluster-bus.md).
 *
 * Header (BUS_HDR_LEN = 2472 bytes, integers big-endian):
 *
 *   offset  size  field
 *        0     4  magic "CTEb"
 *        4     2  version (BUS_VERSION)
 *        6     2  type (enum bus_type)
 *        8     4  total length of the message, header included
 *       12     2  count of gossip entries (MEET, PING, PONG; 0 otherwise)
 *       14     2  sender flags (BUS_F_PRIMARY | BUS_F_REPLICA | BUS_F_NOFAILOVER)
 *       16    40  sender id (lowercase hex)
 *       56    40  primary id of a replica sender, else 40 NUL bytes
 *       96     8  current epoch
 *      104     8  config epoch
 *      112     2  client port
 *      114     2  bus port
 *      116     4  reserved, 0
 *      120    46  announced ip, NUL-padded ("" = the connection's address)
 *      166     2  reserved, 0
 *      168  2048  slot bitmap
 *     2216   256  announced hostname, NUL-padded ("" = none)
 *
 * Text fields end with NUL padding: an address has hex digits, '.' and ':' (IPv4 or IPv6
 * text), a hostname letters, digits, '.' and '-' (cluster-announce-hostname's rule).
 *
 * Gossip entry (BUS_GOSSIP_LEN = 104 bytes): id 40, ping_sent 4, pong_received 4, ip 46,
 * port 2, bus port 2, flags 2, reserved 4 (0). FAIL body: the failing node's id (40).
 * UPDATE body: id 40, config epoch 8, slot bitmap 2048. PUBLISH body: channel length 4,
 * message length 4, the channel's bytes, the message's bytes (lengths exact).
 *
 * Pure functions; any thread. */
#include "server/cluster/bus_msg.h"

#include "common/status.h"

#include <assert.h>
#include <string.h>

enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 4,
    OFF_TYPE = 6,
    OFF_LEN = 8,
    OFF_COUNT = 12,
    OFF_FLAGS = 14,
    OFF_SENDER = 16,
    OFF_PRIMARY = 56,
    OFF_CEPOCH = 96,
    OFF_CFGEPOCH = 104,
    OFF_PORT = 112,
    OFF_BPORT = 114,
    OFF_RSV1 = 116,
    OFF_IP = 120,
    OFF_RSV2 = 166,
    OFF_SLOTS = 168,
    OFF_HOST = 2216,
};
_Static_assert(OFF_SLOTS + BUS_SLOT_BYTES == OFF_HOST, "header layout");
_Static_assert(OFF_HOST + BUS_HOST_LEN == BUS_HDR_LEN, "header layout");
_Static_assert(OFF_RSV2 == OFF_IP + BUS_IP_LEN, "header layout");

enum {
    G_ID = 0,
    G_PING = 40,
    G_PONG = 44,
    G_IP = 48,
    G_PORT = 94,
    G_BPORT = 96,
    G_FLAGS = 98,
    G_RSV = 100
};
_Static_assert(G_IP + BUS_IP_LEN == G_PORT, "gossip layout");
_Static_assert(G_RSV + 4 == BUS_GOSSIP_LEN, "gossip layout");

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}
static void put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v & 0xff;
}
static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v & 0xffff);
}
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, v >> 32);
    put32(p + 4, v & 0xffffffffu);
}

int bus_msg_valid_id(const char *s)
{
    for (int i = 0; i < BUS_ID_LEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

/* An id field: 40 hex digits into out (41 bytes). */
static int get_id(const uint8_t *p, char *out)
{
    if (!bus_msg_valid_id((const char *)p)) return BUS_EFIELD;
    memcpy(out, p, BUS_ID_LEN);
    out[BUS_ID_LEN] = '\0';
    return 0;
}

static int ip_char(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' ||
           c == ':';
}

int bus_msg_valid_ip(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (n + 1 >= BUS_IP_LEN || !ip_char((uint8_t)s[n])) return 0;
    return 1;
}

static int host_char(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
           c == '-';
}

/* A text field of size bytes: characters that ok() accepts, then NULs to the end (at least
 * one). */
static int get_text(const uint8_t *p, size_t size, int (*ok)(uint8_t), char *out)
{
    size_t n = 0;
    while (n < size && p[n]) {
        if (!ok(p[n])) return BUS_EFIELD;
        n++;
    }
    if (n == size || !all_zero(p + n, size - n)) return BUS_EFIELD;
    memcpy(out, p, n + 1);
    return 0;
}

static int get_ip(const uint8_t *p, char *out)
{
    return get_text(p, BUS_IP_LEN, ip_char, out);
}

static int valid_role(uint16_t flags)
{
    int primary = !!(flags & BUS_F_PRIMARY), replica = !!(flags & BUS_F_REPLICA);
    return !(flags & ~BUS_F_ALL) && primary + replica == 1;
}

static int body_len_ok(int type, uint32_t len)
{
    if (type == BUS_FAIL) return len == BUS_HDR_LEN + BUS_FAIL_LEN;
    if (type == BUS_UPDATE) return len == BUS_HDR_LEN + BUS_UPDATE_LEN;
    if (type == BUS_PUBLISH) return len >= BUS_HDR_LEN + BUS_PUBLISH_MIN;
    return (len - BUS_HDR_LEN) % BUS_GOSSIP_LEN == 0;
}

int bus_msg_peek(const uint8_t *p, size_t n, uint32_t *len)
{
    size_t m = n < 4 ? n : 4;
    if (memcmp(p, BUS_MAGIC, m) != 0) return BUS_EMAGIC;
    if (n >= OFF_TYPE && get16(p + OFF_VERSION) != BUS_VERSION) return BUS_EVERSION;
    if (n >= OFF_LEN) {
        uint16_t t = get16(p + OFF_TYPE);
        if (t < BUS_MEET || t > BUS_TYPE_LAST) return BUS_ETYPE;
    }
    if (n < BUS_PREFIX_LEN) return ST_PENDING;
    uint32_t l = get32(p + OFF_LEN);
    if (l < BUS_HDR_LEN || l > BUS_MSG_MAX || !body_len_ok(get16(p + OFF_TYPE), l))
        return BUS_ELENGTH;
    *len = l;
    return 0;
}

static int decode_hdr(const uint8_t *p, bus_hdr_t *h)
{
    h->type = get16(p + OFF_TYPE);
    h->flags = get16(p + OFF_FLAGS);
    if (!valid_role(h->flags) || (h->flags & (BUS_F_PFAIL | BUS_F_FAIL | BUS_F_NOADDR)))
        return BUS_EFIELD;
    if (get_id(p + OFF_SENDER, h->sender)) return BUS_EFIELD;
    h->primary[0] = '\0';
    if (!all_zero(p + OFF_PRIMARY, BUS_ID_LEN)) {
        if (!(h->flags & BUS_F_REPLICA) || get_id(p + OFF_PRIMARY, h->primary)) return BUS_EFIELD;
    }
    h->current_epoch = get64(p + OFF_CEPOCH);
    h->config_epoch = get64(p + OFF_CFGEPOCH);
    h->port = get16(p + OFF_PORT);
    h->bus_port = get16(p + OFF_BPORT);
    if (!h->port || !h->bus_port) return BUS_EFIELD;
    if (!all_zero(p + OFF_RSV1, 4) || !all_zero(p + OFF_RSV2, 2)) return BUS_EFIELD;
    if (get_ip(p + OFF_IP, h->ip)) return BUS_EFIELD;
    if (get_text(p + OFF_HOST, BUS_HOST_LEN, host_char, h->hostname)) return BUS_EFIELD;
    memcpy(h->slots, p + OFF_SLOTS, BUS_SLOT_BYTES);
    return 0;
}

static int decode_gossip(const uint8_t *p, bus_gossip_t *g)
{
    if (get_id(p + G_ID, g->id) || get_ip(p + G_IP, g->ip)) return BUS_EFIELD;
    g->ping_sent = get32(p + G_PING);
    g->pong_received = get32(p + G_PONG);
    g->port = get16(p + G_PORT);
    g->bus_port = get16(p + G_BPORT);
    g->flags = get16(p + G_FLAGS);
    if (!valid_role(g->flags) || !all_zero(p + G_RSV, 4)) return BUS_EFIELD;
    if (!(g->flags & BUS_F_NOADDR) && (!g->ip[0] || !g->port || !g->bus_port)) return BUS_EFIELD;
    return 0;
}

void bus_msg_gossip(const bus_msg_t *m, int i, bus_gossip_t *g)
{
    assert(i >= 0 && i < m->count && m->gossip_wire);
    int rc = decode_gossip(m->gossip_wire + (size_t)i * BUS_GOSSIP_LEN, g);
    assert(rc == 0); /* bus_msg_decode checked every entry */
    (void)rc;
}

int bus_msg_decode(const uint8_t *p, size_t n, bus_msg_t *m)
{
    uint32_t len;
    int rc = bus_msg_peek(p, n, &len);
    if (rc == ST_PENDING) return BUS_ELENGTH;
    if (rc) return rc;
    if (len != n) return BUS_ELENGTH;
    if ((rc = decode_hdr(p, &m->hdr))) return rc;
    m->count = get16(p + OFF_COUNT);
    m->gossip = NULL;
    m->gossip_wire = NULL;
    m->about[0] = '\0';
    m->about_config_epoch = 0;
    m->channel = m->message = NULL;
    m->channel_len = m->message_len = 0;
    const uint8_t *body = p + BUS_HDR_LEN;
    switch (m->hdr.type) {
    case BUS_MEET:
    case BUS_PING:
    case BUS_PONG:
        if ((size_t)m->count * BUS_GOSSIP_LEN != n - BUS_HDR_LEN) return BUS_ELENGTH;
        m->gossip_wire = body;
        for (int i = 0; i < m->count; i++) {
            bus_gossip_t g;
            if (decode_gossip(body + (size_t)i * BUS_GOSSIP_LEN, &g)) return BUS_EFIELD;
        }
        return 0;
    case BUS_FAIL:
        if (m->count) return BUS_ELENGTH;
        return get_id(body, m->about);
    case BUS_UPDATE:
        if (m->count) return BUS_ELENGTH;
        if (get_id(body, m->about)) return BUS_EFIELD;
        m->about_config_epoch = get64(body + BUS_ID_LEN);
        memcpy(m->about_slots, body + BUS_ID_LEN + 8, BUS_SLOT_BYTES);
        return 0;
    case BUS_PUBLISH: {
        if (m->count) return BUS_ELENGTH;
        size_t data = n - BUS_HDR_LEN - BUS_PUBLISH_MIN; /* peek checked n >= that */
        uint32_t clen = get32(body), mlen = get32(body + 4);
        if (clen > data || mlen != data - clen) return BUS_ELENGTH;
        m->channel_len = clen;
        m->message_len = mlen;
        m->channel = body + BUS_PUBLISH_MIN;
        m->message = m->channel + clen;
        return 0;
    }
    }
    return BUS_ETYPE; /* bus_msg_peek checked the type: not reached */
}

static void put_text(uint8_t *p, const char *s, size_t field)
{
    size_t n = strlen(s);
    assert(n < field);
    memcpy(p, s, n); /* the rest stays zero */
}

static void encode_gossip(uint8_t *p, const bus_gossip_t *g)
{
    assert(bus_msg_valid_id(g->id) && valid_role(g->flags));
    memcpy(p + G_ID, g->id, BUS_ID_LEN);
    put32(p + G_PING, g->ping_sent);
    put32(p + G_PONG, g->pong_received);
    put_text(p + G_IP, g->ip, BUS_IP_LEN);
    put16(p + G_PORT, g->port);
    put16(p + G_BPORT, g->bus_port);
    put16(p + G_FLAGS, g->flags);
}

static size_t body_len(const bus_msg_t *m)
{
    switch (m->hdr.type) {
    case BUS_FAIL:
        return BUS_FAIL_LEN;
    case BUS_UPDATE:
        return BUS_UPDATE_LEN;
    case BUS_PUBLISH:
        return BUS_PUBLISH_MIN + (size_t)m->channel_len + m->message_len;
    default:
        return (size_t)m->count * BUS_GOSSIP_LEN;
    }
}

size_t bus_msg_encode(const bus_msg_t *m, buf_t *out)
{
    const bus_hdr_t *h = &m->hdr;
    assert(h->type >= BUS_MEET && h->type <= BUS_TYPE_LAST && m->count <= BUS_GOSSIP_MAX);
    assert(h->type != BUS_PUBLISH ||
           (size_t)m->channel_len + m->message_len <= BUS_PUBLISH_DATA_MAX);
    assert(bus_msg_valid_id(h->sender) && valid_role(h->flags));
    size_t len = BUS_HDR_LEN + body_len(m);
    buf_reserve(out, len);
    uint8_t *p = (uint8_t *)out->data + out->len;
    memset(p, 0, len);
    memcpy(p + OFF_MAGIC, BUS_MAGIC, 4);
    put16(p + OFF_VERSION, BUS_VERSION);
    put16(p + OFF_TYPE, h->type);
    put32(p + OFF_LEN, (uint32_t)len);
    put16(p + OFF_COUNT, h->type <= BUS_PONG ? m->count : 0);
    put16(p + OFF_FLAGS, h->flags);
    memcpy(p + OFF_SENDER, h->sender, BUS_ID_LEN);
    if (h->primary[0]) memcpy(p + OFF_PRIMARY, h->primary, BUS_ID_LEN);
    put64(p + OFF_CEPOCH, h->current_epoch);
    put64(p + OFF_CFGEPOCH, h->config_epoch);
    put16(p + OFF_PORT, h->port);
    put16(p + OFF_BPORT, h->bus_port);
    put_text(p + OFF_IP, h->ip, BUS_IP_LEN);
    memcpy(p + OFF_SLOTS, h->slots, BUS_SLOT_BYTES);
    put_text(p + OFF_HOST, h->hostname, BUS_HOST_LEN);
    uint8_t *body = p + BUS_HDR_LEN;
    if (h->type == BUS_FAIL || h->type == BUS_UPDATE) {
        assert(bus_msg_valid_id(m->about));
        memcpy(body, m->about, BUS_ID_LEN);
    }
    if (h->type == BUS_UPDATE) {
        put64(body + BUS_ID_LEN, m->about_config_epoch);
        memcpy(body + BUS_ID_LEN + 8, m->about_slots, BUS_SLOT_BYTES);
    }
    if (h->type == BUS_PUBLISH) {
        put32(body, m->channel_len);
        put32(body + 4, m->message_len);
        if (m->channel_len) memcpy(body + BUS_PUBLISH_MIN, m->channel, m->channel_len);
        if (m->message_len)
            memcpy(body + BUS_PUBLISH_MIN + m->channel_len, m->message, m->message_len);
    }
    for (int i = 0; h->type <= BUS_PONG && i < m->count; i++)
        encode_gossip(body + (size_t)i * BUS_GOSSIP_LEN, &m->gossip[i]);
    out->len += len;
    out->data[out->len] = '\0';
    return len;
}

const char *bus_msg_strerror(int err)
{
#define BUS_ERR_CASE(name, value, text)                                                            \
    case name:                                                                                     \
        return text;
    switch (err) {
        BUS_ERR_TABLE(BUS_ERR_CASE)
    }
#undef BUS_ERR_CASE
    return status_str(err);
}

const char *bus_msg_type_name(int type)
{
    static const char *const names[BUS_TYPE_COUNT] = {NULL,   "meet",   "ping",   "pong",
                                                      "fail", "update", "publish"};
    return type > 0 && type < BUS_TYPE_COUNT ? names[type] : "unknown";
}
