"""The "geo" group of the differential test (test_differential.py): GEOADD, GEOPOS, GEOHASH,
GEODIST, GEORADIUS(_RO), GEORADIUSBYMEMBER(_RO), GEOSEARCH and GEOSEARCHSTORE with random
coordinates (valid, on the edges of the Mercator square, and invalid), every option, bad
arguments and wrong arity.

Keys: GEO_KEYS hold points GEOADD wrote (one grows past 128 members, so searches read a
skiplist too; a few members share a point, so that COUNT meets ties, which come in the order
of Redis's partial sort); GEO_DST receive STORE / STOREDIST results (STOREDIST writes
distances as scores); the sorted-set group's keys come in now and then (sorted sets with
arbitrary scores), and results are stored over them too; the other types' keys are only read
(WRONGTYPE)."""
import sys

GEO_KEYS = ["g0", "g1", "g2", "gbig"]
GEO_DST = ["gd0", "gd1"]
GEO_MEMBERS = ["p%d" % i for i in range(24)] + ["", "x" * 70]
UNITS = ["m", "km", "mi", "ft", "M", "KM", "Ft", "parsec", ""]
RADII = ["0", "1", "50", "100", "500", "1000", "3000", "8000", "20000", "1e-5", "0.5", "-1",
         "abc", "inf", "1e300", ""]
BAD_COORDS = [("181", "0"), ("-180.0001", "10"), ("0", "85.06"), ("0", "-90"), ("abc", "1"),
              ("1", ""), ("nan", "0"), ("inf", "0"), ("1e400", "0"), ("0", "-inf")]
EDGE_LON = ["180", "-180", "179.999999", "-179.999999", "0"]
EDGE_LAT = ["85.05112878", "-85.05112878", "85.05112877", "-85.05112877", "0", "66", "80.5"]


def _pools(gen):
    """The differential test's module (its key pools), whatever name it was imported under."""
    return sys.modules[type(gen).__module__]


def _lon(self):
    return "%.6f" % self.r.uniform(-180, 180)


def _lat(self):
    return "%.6f" % self.r.uniform(-85.05112878, 85.05112878)


SHARED_POINTS = [["13.361389", "38.115556"], ["-0.1", "51.5"], ["180", "0"]]


def _point(self):
    """A longitude and a latitude: mostly random, sometimes one on an edge, sometimes one that
    other members share, now and then invalid."""
    x = self.r.random()
    if x < 0.05:
        return list(self.pick(BAD_COORDS))
    if x < 0.08:
        return list(self.pick(SHARED_POINTS))
    if x < 0.10:
        return [self.pick(EDGE_LON), _lat(self)]
    if x < 0.15:
        return [_lon(self), self.pick(EDGE_LAT)]
    return [_lon(self), _lat(self)]


def _src(self):
    x = self.r.random()
    if x < 0.75:
        return self.pick(GEO_KEYS)
    if x < 0.85:
        return self.pick(GEO_DST)
    p = _pools(self)
    if x < 0.95:
        return self.pick(p.ZSET_KEYS)
    return self.pick(p.ALL_KEYS)


def _dst(self):
    """Where results go: never a key of another type's pool. The lex commands take those keys
    for WRONGTYPE (and copy them into their same-score sets), so a sorted set of mixed scores
    there would make their answers undefined."""
    return self.pick(GEO_DST) if self.chance(0.7) else self.pick(_pools(self).ZSET_KEYS)


def _member(self):
    return self.pick(GEO_MEMBERS)


def _radius(self):
    return [self.pick(RADII), self.pick(UNITS) if self.chance(0.9) else self.pick(UNITS[:4])]


def _options(self, store, searchstore=False):
    """WITH*, ASC/DESC, COUNT [ANY], and STORE/STOREDIST for the commands that take them."""
    opts = []
    for o in ("WITHDIST", "WITHCOORD", "WITHHASH"):
        if self.chance(0.25 if not store else 0.03):
            opts.append(o)
    if self.chance(0.4):
        opts.append(self.pick(["ASC", "DESC", "asc"]))
    if self.chance(0.35):
        n = self.pick(["1", "2", "3", "5", "10", "0", "-1", "x", "200"])
        opts += ["COUNT", n] + (["ANY"] if self.chance(0.3) else [])
    elif self.chance(0.03):
        opts.append("ANY")
    if store and self.chance(0.6):
        opts += [self.pick(["STORE", "STOREDIST", "store"]), _dst(self)]
    if searchstore and self.chance(0.4):
        opts.append("STOREDIST")
    if self.chance(0.03):
        opts.append(self.pick(["BOGUS", "COUNT", "STORE", "WITHDIST"]))
    self.r.shuffle(opts) if self.chance(0.1) else None
    return opts


def _from_by(self):
    """GEOSEARCH's FROMMEMBER/FROMLONLAT and BYRADIUS/BYBOX, now and then missing, doubled or
    malformed."""
    args = []
    x = self.r.random()
    if x < 0.45:
        args += ["FROMMEMBER", _member(self)]
    elif x < 0.93:
        args += ["FROMLONLAT"] + _point(self)
    elif x < 0.96:
        args += ["FROMMEMBER", _member(self), "FROMLONLAT"] + _point(self)
    y = self.r.random()
    if y < 0.5:
        args += ["BYRADIUS"] + _radius(self)
    elif y < 0.95:
        args += ["BYBOX", self.pick(RADII[:10]), self.pick(RADII), self.pick(UNITS)]
    elif y < 0.98:
        args += ["BYRADIUS"] + _radius(self) + ["BYBOX", "10", "10", "km"]
    return args


def gen_geo(self):
    c = self.pick(["GEOADD", "GEOADD", "GEOADD", "GEOPOS", "GEOHASH", "GEODIST", "GEODIST",
                   "GEORADIUS", "GEORADIUS", "GEORADIUS_RO", "GEORADIUSBYMEMBER",
                   "GEORADIUSBYMEMBER_RO", "GEOSEARCH", "GEOSEARCH", "GEOSEARCH",
                   "GEOSEARCHSTORE", "GEOSEARCHSTORE"])
    if c == "GEOADD":
        if self.chance(0.05):  # fill the big key past the listpack limit
            args = ["GEOADD", "gbig"]
            for i in range(40):
                args += [_lon(self), _lat(self), "b%d" % self.r.randrange(400)]
            return args
        key = self.pick(GEO_KEYS) if self.chance(0.9) else _dst(self)
        args = [c, key]
        for _ in range(self.r.randint(0, 2)):
            args.append(self.pick(["NX", "XX", "CH", "nx", "ch", "GT"]))
        for _ in range(self.r.randint(1, 4)):
            args += _point(self) + [_member(self)]
        if self.chance(0.04):
            args.pop()
        return args
    if c in ("GEOPOS", "GEOHASH"):
        return [c, _src(self)] + [_member(self) for _ in range(self.r.randint(0, 4))]
    if c == "GEODIST":
        args = [c, _src(self), _member(self), _member(self)]
        if self.chance(0.6):
            args.append(self.pick(UNITS))
        if self.chance(0.03):
            args.append("x")
        if self.chance(0.02):
            args = args[:3]
        return args
    key = _src(self)
    store = c in ("GEORADIUS", "GEORADIUSBYMEMBER")
    if c in ("GEORADIUS", "GEORADIUS_RO"):
        return [c, key] + _point(self) + _radius(self) + _options(self, store)
    if c in ("GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"):
        return [c, key, _member(self)] + _radius(self) + _options(self, store)
    if c == "GEOSEARCH":
        return [c, key] + _from_by(self) + _options(self, False)
    return [c, _dst(self), key] + _from_by(self) + _options(self, False, searchstore=True)
