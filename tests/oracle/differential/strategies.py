"""Hypothesis strategies shared by the differential suite (hlolab vs XLA:CPU).

Values are drawn as a seed plus a density of edge values, then made with numpy:
a few draws per array keep hypothesis fast, and every array still holds NaN,
+-inf, -0.0, denormals, the largest finite values and int min/max at random places.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

from hlolab.numerics import float_format, from_bits, to_bits

# element type name (as hlolab spells it) -> numpy dtype
ELEMENT_TYPES: dict[str, np.dtype] = {name: np.dtype(dt) for name, dt in {
    "i1": np.bool_, "i4": ml_dtypes.int4, "i8": np.int8, "i16": np.int16, "i32": np.int32,
    "i64": np.int64, "ui4": ml_dtypes.uint4, "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32,
    "ui64": np.uint64, "bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32,
    "f64": np.float64, "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2,
    "complex<f32>": np.complex64, "complex<f64>": np.complex128}.items()}

INTS = ["i4", "i8", "i16", "i32", "i64", "ui4", "ui8", "ui16", "ui32", "ui64"]
FLOATS = ["bf16", "f16", "f32", "f64", "f8E4M3FN", "f8E5M2"]
COMPLEX = ["complex<f32>", "complex<f64>"]
ALL_TYPES = ["i1", *INTS, *FLOATS, *COMPLEX]


def kind(et: str) -> str:
    return "bool" if et == "i1" else "int" if et in INTS else "complex" if et in COMPLEX else "float"


def float_info(dt: np.dtype):
    return ml_dtypes.finfo(dt)


def int_info(dt: np.dtype):
    return ml_dtypes.iinfo(dt)


def float_edges(dt: np.dtype) -> np.ndarray:
    """NaN, +-inf (where the type has them), +-0, the smallest denormal, the smallest
    normal, the largest finite value, ties and near-integers."""
    fi = float_info(dt)
    v = [np.nan, np.inf, -np.inf, 0.0, -0.0, float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
         float(fi.tiny), -float(fi.tiny), float(fi.max), -float(fi.max), 0.5, -0.5, 1.5, -2.5, 1.0, -1.0]
    if dt in (np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float64)):
        v += [float(fi.tiny) / 3, -float(fi.tiny) * 0.75]  # more denormals
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.array(v, np.float64).astype(dt)
    return np.concatenate([out, nan_variants(dt)])


def nan_variants(dt: np.dtype) -> np.ndarray:
    """-NaN, NaNs with another payload and, where the type has infinities, signalling NaNs
    (TOTALORDER orders them all; numpy's conversions would keep only the canonical NaN)."""
    fmt = float_format(dt)
    nan = int(to_bits(np.array([np.nan]).astype(dt))[0])
    sign = 1 << (fmt.bits - 1)
    bits = [nan | sign, nan | 1, (nan | 1) | sign]
    if not np.isnan(np.array(np.inf).astype(dt)):  # the type has infinities
        inf = int(to_bits(np.array([np.inf]).astype(dt))[0])
        bits += [inf | 1, (inf | 1) | sign]  # quiet bit clear, payload 1
    return from_bits(np.array(bits, np.uint64), dt)


def int_edges(dt: np.dtype) -> np.ndarray:
    ii = int_info(dt)
    v = [int(ii.min), int(ii.max), 0, 1, int(ii.max) - 1, int(ii.min) + 1, 2, 3]
    if int(ii.min) < 0:
        v += [-1, -2]
    return np.array(v, np.int64 if int(ii.min) < 0 else np.uint64).astype(dt)


def make_values(et: str, shape: tuple[int, ...], seed: int, special: float = 0.2,
                scale: tuple[int, int] = (-6, 6)) -> np.ndarray:
    """A numpy array of ``shape`` and type ``et``: random values, a ``special`` fraction
    replaced by the type's edge values. Floats span 2^scale[0] .. 2^scale[1]."""
    dt = ELEMENT_TYPES[et]
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    k = kind(et)
    if k == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if k == "complex":
        part = "f32" if et == "complex<f32>" else "f64"
        re = make_values(part, shape, seed + 1, special, scale)
        im = make_values(part, shape, seed + 2, special, scale)
        out = np.empty(shape, dt)
        out.real, out.imag = re, im
        return out
    if k == "int":
        ii = int_info(dt)
        wide = np.int64 if int(ii.min) < 0 else np.uint64
        x = rng.integers(int(ii.min), int(ii.max), n, dtype=wide, endpoint=True)
        small = rng.integers(0 if int(ii.min) == 0 else -8, 9, n).astype(wide)
        x = np.where(rng.random(n) < 0.3, small, x)
        edges = int_edges(dt).astype(wide)
    else:
        mag = np.exp2(rng.uniform(*scale, n))
        with np.errstate(over="ignore"):
            x = (rng.standard_normal(n) * mag)
        edges = float_edges(dt).astype(np.float64)
    pick = rng.random(n) < special
    x = np.where(pick, edges[rng.integers(0, len(edges), n)], x)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x.astype(dt).reshape(shape))


seeds = st.integers(0, 2**31 - 1)


@st.composite
def shapes(draw, min_rank: int = 0, max_rank: int = 3, max_side: int = 4, zero: bool = True):
    """Small shapes; one drawn shape in ~10 has a zero-size dimension."""
    r = draw(st.integers(min_rank, max_rank))
    lo = 0 if zero and draw(st.integers(0, 9)) == 0 else 1
    return tuple(draw(st.lists(st.integers(lo, max_side), min_size=r, max_size=r)))


@st.composite
def arrays(draw, types: list[str], shape=None, **kw):
    """(element type, array); ``shape`` a fixed shape or a strategy (default ``shapes()``)."""
    et = draw(st.sampled_from(types))
    shp = draw(shapes()) if shape is None else shape if isinstance(shape, tuple) else draw(shape)
    return et, make_values(et, shp, draw(seeds), special=draw(st.sampled_from([0.0, 0.1, 0.4])), **kw)


# --- attributes of the op families ----------------------------------------------------------

@st.composite
def permutations_of(draw, rank: int):
    return tuple(draw(st.permutations(range(rank))))


@st.composite
def pad_configs(draw, shape):
    """(low, high, interior) per dimension, negative low/high included; results keep
    every dimension >= 0."""
    cfg = []
    for d in shape:
        interior = draw(st.integers(0, 2))
        full = d + max(d - 1, 0) * interior
        lo = draw(st.integers(-min(full, 2), 2))
        hi = draw(st.integers(-min(full + lo, 2) if full + lo > 0 else 0, 2))
        cfg.append((lo, hi, interior))
    return cfg


@st.composite
def slice_configs(draw, shape):
    starts, limits, strides = [], [], []
    for d in shape:
        s = draw(st.integers(0, d))
        e = draw(st.integers(s, d))
        starts.append(s), limits.append(e), strides.append(draw(st.integers(1, 3)))
    return starts, limits, strides


@st.composite
def window_configs(draw, shape, max_window: int = 3):
    """reduce_window attributes for ``shape``: window dimensions, strides, base and window
    dilations, padding (negative too) with at least one window in every dimension."""
    wd, ws, bd, wdil, pad = [], [], [], [], []
    for d in shape:
        w = draw(st.integers(1, max_window))
        b = draw(st.integers(1, 2))
        wl = draw(st.integers(1, 2))
        lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
        ext = (d - 1) * b + 1 + lo + hi if d else lo + hi
        need = (w - 1) * wl + 1
        if ext < need:
            lo, hi = max(lo, 0), max(hi, 0) + need - min(ext, need) + max(-lo, 0) + max(-hi, 0)
        wd.append(w), ws.append(draw(st.integers(1, 3))), bd.append(b), wdil.append(wl)
        pad.append((lo, hi))
    return tuple(wd), tuple(ws), tuple(bd), tuple(wdil), pad


COMPARISON_DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]

# conversion edge values beyond float_edges: values just outside integer ranges, ties
CONVERSION_EDGES = [127.5, -128.5, 255.5, 256.0, -129.0, 32767.5, 32768.0, 65504.0, 65520.0, 2.0**31,
                    -2.0**31 - 1, 2.0**32, 2.0**63, -2.0**63, 2.0**64, 448.0, 464.0, 57344.0, 61440.0,
                    7.5, -7.5, 8.0, 15.5, 16.0, 1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-11 + 2.0**-40]
