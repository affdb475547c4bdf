/* test_net.c - server/net/net.c: protected mode's decision on a TCP peer.
 *
 * Accepting a real non-loopback peer needs a second host, and getpeername failing needs a
 * connection reset at the right moment, so the decision is tested on the addresses it gets. */
#include "server/net/net.h"
#include "server/server.h"

#include "tests/unit/server/harness.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

static client_t *C;

static void setup(void)
{
    C = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(net, .init = setup, .fini = teardown);

static struct sockaddr_storage ip(const char *text)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    if (strchr(text, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        cr_assert_eq(inet_pton(AF_INET6, text, &a->sin6_addr), 1);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        cr_assert_eq(inet_pton(AF_INET, text, &a->sin_addr), 1);
    }
    return ss;
}

Test(net, protected_mode_accepts_only_loopback_peers)
{
    struct sockaddr_storage ss;
    const char *local[] = {"127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"};
    const char *remote[] = {"10.0.0.1", "192.168.1.2", "::ffff:10.0.0.1", "fe80::1", "::"};
    for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++) {
        ss = ip(local[i]);
        cr_assert_eq(net_protected_refuses(0, &ss), 0, "%s", local[i]);
    }
    for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++) {
        ss = ip(remote[i]);
        cr_assert_eq(net_protected_refuses(0, &ss), 1, "%s", remote[i]);
    }
}

Test(net, protected_mode_fails_closed)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    cr_assert_eq(net_protected_refuses(-ENOTCONN, &ss), 1, "getpeername failed");
    ss = ip("127.0.0.1");
    cr_assert_eq(net_protected_refuses(-ENOTCONN, &ss), 1, "failed, whatever ss holds");
    memset(&ss, 0, sizeof(ss));
    ss.ss_family = AF_UNIX;
    cr_assert_eq(net_protected_refuses(0, &ss), 1, "neither IPv4 nor IPv6");
    ss.ss_family = AF_UNSPEC;
    cr_assert_eq(net_protected_refuses(0, &ss), 1, "no family");
}

Test(net, protected_mode_off_or_a_password_accepts_everyone)
{
    struct sockaddr_storage ss = ip("10.0.0.1");
    srv.cfg.protected_mode = 0;
    cr_assert_eq(net_protected_refuses(0, &ss), 0);
    cr_assert_eq(net_protected_refuses(-ENOTCONN, &ss), 0);
    srv.cfg.protected_mode = 1;
    harness_expect(C, "CONFIG SET requirepass secret", "+OK\r\n");
    cr_assert_eq(net_protected_refuses(0, &ss), 0);
}
