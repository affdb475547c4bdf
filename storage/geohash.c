/* geohash.c - cells, scores, distances and search cells for the GEO commands (geohash.h).
 *
 * Every floating-point expression keeps the operand order that gives Redis 7.0's results bit
 * for bit (scores, coordinates and distances are compared byte for byte with Redis's replies),
 * so some read a little oddly: (i * 1.0 / 2^step) * scale rather than i * scale / 2^step.
 *
 * A hash of step s keeps the latitude index in the even bits and the longitude index in the
 * odd bits of its low 2*s bits. A point on the upper edge of the square (latitude
 * GEO_LAT_MAX or longitude 180) gets index 2^s, one bit above those: that bit is kept where
 * Redis keeps it (moving along the other axis leaves it alone), so searches centred exactly on
 * the edge read the same score ranges Redis reads. Any thread. */
#include "storage/geohash.h"

#include <math.h>

#define DEG_TO_RAD_FACTOR (M_PI / 180.0)
#define MERCATOR_MAX 20037726.37
#define EVEN_BITS 0x5555555555555555ULL /* latitude */
#define ODD_BITS 0xaaaaaaaaaaaaaaaaULL  /* longitude */

static double deg_rad(double deg)
{
    return deg * DEG_TO_RAD_FACTOR;
}

static double rad_deg(double rad)
{
    return rad / DEG_TO_RAD_FACTOR;
}

/* ---- bits ---- */

/* Spreads the 32 bits of v over the even bits of a 64-bit word. */
static uint64_t spread(uint32_t v)
{
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & EVEN_BITS;
    return x;
}

/* Gathers the even bits of x into 32 bits: the inverse of spread(). */
static uint32_t gather(uint64_t x)
{
    x &= EVEN_BITS;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

uint64_t geo_interleave(uint32_t lat, uint32_t lon)
{
    return spread(lat) | (spread(lon) << 1);
}

void geo_deinterleave(uint64_t bits, uint32_t *lat, uint32_t *lon)
{
    *lat = gather(bits);
    *lon = gather(bits >> 1);
}

/* ---- cells ---- */

static const geo_range_t mercator_lon = {GEO_LONG_MIN, GEO_LONG_MAX};
static const geo_range_t mercator_lat = {GEO_LAT_MIN, GEO_LAT_MAX};

static int range_empty(const geo_range_t *r)
{
    return r->min == 0 && r->max == 0;
}

int geo_encode(const geo_range_t *lon_r, const geo_range_t *lat_r, double lon, double lat, int step,
               geo_hash_t *h)
{
    if (step < 1 || step > 32 || range_empty(lat_r) || range_empty(lon_r)) return -1;
    if (lon > GEO_LONG_MAX || lon < GEO_LONG_MIN || lat > GEO_LAT_MAX || lat < GEO_LAT_MIN)
        return -1;
    if (lat < lat_r->min || lat > lat_r->max || lon < lon_r->min || lon > lon_r->max) return -1;
    double lat_off = (lat - lat_r->min) / (lat_r->max - lat_r->min);
    double lon_off = (lon - lon_r->min) / (lon_r->max - lon_r->min);
    lat_off *= (double)(1ULL << step);
    lon_off *= (double)(1ULL << step);
    h->bits = geo_interleave((uint32_t)lat_off, (uint32_t)lon_off);
    h->step = (uint8_t)step;
    return 0;
}

int geo_encode_wgs84(double lon, double lat, int step, geo_hash_t *h)
{
    return geo_encode(&mercator_lon, &mercator_lat, lon, lat, step, h);
}

int geo_decode(const geo_range_t *lon_r, const geo_range_t *lat_r, geo_hash_t h, geo_area_t *area)
{
    if ((h.bits == 0 && h.step == 0) || range_empty(lat_r) || range_empty(lon_r)) return -1;
    uint32_t ilat, ilon;
    geo_deinterleave(h.bits, &ilat, &ilon);
    double cells = (double)(1ULL << h.step);
    double lat_scale = lat_r->max - lat_r->min, lon_scale = lon_r->max - lon_r->min;
    /* ilat + 1 is 32-bit arithmetic on purpose: index 2^32-1 wraps to 0 as in Redis */
    uint32_t ilat1 = ilat + 1, ilon1 = ilon + 1;
    area->hash = h;
    area->lat.min = lat_r->min + (ilat * 1.0 / cells) * lat_scale;
    area->lat.max = lat_r->min + (ilat1 * 1.0 / cells) * lat_scale;
    area->lon.min = lon_r->min + (ilon * 1.0 / cells) * lon_scale;
    area->lon.max = lon_r->min + (ilon1 * 1.0 / cells) * lon_scale;
    return 0;
}

uint64_t geo_align52(geo_hash_t h)
{
    return h.bits << (52 - h.step * 2);
}

/* Moves the index held in the bits `own` (EVEN_BITS or ODD_BITS) of h by d (+1, -1 or 0),
 * modulo 2^step. The other index keeps all its bits; the moved one keeps only its low 2*step
 * bits. Adding 1 sets the other index's low bits first, so that the carry runs through them. */
static void move(geo_hash_t *h, uint64_t own, int d)
{
    if (d == 0) return;
    int shift = 64 - h->step * 2;
    uint64_t mine = h->bits & own, other = h->bits & ~own;
    uint64_t fill = ~own >> shift, low = own >> shift;
    if (d > 0)
        mine = ((mine | fill) + 1) & low;
    else
        mine = (mine - 1) & low; /* the borrow runs through the other index's zeros */
    h->bits = mine | other;
}

void geo_neighbors(geo_hash_t h, geo_hash_t out[8])
{
    /* {longitude move, latitude move} for N, S, E, W, NE, NW, SE, SW */
    static const int8_t dir[8][2] = {{0, 1}, {0, -1}, {1, 0},  {-1, 0},
                                     {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
    for (int i = 0; i < 8; i++) {
        out[i] = h;
        move(&out[i], ODD_BITS, dir[i][0]);
        move(&out[i], EVEN_BITS, dir[i][1]);
    }
}

/* ---- scores ---- */

uint64_t geo_score_of(double lon, double lat)
{
    geo_hash_t h = {0, 0};
    geo_encode_wgs84(lon, lat, GEO_STEP_MAX, &h);
    return geo_align52(h);
}

/* (uint64_t)d as x86-64 computes it (cvttsd2si, with 2^63 subtracted first for large values):
 * in C the conversion of a negative or too large double is undefined, and Redis relies on
 * what the hardware gives for scores that no GEOADD wrote. */
static uint64_t score_bits(double d)
{
    const double two63 = 9223372036854775808.0;
    if (d >= two63) {
        double t = d - two63;
        uint64_t v = t < two63 ? (uint64_t)(int64_t)t : 0x8000000000000000ULL;
        return v ^ 0x8000000000000000ULL;
    }
    if (d > -two63 - 1.0 && d == d) return (uint64_t)(int64_t)d;
    return 0x8000000000000000ULL; /* -2^63 and below, -inf, NaN: "integer indefinite" */
}

static void area_centre(const geo_area_t *a, double xy[2])
{
    xy[0] = (a->lon.min + a->lon.max) / 2;
    if (xy[0] > GEO_LONG_MAX) xy[0] = GEO_LONG_MAX;
    if (xy[0] < GEO_LONG_MIN) xy[0] = GEO_LONG_MIN;
    xy[1] = (a->lat.min + a->lat.max) / 2;
    if (xy[1] > GEO_LAT_MAX) xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN) xy[1] = GEO_LAT_MIN;
}

void geo_score_decode(double score, double xy[2])
{
    geo_hash_t h = {score_bits(score), GEO_STEP_MAX};
    geo_area_t a;
    geo_decode(&mercator_lon, &mercator_lat, h, &a); /* cannot fail: step is not 0 */
    area_centre(&a, xy);
}

void geo_hash_string(const double xy[2], char out[11])
{
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    static const geo_range_t lon_r = {-180, 180}, lat_r = {-90, 90};
    geo_hash_t h = {0, 0};
    geo_encode(&lon_r, &lat_r, xy[0], xy[1], GEO_STEP_MAX, &h);
    /* 52 bits give ten 5-bit characters; the eleventh stands for bits we do not have */
    for (int i = 0; i < 10; i++) out[i] = alphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
    out[10] = alphabet[0];
}

/* ---- distances ---- */

double geo_lat_distance(double lat1, double lat2)
{
    return GEO_EARTH_RADIUS_M * fabs(deg_rad(lat2) - deg_rad(lat1));
}

double geo_distance(double lon1, double lat1, double lon2, double lat2)
{
    double lon1r = deg_rad(lon1), lon2r = deg_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    /* on one meridian the haversine reduces to the latitude difference */
    if (v == 0.0) return geo_lat_distance(lat1, lat2);
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * GEO_EARTH_RADIUS_M * asin(sqrt(a));
}

/* ---- search shapes ---- */

int geo_steps_for_radius(double range_m, double lat)
{
    if (range_m == 0) return GEO_STEP_MAX;
    int step = 1;
    while (range_m < MERCATOR_MAX) { /* at most ~1100 rounds for the smallest double */
        range_m *= 2;
        step++;
    }
    step -= 2; /* one size larger, so the centre cell and its neighbours cover the range */
    /* meridians converge towards the poles: cells there are narrower than they are tall */
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > GEO_STEP_MAX) step = GEO_STEP_MAX;
    return step;
}

void geo_bounding_box(const geo_shape_t *s, double bounds[4])
{
    double lon = s->xy[0], lat = s->xy[1];
    int circle = s->type == GEO_SHAPE_RADIUS;
    double height = s->conversion * (circle ? s->radius : s->height / 2);
    double width = s->conversion * (circle ? s->radius : s->width / 2);
    double lat_delta = rad_deg(height / GEO_EARTH_RADIUS_M);
    double lon_delta_top = rad_deg(width / GEO_EARTH_RADIUS_M / cos(deg_rad(lat + lat_delta)));
    double lon_delta_bottom = rad_deg(width / GEO_EARTH_RADIUS_M / cos(deg_rad(lat - lat_delta)));
    /* the side nearer the equator is the wider one */
    int south = lat < 0;
    bounds[0] = south ? lon - lon_delta_bottom : lon - lon_delta_top;
    bounds[2] = south ? lon + lon_delta_bottom : lon + lon_delta_top;
    bounds[1] = lat - lat_delta;
    bounds[3] = lat + lat_delta;
}

static void centre_and_neighbors(const geo_shape_t *s, int steps, geo_hash_t *centre,
                                 geo_hash_t nb[8], geo_area_t *area)
{
    geo_encode_wgs84(s->xy[0], s->xy[1], steps, centre);
    geo_neighbors(*centre, nb);
    geo_decode(&mercator_lon, &mercator_lat, *centre, area);
}

/* Drops neighbour i (an index into nb) for good. */
static void drop(geo_hash_t nb[8], int i)
{
    nb[i].bits = 0;
    nb[i].step = 0;
}

enum { N, S, E, W, NE, NW, SE, SW };

void geo_search_cells(const geo_shape_t *s, geo_search_cells_t *out)
{
    double b[4];
    geo_bounding_box(s, b);
    double radius_m =
        s->type == GEO_SHAPE_RADIUS
            ? s->radius
            : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    radius_m *= s->conversion;
    int steps = geo_steps_for_radius(radius_m, s->xy[1]);
    geo_hash_t centre = {0, 0}, nb[8];
    geo_area_t area;
    centre_and_neighbors(s, steps, &centre, nb, &area);

    /* A centre near its cell's edge may need a larger cell for the neighbours to reach
     * around the whole box: then go one step up. */
    geo_area_t north, south, east, west;
    geo_decode(&mercator_lon, &mercator_lat, nb[N], &north);
    geo_decode(&mercator_lon, &mercator_lat, nb[S], &south);
    geo_decode(&mercator_lon, &mercator_lat, nb[E], &east);
    geo_decode(&mercator_lon, &mercator_lat, nb[W], &west);
    int larger =
        north.lat.max < b[3] || south.lat.min > b[1] || east.lon.max < b[2] || west.lon.min > b[0];
    if (steps > 1 && larger) centre_and_neighbors(s, --steps, &centre, nb, &area);

    /* A neighbour lying wholly beyond the box on some side cannot hold a match. */
    if (steps >= 2) {
        if (area.lat.min < b[1]) drop(nb, S), drop(nb, SW), drop(nb, SE);
        if (area.lat.max > b[3]) drop(nb, N), drop(nb, NE), drop(nb, NW);
        if (area.lon.min < b[0]) drop(nb, W), drop(nb, SW), drop(nb, NW);
        if (area.lon.max > b[2]) drop(nb, E), drop(nb, SE), drop(nb, NE);
    }
    out->cell[0] = centre;
    for (int i = 0; i < 8; i++) out->cell[i + 1] = nb[i];
}

void geo_cell_scores(geo_hash_t h, uint64_t *min, uint64_t *max)
{
    *min = geo_align52(h);
    h.bits++;
    *max = geo_align52(h);
}

int geo_shape_contains(const geo_shape_t *s, double score, double xy[2], double *dist)
{
    geo_score_decode(score, xy);
    if (s->type == GEO_SHAPE_RADIUS) {
        *dist = geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
        return !(*dist > s->radius * s->conversion); /* a NaN distance counts as inside */
    }
    double width = s->width * s->conversion, height = s->height * s->conversion;
    /* the latitude test is the cheaper one */
    if (geo_lat_distance(xy[1], s->xy[1]) > height / 2) return 0;
    if (geo_distance(xy[0], xy[1], s->xy[0], xy[1]) > width / 2) return 0;
    *dist = geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
    return 1;
}
