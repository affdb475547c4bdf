/* bus_msg.h - the cluster bus wire codec: messages between cluster nodes, to and from bytes.
 *
 * The format is ours (docs/cluster-bus.md draws it byte by byte): a fixed header of
 * BUS_HDR_LEN bytes (magic, version, type, total length, the sender's id, epochs, ports,
 * address, hostname, flags and slot bitmap) and a body whose size the type fixes (FAIL, UPDATE),
 * the header's count of gossip entries fixes (MEET, PING, PONG), or two length fields fix
 * (PUBLISH: a channel and a message). Integers are big-endian.
 *
 * Decoding is a pure function of the bytes: nothing is allocated, every field is checked, and
 * the total length is bounded by BUS_MSG_MAX before a reader keeps more than a header's worth
 * of bytes. A message either decodes whole or yields one of the BUS_E* codes below. */
#ifndef CTE_SERVER_CLUSTER_BUS_MSG_H
#define CTE_SERVER_CLUSTER_BUS_MSG_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

#define BUS_MAGIC "CTEb"
#define BUS_VERSION 1
#define BUS_ID_LEN 40 /* node ids: 40 lowercase hex digits */
#define BUS_IP_LEN 46 /* the address field: NUL-padded text, as INET6_ADDRSTRLEN */
#define BUS_SLOTS 16384
#define BUS_SLOT_BYTES (BUS_SLOTS / 8)
#define BUS_HOST_LEN 256  /* the hostname field: NUL-padded, up to 255 characters */
#define BUS_HDR_LEN 2472  /* bytes of the fixed header (docs/cluster-bus.md) */
#define BUS_PREFIX_LEN 12 /* magic, version, type, length: enough for bus_msg_peek */
#define BUS_GOSSIP_LEN 104
#define BUS_FAIL_LEN BUS_ID_LEN
#define BUS_UPDATE_LEN (BUS_ID_LEN + 8 + BUS_SLOT_BYTES)
#define BUS_PUBLISH_MIN 8 /* PUBLISH body: channel length 4, message length 4, then the bytes */
/* The longest message accepted: a PING with about 2,500 gossip entries. */
#define BUS_MSG_MAX (256 * 1024)
#define BUS_GOSSIP_MAX ((BUS_MSG_MAX - BUS_HDR_LEN) / BUS_GOSSIP_LEN)
/* The most bytes of channel plus message one PUBLISH carries. */
#define BUS_PUBLISH_DATA_MAX (BUS_MSG_MAX - BUS_HDR_LEN - BUS_PUBLISH_MIN)

enum bus_type {
    BUS_MEET = 1,
    BUS_PING = 2,
    BUS_PONG = 3,
    BUS_FAIL = 4,
    BUS_UPDATE = 5,
    BUS_PUBLISH = 6,
};
#define BUS_TYPE_LAST BUS_PUBLISH
#define BUS_TYPE_COUNT 7 /* counter arrays are indexed by type; 0 is unused */

/* Node flags on the wire (the header's sender flags and each gossip entry's). */
enum bus_flag {
    BUS_F_PRIMARY = 1 << 0,
    BUS_F_REPLICA = 1 << 1,
    BUS_F_PFAIL = 1 << 2,
    BUS_F_FAIL = 1 << 3,
    BUS_F_NOADDR = 1 << 4,
    BUS_F_NOFAILOVER = 1 << 5,
};
#define BUS_F_ALL 0x3f

/* Decoder results (negative, below -ST_ERRNO_MAX so they never read as -errno). */
#define BUS_ERR_TABLE(X)                                                                           \
    X(BUS_EMAGIC, -5001, "bad magic")                                                              \
    X(BUS_EVERSION, -5002, "unsupported version")                                                  \
    X(BUS_ETYPE, -5003, "unknown message type")                                                    \
    X(BUS_ELENGTH, -5004, "length out of bounds or not what the type needs")                       \
    X(BUS_EFIELD, -5005, "malformed field")
#define BUS_ERR_ROW(name, value, text) name = value,
enum bus_err { BUS_ERR_TABLE(BUS_ERR_ROW) };
#undef BUS_ERR_ROW

/* The header, decoded. Strings are NUL-terminated. */
typedef struct bus_hdr {
    uint16_t type;
    uint16_t flags; /* the sender's BUS_F_* */
    char sender[BUS_ID_LEN + 1];
    char primary[BUS_ID_LEN + 1]; /* the sender's primary if it is a replica, else "" */
    uint64_t current_epoch;
    uint64_t config_epoch;
    uint16_t port;                 /* the sender's client port, 1..65535 */
    uint16_t bus_port;             /* its cluster bus port, 1..65535 */
    char ip[BUS_IP_LEN];           /* its announced address, "" to use the connection's */
    uint8_t slots[BUS_SLOT_BYTES]; /* bit (s & 7) of byte s >> 3: the sender serves slot s */
    char hostname[BUS_HOST_LEN];   /* its cluster-announce-hostname, "" for none */
} bus_hdr_t;

/* What a node tells about another in a PING, PONG or MEET. */
typedef struct bus_gossip {
    char id[BUS_ID_LEN + 1];
    uint32_t ping_sent;     /* seconds (Unix time) of the sender's pending ping, 0 none */
    uint32_t pong_received; /* seconds of the last pong the sender got from it */
    char ip[BUS_IP_LEN];
    uint16_t port, bus_port;
    uint16_t flags;
} bus_gossip_t;

/* A whole message. For encoding, gossip points at count entries; decoding sets gossip_wire
 * instead (count entries in the decoded bytes, read them with bus_msg_gossip). */
typedef struct bus_msg {
    bus_hdr_t hdr;
    uint16_t count;
    const bus_gossip_t *gossip;  /* encode: MEET, PING, PONG */
    const uint8_t *gossip_wire;  /* decode: into the caller's bytes, valid as long as they are */
    char about[BUS_ID_LEN + 1];  /* FAIL, UPDATE: the node the message is about */
    uint64_t about_config_epoch; /* UPDATE: its config epoch */
    uint8_t about_slots[BUS_SLOT_BYTES]; /* UPDATE: its slots */
    /* PUBLISH: the channel and the message; decoding points them into the caller's bytes */
    const uint8_t *channel, *message;
    uint32_t channel_len, message_len;
} bus_msg_t;

/* Looks at the first n bytes of a message. Returns 0 with *len set to the total length
 * (checked: BUS_HDR_LEN..BUS_MSG_MAX) once BUS_PREFIX_LEN bytes are there, ST_PENDING
 * (positive) while fewer are, or BUS_EMAGIC, BUS_EVERSION, BUS_ETYPE, BUS_ELENGTH. Checks the
 * magic on however many bytes arrived, so a peer speaking something else is refused early. */
int bus_msg_peek(const uint8_t *p, size_t n, uint32_t *len);

/* Decodes exactly n bytes (one whole message) into m. Returns 0, or a BUS_E* code when
 * anything is malformed (m is then undefined). Allocates nothing; m->gossip_wire points into
 * p. */
int bus_msg_decode(const uint8_t *p, size_t n, bus_msg_t *m);
/* Gossip entry i (< m->count) of a decoded message, into g. */
void bus_msg_gossip(const bus_msg_t *m, int i, bus_gossip_t *g);

/* Appends the encoding of m to out; returns the bytes appended. m must be valid (the fields
 * the decoder checks are asserted), count at most BUS_GOSSIP_MAX, and a PUBLISH's channel_len
 * + message_len at most BUS_PUBLISH_DATA_MAX. */
size_t bus_msg_encode(const bus_msg_t *m, buf_t *out);

/* Text for a BUS_E* code (or any other status). */
const char *bus_msg_strerror(int err);
/* "meet", "ping", "pong", "fail", "update", "publish"; "unknown" for anything else. */
const char *bus_msg_type_name(int type);
/* 1 if the NUL-terminated s fits the address field: shorter than BUS_IP_LEN, only hex
 * digits, '.' and ':'. */
int bus_msg_valid_ip(const char *s);
/* 1 if s[0..40) are 40 lowercase hex digits. */
int bus_msg_valid_id(const char *s);

#endif
