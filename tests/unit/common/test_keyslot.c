/* Tests for common/keyslot.h: the CRC16 check value, the table against a bit-at-a-time reference,
 * and slots that Redis 7.0.15's CLUSTER KEYSLOT gave for the same keys (hash tags included). */
#include "common/keyslot.h"

#include <criterion/criterion.h>
#include <string.h>

static uint16_t crc16_bitwise(const unsigned char *p, size_t len)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int k = 0; k < 8; k++) crc = (crc & 0x8000) ? (uint16_t)(crc << 1) ^ 0x1021 : (uint16_t)(crc << 1);
    }
    return crc;
}

Test(keyslot, xmodem_check_value)
{
    cr_assert_eq(keyslot_crc16("123456789", 9), 0x31c3);
    cr_assert_eq(keyslot_crc16("", 0), 0);
}

Test(keyslot, table_matches_the_bitwise_reference)
{
    unsigned char buf[512];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 151 + 3);
    for (size_t len = 0; len <= sizeof buf; len += 7)
        cr_assert_eq(keyslot_crc16(buf, len), crc16_bitwise(buf, len), "len %zu", len);
}

Test(keyslot, slots_equal_redis_cluster_keyslot)
{
    static const struct { const char *key; unsigned slot; } cases[] = {
        {"foo", 12182}, {"bar", 5061}, {"{user1000}.following", 3443},
        {"{user1000}.followers", 3443}, {"foo{}{bar}", 8363}, {"foo{{bar}}zap", 4015},
        {"foo{bar}{zap}", 5061}, {"{}", 15257}, {"a{", 14311}, {"", 0}, {"123456789", 12739},
        {"key:000000000001", 8924}, {"usertable:user6284781860667377211", 1512},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(keyslot(cases[i].key, strlen(cases[i].key)), cases[i].slot, "%s",
                     cases[i].key);
}
