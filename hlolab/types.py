"""StableHLO types and their numpy / ml_dtypes element dtypes.

Element types keep the spelling they were written with (``i32`` and ``si32``
are the same type to the spec but print back as written).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from hlolab.errors import UnsupportedError

# kind: "bool", "sint", "uint", "float", "complex"
_INT_DTYPES = {
    2: (ml_dtypes.int2, ml_dtypes.uint2),
    4: (ml_dtypes.int4, ml_dtypes.uint4),
    8: (np.int8, np.uint8),
    16: (np.int16, np.uint16),
    32: (np.int32, np.uint32),
    64: (np.int64, np.uint64),
}

_FLOAT_DTYPES = {
    "f4E2M1FN": ml_dtypes.float4_e2m1fn,
    "f6E2M3FN": ml_dtypes.float6_e2m3fn,
    "f6E3M2FN": ml_dtypes.float6_e3m2fn,
    "f8E3M4": ml_dtypes.float8_e3m4,
    "f8E4M3": ml_dtypes.float8_e4m3,
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
    "bf16": ml_dtypes.bfloat16,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
}


@dataclass(frozen=True)
class ElementType:
    """A tensor element type: boolean, integer, float or complex."""

    name: str  # the MLIR spelling, e.g. "i32", "ui8", "bf16", "complex<f32>"
    kind: str  # "bool" | "sint" | "uint" | "float" | "complex"
    bits: int
    dtype: np.dtype = field(compare=False, repr=False)

    def __str__(self) -> str:
        return self.name

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def is_int(self) -> bool:
        """Signed or unsigned integer (not boolean)."""
        return self.kind in ("sint", "uint")

    @property
    def is_signed(self) -> bool:
        return self.kind == "sint"

    @property
    def is_unsigned(self) -> bool:
        return self.kind == "uint"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    @property
    def component(self) -> ElementType:
        """The part type of a complex type (f32 for complex<f32>)."""
        if not self.is_complex:
            return self
        return element_type(self.name[len("complex<"):-1])

    def min_value(self) -> int | float:
        if self.is_bool:
            return 0
        if self.is_int:
            return int(ml_dtypes.iinfo(self.dtype).min)
        return float(ml_dtypes.finfo(self.dtype).min)

    def max_value(self) -> int | float:
        if self.is_bool:
            return 1
        if self.is_int:
            return int(ml_dtypes.iinfo(self.dtype).max)
        return float(ml_dtypes.finfo(self.dtype).max)


def _make_element_type(name: str) -> ElementType | None:
    if name == "i1":
        return ElementType(name, "bool", 1, np.dtype(np.bool_))
    if name in _FLOAT_DTYPES:
        dt = np.dtype(_FLOAT_DTYPES[name])
        bits = int(name[1]) if name[1] in "468" and name[0] == "f" and name[2] == "E" else dt.itemsize * 8
        return ElementType(name, "float", bits, dt)
    for prefix, kind in (("ui", "uint"), ("si", "sint"), ("i", "sint")):
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            bits = int(name[len(prefix):])
            if bits not in _INT_DTYPES:
                return None
            signed, unsigned = _INT_DTYPES[bits]
            return ElementType(name, kind, bits, np.dtype(unsigned if kind == "uint" else signed))
    if name in ("complex<f32>", "complex<f64>"):
        part = 32 if name == "complex<f32>" else 64
        return ElementType(name, "complex", 2 * part,
                           np.dtype(np.complex64 if part == 32 else np.complex128))
    return None


_ELEMENT_CACHE: dict[str, ElementType] = {}


def element_type(name: str) -> ElementType:
    """The element type spelled ``name``; raises for unknown or unsupported ones."""
    et = _ELEMENT_CACHE.get(name)
    if et is not None:
        return et
    et = _make_element_type(name)
    if et is None:
        if name == "tf32":
            raise UnsupportedError("element type tf32 is not supported: ml_dtypes has no TensorFloat32 dtype")
        raise UnsupportedError(f"unknown element type '{name}'")
    _ELEMENT_CACHE[name] = et
    return et


def is_element_type_name(name: str) -> bool:
    return name == "tf32" or _make_element_type(name) is not None


def element_type_of_dtype(dtype: np.dtype) -> ElementType:
    """The canonical StableHLO element type for a numpy/ml_dtypes dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return element_type("i1")
    for name, dt in _FLOAT_DTYPES.items():
        if np.dtype(dt) == dtype:
            return element_type(name)
    for bits, (s, u) in _INT_DTYPES.items():
        if np.dtype(s) == dtype:
            return element_type(f"i{bits}")
        if np.dtype(u) == dtype:
            return element_type(f"ui{bits}")
    if dtype == np.complex64:
        return element_type("complex<f32>")
    if dtype == np.complex128:
        return element_type("complex<f64>")
    raise UnsupportedError(f"no StableHLO element type for numpy dtype {dtype}")


ALL_ELEMENT_TYPE_NAMES: tuple[str, ...] = (
    ("i1",)
    + tuple(f"i{b}" for b in _INT_DTYPES)
    + tuple(f"ui{b}" for b in _INT_DTYPES)
    + tuple(_FLOAT_DTYPES)
    + ("complex<f32>", "complex<f64>")
)


@dataclass(frozen=True)
class QuantizedElementType:
    """``!quant.uniform<storage<min:max>:expressed[:axis], params>``."""

    storage: ElementType
    expressed: ElementType
    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    axis: int | None = None
    storage_min: int | None = None  # None: min_value(storage)
    storage_max: int | None = None
    scale_texts: tuple[str, ...] | None = field(default=None, compare=False)

    @property
    def dtype(self) -> np.dtype:
        return self.storage.dtype

    @property
    def kind(self) -> str:
        return "quant"

    @property
    def is_per_axis(self) -> bool:
        return self.axis is not None

    @property
    def name(self) -> str:
        return str(self)

    def __str__(self) -> str:
        st = str(self.storage)
        if self.storage_min is not None or self.storage_max is not None:
            lo = self.storage_min if self.storage_min is not None else self.storage.min_value()
            hi = self.storage_max if self.storage_max is not None else self.storage.max_value()
            st += f"<{lo}:{hi}>"
        head = f"{st}:{self.expressed}"
        if self.axis is not None:
            head += f":{self.axis}"
        texts = self.scale_texts or tuple(repr(float(s)) for s in self.scales)
        params = [f"{t}:{z}" if z != 0 else t for t, z in zip(texts, self.zero_points)]
        body = ("{" + ",".join(params) + "}") if self.axis is not None else params[0]
        return f"!quant.uniform<{head}, {body}>"


AnyElementType = (ElementType | QuantizedElementType)


@dataclass(frozen=True)
class BoundsEncoding:
    """``#stablehlo.bounds<8, ?>``, a tensor type's encoding: per dimension an upper bound
    on its run-time size (None, ``?``: no bound). Only a dynamic (``?``) dim has one."""

    bounds: tuple[int | None, ...]

    def __str__(self) -> str:
        return "#stablehlo.bounds<" + ", ".join("?" if b is None else str(b) for b in self.bounds) + ">"

    @staticmethod
    def parse(text: str) -> BoundsEncoding | None:
        """The encoding written ``text`` (an attribute's exact text); None when it is not a
        bounds encoding or not well formed (the caller reports it)."""
        t = text.strip()
        if not (t.startswith("#stablehlo.bounds<") and t.endswith(">")):
            return None
        body = t[len("#stablehlo.bounds<"):-1].strip()
        out: list[int | None] = []
        for part in (body.split(",") if body else []):
            p = part.strip()
            if p == "?":
                out.append(None)
            elif p.lstrip("-").isdigit():
                out.append(int(p))
            else:
                return None
        return BoundsEncoding(tuple(out))

    def problem(self, shape: tuple[int | None, ...]) -> str | None:
        """Why these bounds cannot describe a tensor of ``shape`` (None: they can)."""
        if len(self.bounds) != len(shape):
            return f"{self} has {len(self.bounds)} bound(s) for a tensor of rank {len(shape)}"
        for d, (b, n) in enumerate(zip(self.bounds, shape, strict=True)):
            if b is not None and n is not None:
                return f"{self}: static dimension {d} (size {n}) cannot have a bound, use ? for it"
            if b is not None and b < 0:
                return f"{self}: the bound of dimension {d} must be >= 0, got {b}"
        return None

    def exceeded(self, shape: tuple[int, ...]) -> tuple[int, int, int] | None:
        """The first (dim, run-time size, bound) where ``shape`` is over its bound, else None."""
        for d, (b, n) in enumerate(zip(self.bounds, shape, strict=False)):
            if b is not None and n > b:
                return d, int(n), b
        return None


@dataclass(frozen=True)
class TensorType:
    """``tensor<2x?x3xf32>``; ``None`` marks a dynamic (``?``) dimension."""

    shape: tuple[int | None, ...]
    element: AnyElementType
    encoding: object | None = None  # BoundsEncoding (checked at run time), or another, kept for printing

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        enc = f", {self.encoding}" if self.encoding is not None else ""
        return f"tensor<{dims}{self.element}{enc}>"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def bounds(self) -> BoundsEncoding | None:
        """The ``#stablehlo.bounds`` encoding, if the type has one (also read from the older
        ``#stablehlo.type_extensions<bounds = [4, ?]>``, which prints back as written)."""
        enc = self.encoding
        if isinstance(enc, BoundsEncoding):
            return enc
        if getattr(enc, "name", None) == "stablehlo.type_extensions":  # an ir.attrs.StructAttr
            got = enc.get("bounds")  # type: ignore[attr-defined]
            if isinstance(got, tuple):
                return BoundsEncoding(tuple(None if b == "?" else int(b) for b in got))
        return None

    def refined(self, shape: tuple[int, ...]) -> TensorType:
        """This type with run-time sizes ``shape``: a bounds encoding, which describes the
        ``?`` dims a static shape no longer has, is dropped; another encoding is kept."""
        return TensorType(tuple(int(n) for n in shape), self.element,
                          None if self.bounds is not None else self.encoding)

    @property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.element.dtype

    @property
    def is_quantized(self) -> bool:
        return isinstance(self.element, QuantizedElementType)

    def static_shape(self, what: str = "this value") -> tuple[int, ...]:
        if not self.is_static:
            raise UnsupportedError(f"{what} has dynamic shape {self}; execution needs a static shape")
        return tuple(int(d) for d in self.shape)  # type: ignore[arg-type]

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.static_shape():
            n *= d
        return n


@dataclass(frozen=True)
class TupleType:
    types: tuple[Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(str(t) for t in self.types) + ">"


@dataclass(frozen=True)
class TokenType:
    spelling: str = "!stablehlo.token"

    def __str__(self) -> str:
        return self.spelling


@dataclass(frozen=True)
class FunctionType:
    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        ins = ", ".join(str(t) for t in self.inputs)
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            outs = str(self.results[0])
        else:
            outs = "(" + ", ".join(str(t) for t in self.results) + ")"
        return f"({ins}) -> {outs}"


@dataclass(frozen=True)
class OpaqueType:
    """A type hlolab does not model (e.g. ``index``, ``!foo.bar``): kept as text."""

    text: str

    def __str__(self) -> str:
        return self.text


Type = (TensorType | TupleType | TokenType | FunctionType | ElementType | QuantizedElementType
        | OpaqueType)


def tensor_type(shape: tuple[int, ...] | list[int], element: str | AnyElementType) -> TensorType:
    et = element_type(element) if isinstance(element, str) else element
    return TensorType(tuple(shape), et)
