/* test_geohash.c - storage/geohash.c: interleaving, the scores and decoded positions Redis
 * documents for its Sicily example (GEOADD Sicily 13.361389 38.115556 Palermo ...), geohash
 * strings, distances, neighbour cells (wrapping at the square's edges, the extra bit of a point
 * on the upper edge), the step estimate, and the search cells: every point within a radius or
 * box must fall in one of the nine cells' score ranges, checked on random shapes against a
 * brute-force scan. */
#include "storage/geohash.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(geohash, interleave_puts_latitude_in_even_bits)
{
    cr_assert_eq(geo_interleave(1, 0), 1);
    cr_assert_eq(geo_interleave(0, 1), 2);
    cr_assert_eq(geo_interleave(0xffffffffu, 0), 0x5555555555555555ULL);
    cr_assert_eq(geo_interleave(0, 0xffffffffu), 0xaaaaaaaaaaaaaaaaULL);
    srand(7);
    for (int i = 0; i < 1000; i++) {
        uint32_t lat = (uint32_t)rand() * 2654435761u, lon = (uint32_t)rand() ^ 0x9e3779b9u, a, b;
        geo_deinterleave(geo_interleave(lat, lon), &a, &b);
        cr_assert_eq(a, lat);
        cr_assert_eq(b, lon);
    }
}

Test(geohash, scores_are_the_documented_ones)
{
    cr_assert_eq(geo_score_of(13.361389, 38.115556), 3479099956230698ULL);
    cr_assert_eq(geo_score_of(15.087269, 37.502669), 3479447370796909ULL);
    cr_assert_eq(geo_score_of(-180, GEO_LAT_MIN), 0);
}

static void fmt(char *buf, double v)
{
    snprintf(buf, 64, "%.17Lf", (long double)v);
}

Test(geohash, decode_gives_the_cell_centre)
{
    double xy[2];
    char a[64], b[64];
    geo_score_decode(3479099956230698.0, xy);
    fmt(a, xy[0]);
    fmt(b, xy[1]);
    cr_assert_str_eq(a, "13.36138933897018433");
    cr_assert_str_eq(b, "38.11555639549629859");
    geo_score_decode(3479447370796909.0, xy);
    fmt(a, xy[0]);
    fmt(b, xy[1]);
    cr_assert_str_eq(a, "15.08726745843887329");
    cr_assert_str_eq(b, "37.50266842333162032");
}

Test(geohash, decode_clamps_scores_no_geoadd_wrote)
{
    double xy[2];
    geo_score_decode(-1, xy); /* all bits set: the top corner, clamped */
    cr_assert_eq(xy[0], 180);
    cr_assert_eq(xy[1], GEO_LAT_MAX);
    geo_score_decode(INFINITY, xy);
    cr_assert(xy[0] >= -180 && xy[0] <= 180 && xy[1] >= GEO_LAT_MIN && xy[1] <= GEO_LAT_MAX);
}

Test(geohash, hash_strings_match_redis)
{
    double xy[2];
    char h[12] = {0};
    geo_score_decode(3479099956230698.0, xy);
    geo_hash_string(xy, h);
    cr_assert_str_eq(h, "sqc8b49rny0");
    geo_score_decode(3479447370796909.0, xy);
    geo_hash_string(xy, h);
    cr_assert_str_eq(h, "sqdtr74hyu0");
}

Test(geohash, distance_palermo_catania)
{
    double a[2], b[2];
    geo_score_decode(3479099956230698.0, a);
    geo_score_decode(3479447370796909.0, b);
    double d = geo_distance(a[0], a[1], b[0], b[1]);
    cr_assert_eq(llrint(d * 10000.0), 1662741516LL); /* GEODIST: 166274.1516 */
    cr_assert_eq(geo_distance(10, 20, 10, 20), 0);
    /* same meridian: exactly the latitude distance */
    cr_assert_eq(geo_distance(5, 10, 5, 11), geo_lat_distance(10, 11));
    cr_assert_float_eq(geo_lat_distance(0, 1), GEO_EARTH_RADIUS_M * M_PI / 180, 1e-6);
}

Test(geohash, neighbours_wrap_at_the_edges)
{
    geo_hash_t h = {geo_interleave(0, 0), 2}, nb[8];
    geo_neighbors(h, nb);
    uint32_t lat, lon;
    geo_deinterleave(nb[0].bits, &lat, &lon); /* N */
    cr_assert(lat == 1 && lon == 0);
    geo_deinterleave(nb[1].bits, &lat, &lon); /* S wraps to the top row */
    cr_assert(lat == 3 && lon == 0);
    geo_deinterleave(nb[3].bits, &lat, &lon); /* W wraps */
    cr_assert(lat == 0 && lon == 3);
    geo_deinterleave(nb[4].bits, &lat, &lon); /* NE */
    cr_assert(lat == 1 && lon == 1);
    for (int i = 0; i < 8; i++) cr_assert_eq(nb[i].step, 2);
}

Test(geohash, upper_edge_bit_survives_moves_along_the_other_axis)
{
    geo_hash_t h;
    cr_assert_eq(geo_encode_wgs84(0, GEO_LAT_MAX, 3, &h), 0);
    uint32_t lat, lon;
    geo_deinterleave(h.bits, &lat, &lon);
    cr_assert_eq(lat, 8); /* index 2^step: one bit above the cell's */
    geo_hash_t nb[8];
    geo_neighbors(h, nb);
    geo_deinterleave(nb[2].bits, &lat, &lon); /* E keeps it */
    cr_assert_eq(lat, 8);
    geo_deinterleave(nb[0].bits, &lat, &lon); /* N drops it: (8 + 1) mod 8 */
    cr_assert_eq(lat, 1);
}

Test(geohash, encode_refuses_points_off_the_square)
{
    geo_hash_t h = {0, 0};
    cr_assert_eq(geo_encode_wgs84(180.1, 0, 26, &h), -1);
    cr_assert_eq(geo_encode_wgs84(0, 86, 26, &h), -1);
    cr_assert_eq(geo_encode_wgs84(0, 0, 0, &h), -1);
    cr_assert_eq(geo_encode_wgs84(0, 0, 33, &h), -1);
    geo_area_t a;
    cr_assert_eq(
        geo_decode(&(geo_range_t){-180, 180}, &(geo_range_t){-90, 90}, (geo_hash_t){0, 0}, &a), -1);
}

Test(geohash, steps_shrink_with_the_radius_and_near_poles)
{
    cr_assert_eq(geo_steps_for_radius(0, 0), 26);
    cr_assert_eq(geo_steps_for_radius(1e-300, 0), 26);
    cr_assert_eq(geo_steps_for_radius(1e12, 0), 1);
    int s = geo_steps_for_radius(1000, 0);
    cr_assert_eq(geo_steps_for_radius(2000, 0), s - 1);
    cr_assert_eq(geo_steps_for_radius(1000, 70), s - 1);
    cr_assert_eq(geo_steps_for_radius(1000, -85), s - 2);
}

/* 1 if score falls in one of the nine cells' ranges */
static int covered(const geo_search_cells_t *cells, uint64_t score)
{
    for (int i = 0; i < 9; i++) {
        if (cells->cell[i].bits == 0 && cells->cell[i].step == 0) continue;
        uint64_t min, max;
        geo_cell_scores(cells->cell[i], &min, &max);
        if (score >= min && score < max) return 1;
    }
    return 0;
}

static double frand(double lo, double hi)
{
    return lo + (hi - lo) * ((double)rand() / RAND_MAX);
}

Test(geohash, search_cells_cover_every_match)
{
    srand(20261202);
    for (int round = 0; round < 300; round++) {
        geo_shape_t s = {.conversion = 1000, .xy = {frand(-180, 180), frand(-80, 80)}};
        if (rand() % 2) {
            s.type = GEO_SHAPE_RADIUS;
            s.radius = frand(1, 800);
        } else {
            s.type = GEO_SHAPE_BOX;
            s.width = frand(1, 1500);
            s.height = frand(1, 1500);
        }
        geo_search_cells_t cells;
        geo_search_cells(&s, &cells);
        for (int i = 0; i < 400; i++) {
            double lon = s.xy[0] + frand(-15, 15), lat = s.xy[1] + frand(-10, 10);
            if (lon < -180 || lon > 180 || lat < GEO_LAT_MIN || lat > GEO_LAT_MAX) continue;
            uint64_t score = geo_score_of(lon, lat);
            double xy[2], dist;
            if (geo_shape_contains(&s, (double)score, xy, &dist))
                cr_assert(covered(&cells, score), "round %d: %f,%f missed", round, lon, lat);
        }
    }
}

Test(geohash, box_contains_by_sides_and_reports_centre_distance)
{
    geo_shape_t s = {
        .type = GEO_SHAPE_BOX, .xy = {0, 0}, .conversion = 1, .width = 200000, .height = 100000};
    double xy[2], dist = -1;
    cr_assert(geo_shape_contains(&s, (double)geo_score_of(0.8, 0.4), xy, &dist));
    cr_assert_float_eq(dist, geo_distance(0, 0, xy[0], xy[1]), 1e-9);
    cr_assert_not(geo_shape_contains(&s, (double)geo_score_of(0, 0.5), xy, &dist));
    cr_assert_not(geo_shape_contains(&s, (double)geo_score_of(0.95, 0), xy, &dist));
}
