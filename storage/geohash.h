/* geohash.h - the geohash math behind the GEO commands: where a point's sorted-set score comes
 * from, how a score turns back into a point, and which score ranges a radius or box search
 * must read.
 *
 * A point (longitude, latitude) is stored as the score of a sorted-set member. The score is a
 * 52-bit integer (exact in a double): longitude in [-180, 180] and latitude in
 * [GEO_LAT_MIN, GEO_LAT_MAX] (the Web Mercator limits) are each scaled to a 26-bit cell index,
 * and the two indexes are interleaved, latitude in the even bits (0, 2, ...) and longitude in
 * the odd bits. A hash of fewer steps keeps the top 2*step bits: a cell of that size. Scores,
 * decoded coordinates and distances are bit-for-bit Redis 7.0's: the floating-point
 * operations happen in the same order, so changing an expression here changes replies.
 *
 * Pure functions over numbers: no allocation, nothing fails except where a return value says
 * so. Any thread. */
#ifndef CTE_STORAGE_GEOHASH_H
#define CTE_STORAGE_GEOHASH_H

#include <stdint.h>

#define GEO_STEP_MAX 26 /* 26 steps: 52 bits, a cell of about 0.6 m */
#define GEO_LAT_MIN -85.05112878
#define GEO_LAT_MAX 85.05112878
#define GEO_LONG_MIN -180.0
#define GEO_LONG_MAX 180.0
/* The earth's radius Redis uses for distances, in metres. */
#define GEO_EARTH_RADIUS_M 6372797.560856

/* A cell: the top 2*step bits of a 52-bit hash (step 0 with bits 0 is "no cell"). */
typedef struct geo_hash {
    uint64_t bits;
    uint8_t step;
} geo_hash_t;

typedef struct geo_range {
    double min, max;
} geo_range_t;

/* The rectangle a cell covers. */
typedef struct geo_area {
    geo_hash_t hash;
    geo_range_t lon, lat;
} geo_area_t;

/* ---- cells ---- */

/* Interleaves lat (even bits) and lon (odd bits) into one 64-bit word, and back. */
uint64_t geo_interleave(uint32_t lat, uint32_t lon);
void geo_deinterleave(uint64_t bits, uint32_t *lat, uint32_t *lon);

/* The cell of step steps (1..32) holding (lon, lat) within the ranges. Returns 0, or -1 when
 * the point lies outside the ranges or outside [-180,180] x [GEO_LAT_MIN, GEO_LAT_MAX]
 * (then *h is unchanged). */
int geo_encode(const geo_range_t *lon_r, const geo_range_t *lat_r, double lon, double lat, int step,
               geo_hash_t *h);
/* geo_encode over the stored ranges (the whole Mercator square). */
int geo_encode_wgs84(double lon, double lat, int step, geo_hash_t *h);
/* The area the cell h covers within the ranges. Returns 0, or -1 for "no cell". */
int geo_decode(const geo_range_t *lon_r, const geo_range_t *lat_r, geo_hash_t h, geo_area_t *area);
/* The hash's bits moved up to the 52-bit score scale. */
uint64_t geo_align52(geo_hash_t h);
/* The eight cells around h, in the order N, S, E, W, NE, NW, SE, SW. Indexes wrap around at
 * the edges of the square (north of the top row is the bottom row), as Redis's do. */
void geo_neighbors(geo_hash_t h, geo_hash_t out[8]);

/* ---- scores ---- */

/* The score of a point: its 52-bit cell index. (lon, lat) must be within the limits. */
uint64_t geo_score_of(double lon, double lat);
/* The centre of the cell a score names, clamped to the limits, into xy[0] (longitude) and
 * xy[1] (latitude). Any score decodes (a sorted set may hold any scores): it is converted to
 * an integer as x86-64 converts a double to uint64_t, which is what Redis does. */
void geo_score_decode(double score, double xy[2]);
/* The standard 11-character base-32 geohash of a point (latitude range -90..90, the last
 * character always '0' as Redis's GEOHASH answers). out gets 11 bytes, no NUL. */
void geo_hash_string(const double xy[2], char out[11]);

/* ---- distances ---- */

/* Great-circle (haversine) distance in metres between two points given in degrees. */
double geo_distance(double lon1, double lat1, double lon2, double lat2);
/* Distance in metres along a meridian between two latitudes. */
double geo_lat_distance(double lat1, double lat2);

/* ---- search shapes ---- */

enum geo_shape_type { GEO_SHAPE_RADIUS = 1, GEO_SHAPE_BOX = 2 };

/* What a search covers: a circle of radius, or a box of width x height, centred on xy, in
 * units of conversion metres each. */
typedef struct geo_shape {
    int type;
    double xy[2];
    double conversion;
    double radius;
    double width, height;
} geo_shape_t;

/* The cells a search reads: the centre cell first, then its neighbours in geo_neighbors'
 * order; a cell that cannot hold a match is "no cell" (step 0, bits 0). */
typedef struct geo_search_cells {
    geo_hash_t cell[9];
} geo_search_cells_t;

/* The step whose cells are about as large as a search of range_m metres at latitude lat
 * (1..26; 26 for 0 metres). */
int geo_steps_for_radius(double range_m, double lat);
/* The longitude/latitude box that bounds the shape: bounds = {min lon, min lat, max lon,
 * max lat}; the sides may lie past the limits (no wrapping). */
void geo_bounding_box(const geo_shape_t *s, double bounds[4]);
/* The nine cells to read for shape s. */
void geo_search_cells(const geo_shape_t *s, geo_search_cells_t *out);
/* The score interval [*min, *max) that holds exactly the points of cell h. */
void geo_cell_scores(geo_hash_t h, uint64_t *min, uint64_t *max);
/* 1 if the point whose score is score lies within s, with its coordinates in xy and its
 * distance from the centre in metres in *dist; 0 otherwise (xy is set either way). */
int geo_shape_contains(const geo_shape_t *s, double score, double xy[2], double *dist);

#endif
