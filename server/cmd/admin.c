/* server/cmd/admin.c - ROLE, REPLICAOF, MODULE and LOLWUT.
 *
 * ROLE answers as a Redis master with no replicas: ["master", 0, []] (there is no replication,
 * so the offset stays 0). REPLICAOF NO ONE (and SLAVEOF) answers +OK, as it does on a Redis
 * master; REPLICAOF host port is refused, since there is no replication. MODULE LIST answers
 * the empty list and MODULE LOAD/LOADEX/UNLOAD are refused with the error Redis gives when
 * enable-module-command is no (its default): there are no modules. (CLUSTER, READONLY,
 * READWRITE and ASKING are in server/cmd/cluster.c.) WAIT counts the replicas that
 * acknowledged: always 0, at
 * once when 0 were asked for (or inside MULTI), else when its timeout ends, as on a Redis
 * master without replicas; FAILOVER answers that it needs replicas.
 *
 * LOLWUT prints "Redis ver. <version>" as Redis 7.0 does, and with VERSION 5 draws first a
 * picture after Georg Nees's "Schotter" (1968): a column of squares that tilt and drift more
 * and more as they go down, on a canvas of Braille characters (each one 2x4 dots). The picture
 * is our own drawing; its arguments are Redis's: columns of text (1..1000, 66 by default),
 * squares per row (1..200, 8) and per column (1..200, 12), and the canvas is bounded before it
 * is allocated. Other versions (6 too, whose picture in Redis is a stored image) print the
 * version line only. Runs on the loop thread. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/block.h"
#include "server/cmd/cmd.h"
#include "server/reply.h"
#include "server/server.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void role_cmd(client_t *c)
{
    reply_array(c, 3);
    reply_bulk_cstr(c, "master");
    reply_int(c, 0);
    reply_array(c, 0);
}

static void replicaof_cmd(client_t *c)
{
    if (arg_is(&c->argv[1], "NO") && arg_is(&c->argv[2], "ONE")) {
        reply_ok(c);
        return;
    }
    long long port;
    if (arg_ll_or_reply(c, &c->argv[2], &port, "ERR Invalid master port") < 0) return;
    reply_error(c, "ERR cte-server has no replication: it cannot be a replica");
}

static void module_list_cmd(client_t *c)
{
    reply_array(c, 0);
}

static void module_refused_cmd(client_t *c)
{
    reply_error(c, "ERR MODULE command not allowed. If the enable-module-command option is set "
                   "to \"local\", you can run it from a local connection, otherwise you need to "
                   "set this option in the configuration file, and then restart the server.");
}

static void module_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and "
        "optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        "HELP",
        "    Print this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

static void container_cmd(client_t *c)
{
    reply_arity_error(c);
}

static command_t module_subcommands[] = {
    {"list", module_list_cmd, 2, CMD_ADMIN | CMD_NOSCRIPT, 0, 0, 0, "server", "4.0.0",
     "Returns all loaded modules.", "O(N) where N is the number of loaded modules."},
    {"load", module_refused_cmd, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING, 0, 0, 0,
     "server", "4.0.0", "Loads a module.", "O(1)"},
    {"loadex", module_refused_cmd, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING, 0, 0, 0,
     "server", "7.0.0", "Loads a module using extended parameters.", "O(1)"},
    {"unload", module_refused_cmd, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING, 0, 0, 0,
     "server", "4.0.0", "Unloads a module.", "O(1)"},
    {"help", module_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "5.0.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {NULL},
};

static void wait_cmd(client_t *c)
{
    long long want, ms;
    if (arg_ll_or_reply(c, &c->argv[1], &want, NULL) < 0 ||
        arg_ll_or_reply(c, &c->argv[2], &ms, "ERR timeout is not an integer or out of range") < 0)
        return;
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return;
    }
    if (block_is_retry(c)) { /* woken by something else (SWAPDB): nothing to wait for came */
        block_on_keys(c, NULL, 0, 0, BLOCK_REPLY_ZERO);
        return;
    }
    if (want <= 0 || (c->flags & CLIENT_MULTI)) {
        reply_int(c, 0);
        return;
    }
    /* no replica will ever acknowledge: wait out the timeout (0: for ever, as Redis) */
    block_on_keys(c, NULL, 0, ms ? block_deadline(time_ms(), ms) : 0, BLOCK_REPLY_ZERO);
}

static void failover_cmd(client_t *c)
{
    for (int j = 1; j < c->argc; j++)
        if (arg_is(&c->argv[j], "ABORT")) {
            reply_error(c, "ERR No failover in progress.");
            return;
        }
    reply_error(c, "ERR FAILOVER requires connected replicas.");
}

/* ---- LOLWUT ---- */

typedef struct canvas {
    int w, h; /* in dots */
    uint8_t *dots;
} canvas_t;

static void dot(canvas_t *cv, int x, int y)
{
    if (x >= 0 && y >= 0 && x < cv->w && y < cv->h)
        cv->dots[(size_t)y * (size_t)cv->w + (size_t)x] = 1;
}

/* Bresenham's line from (x0, y0) to (x1, y1). */
static void line(canvas_t *cv, int x0, int y0, int x1, int y1)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        dot(cv, x0, y0);
        if (x0 == x1 && y0 == y1) return;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

/* A square of side size centered on (cx, cy), turned by angle radians. */
static void square(canvas_t *cv, double cx, double cy, double size, double angle)
{
    double px[4], py[4], r = size / 2 * sqrt(2.0);
    for (int k = 0; k < 4; k++) {
        double a = angle + M_PI / 4 + k * M_PI / 2;
        px[k] = cx + r * cos(a);
        py[k] = cy + r * sin(a);
    }
    for (int k = 0; k < 4; k++)
        line(cv, (int)lround(px[k]), (int)lround(py[k]), (int)lround(px[(k + 1) % 4]),
             (int)lround(py[(k + 1) % 4]));
}

/* A uniform double in [-1, 1). */
static double jitter(void)
{
    return (double)(rand_u64() >> 11) / (double)(1ull << 53) * 2 - 1;
}

/* Appends the canvas as lines of Braille characters (U+2800 + the dot bits). */
static void canvas_render(const canvas_t *cv, buf_t *out)
{
    static const int bit[4][2] = {{0, 3}, {1, 4}, {2, 5}, {6, 7}}; /* [row][column] */
    for (int y = 0; y < cv->h; y += 4) {
        for (int x = 0; x < cv->w; x += 2) {
            int code = 0x2800;
            for (int r = 0; r < 4 && y + r < cv->h; r++)
                for (int k = 0; k < 2 && x + k < cv->w; k++)
                    if (cv->dots[(size_t)(y + r) * (size_t)cv->w + (size_t)(x + k)])
                        code |= 1 << bit[r][k];
            char u[3] = {(char)(0xE0 | (code >> 12)), (char)(0x80 | ((code >> 6) & 0x3F)),
                         (char)(0x80 | (code & 0x3F))};
            buf_append(out, u, 3);
        }
        buf_push(out, '\n');
    }
}

#define MAX_DOTS (8u << 20) /* a canvas of at most 8 Mi dots (bytes), about 2 MiB of reply */

/* The canvas height in dots for these arguments; its width is 2 * cols. */
static double schotter_height(int cols, int per_row, int per_col)
{
    double side = (double)cols * 2 / (per_row + 2); /* a margin of one square on each side */
    double h = ceil(side * (per_col + 2));
    return h < 4 ? 4 : h;
}

static void schotter(buf_t *out, int cols, int per_row, int per_col)
{
    canvas_t cv;
    cv.w = cols * 2;
    double side = (double)cv.w / (per_row + 2);
    cv.h = (int)schotter_height(cols, per_row, per_col);
    cv.dots = xcalloc((size_t)cv.w * (size_t)cv.h, 1);
    for (int r = 0; r < per_col; r++) {
        double disorder = per_col > 1 ? (double)r / (per_col - 1) : 0; /* 0 at the top, 1 */
        for (int k = 0; k < per_row; k++) {
            double cx = side * (k + 1.5) + jitter() * disorder * side / 3;
            double cy = side * (r + 1.5) + jitter() * disorder * side / 3;
            square(&cv, cx, cy, side, jitter() * disorder * M_PI / 4);
        }
    }
    canvas_render(&cv, out);
    xfree(cv.dots);
}

/* The i-th numeric argument after VERSION (or from argv[first]), clamped to lo..hi. */
static int clamp_arg(client_t *c, int idx, long long def, long long lo, long long hi, long long *v)
{
    *v = def;
    if (idx >= c->argc) return 0;
    if (arg_ll_or_reply(c, &c->argv[idx], v, NULL) < 0) return -1;
    if (*v < lo) *v = lo;
    if (*v > hi) *v = hi;
    return 0;
}

static void lolwut_cmd(client_t *c)
{
    long long version = 7, cols, per_row, per_col;
    int first = 1;
    if (c->argc >= 3 && arg_is(&c->argv[1], "VERSION")) {
        if (arg_ll_or_reply(c, &c->argv[2], &version, NULL) < 0) return;
        first = 3;
    }
    buf_t b;
    buf_init(&b);
    if (version == 5) {
        if (clamp_arg(c, first, 66, 1, 1000, &cols) < 0 ||
            clamp_arg(c, first + 1, 8, 1, 200, &per_row) < 0 ||
            clamp_arg(c, first + 2, 12, 1, 200, &per_col) < 0) {
            buf_deinit(&b);
            return;
        }
        /* Redis allocates whatever the arguments ask for (about 800 MB at 1000 200 ...): here
         * the canvas is bounded before anything is sized by it */
        if (schotter_height((int)cols, (int)per_row, (int)per_col) * (double)cols * 2 > MAX_DOTS) {
            reply_errorf(c,
                         "ERR LOLWUT picture too large: at most %u dots (columns x 2 times "
                         "rows x 4)",
                         MAX_DOTS);
            buf_deinit(&b);
            return;
        }
        schotter(&b, (int)cols, (int)per_row, (int)per_col);
        buf_append_str(&b, "\nGeorg Nees - schotter, plotter on paper, 1968. ");
    }
    buf_printf(&b, "Redis ver. %s\n", COMPAT_REDIS_VERSION);
    reply_verbatim(c, b.data, b.len, "txt");
    buf_deinit(&b);
}

command_t cmds_admin[] = {
    {"role", role_cmd, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "server",
     "2.8.12", "Returns the replication role.", "O(1)"},
    {"replicaof", replicaof_cmd, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE | CMD_NO_ASYNC_LOADING, 0,
     0, 0, "server", "5.0.0",
     "Configures a server as replica of another, or promotes it to a master.", "O(1)"},
    {"slaveof", replicaof_cmd, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE | CMD_NO_ASYNC_LOADING, 0, 0,
     0, "server", "1.0.0",
     "Sets a Redis server as a replica of another, or promotes it to being a master.", "O(1)"},
    {"wait", wait_cmd, 3, CMD_NOSCRIPT, 0, 0, 0, "generic", "3.0.0",
     "Blocks until the asynchronous replication of all preceding write commands sent by the "
     "connection is completed.",
     "O(1)"},
    {"failover", failover_cmd, -1, CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, "server", "6.2.0",
     "Starts a coordinated failover from a server to one of its replicas.", "O(1)"},
    {"module", container_cmd, -2, 0, 0, 0, 0, "server", "4.0.0", "A container for module commands.",
     "Depends on subcommand.", NULL, module_subcommands},
    {"lolwut", lolwut_cmd, -1, CMD_READONLY | CMD_FAST, 0, 0, 0, "server", "5.0.0",
     "Displays computer art and the Redis version", "" /* none, as Redis's COMMAND DOCS */},
    {NULL},
};
