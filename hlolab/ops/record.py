"""Attribute records: an op's attributes as one typed, frozen value.

Each op declares a record class (a frozen, keyword-only dataclass whose field
names are the spec's: ``offset_dims``, ``window_strides``, ...). A field says
where it lives in the IR with a codec, so the record is read once from the
parsed attributes and can write itself back (the printer, the explorer
schemas and a builder produce the same text)::

    @record
    class GatherAttrs(Attrs):
        offset_dims: tuple[int, ...] = attr(member("dimension_numbers", "stablehlo.gather"))
        slice_sizes: tuple[int, ...] = attr(ints("slice_sizes"))
        indices_are_sorted: bool = attr(boolean("indices_are_sorted"), default=False)

Codecs only check the kind of an attribute (a list of integers, an enum...);
the spec's constraints on the values are the op's ``verify``. Attributes
that no field names are discardable (``mhlo.sharding``, ``jax.*``) and are
left alone.

An op's ``infer(attrs, operand_types)`` returns one entry per result: a
``Type``, or a ``Partial`` for the part of a result type an op leaves to its
declared type (convert's element type, reshape's shape), as MLIR builders
take such result types explicitly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from hlolab.ir.attrs import (
    ArrayAttr,
    Attr,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    EnumAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    StructAttr,
    SymbolRefAttr,
    UnitAttr,
)
from hlolab.ir.structs import CONV_FIELDS, SCHEMAS, ConvDimsAttr, make_struct
from hlolab.types import TensorType, Type, element_type, tensor_type

ErrorFn = Callable[[str | None, str], Exception]


class AttrKindError(ValueError):
    """An attribute of the wrong kind (a codec's read failed)."""


class InferError(ValueError):
    """Raised by an op's ``infer`` when its operand types and attributes admit no
    result type: ``constraint`` is the spec's (``"C22"``) or None. Verification
    turns it into the op's VerificationError; ``infer`` raises nothing else."""

    def __init__(self, constraint: str | None, message: str):
        super().__init__(message)
        self.constraint = constraint
        self.message = message


# --- codecs: one IR spelling each -------------------------------------------------------

@dataclass(frozen=True)
class Codec:
    """How one record field is stored: under IR attribute ``key``."""

    key: str
    what: str = "an attribute"

    def read(self, a: Any) -> Any:
        raise NotImplementedError

    def write(self, v: Any) -> Attr:
        raise NotImplementedError


def _int_list(a: Any) -> tuple[int, ...] | None:
    if isinstance(a, DenseArrayAttr) and a.element != "i1":
        return tuple(int(v) for v in a.values)
    if isinstance(a, DenseElementsAttr) and a.type.element.kind in ("sint", "uint"):
        return tuple(int(v) for v in np.asarray(a.array).reshape(-1))
    if isinstance(a, ArrayAttr) and all(isinstance(x, IntegerAttr) for x in a.items):
        return tuple(x.value for x in a.items)
    if isinstance(a, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in a):
        return a
    return None


@dataclass(frozen=True)
class Ints(Codec):
    """``array<i64: 1, 2>`` (``spelling="dense"``: ``dense<[1, 2]> : tensor<2xi64>``)."""

    what: str = "a list of integers"
    spelling: str = "array"

    def read(self, a: Any) -> tuple[int, ...]:
        v = _int_list(a)
        if v is None:
            raise AttrKindError
        return v

    def write(self, v: Sequence[int]) -> Attr:
        if self.spelling == "dense":
            arr = np.asarray(v, dtype=np.int64).reshape(len(v))
            return DenseElementsAttr(tensor_type((len(v),), "i64"), arr)
        return DenseArrayAttr("i64", tuple(int(x) for x in v))


@dataclass(frozen=True)
class Bools(Codec):
    """``array<i1: true, false>``."""

    what: str = "a list of booleans"

    def read(self, a: Any) -> tuple[bool, ...]:
        if isinstance(a, DenseArrayAttr) and a.element == "i1":
            return tuple(bool(v) for v in a.values)
        if isinstance(a, DenseElementsAttr) and a.type.element.kind == "bool":
            return tuple(bool(v) for v in np.asarray(a.array).reshape(-1))
        if isinstance(a, ArrayAttr) and all(isinstance(x, BoolAttr) for x in a.items):
            return tuple(x.value for x in a.items)
        raise AttrKindError

    def write(self, v: Sequence[bool]) -> Attr:
        return DenseArrayAttr("i1", tuple(bool(x) for x in v))


@dataclass(frozen=True)
class Pairs(Codec):
    """``dense<[[lo, hi], ...]> : tensor<Nx2xi64>`` as ((lo, hi), ...)."""

    what: str = "an Nx2 integer tensor"

    def read(self, a: Any) -> tuple[tuple[int, int], ...]:
        if not (isinstance(a, DenseElementsAttr) and a.type.element.kind in ("sint", "uint")):
            raise AttrKindError
        arr = np.asarray(a.array)
        if arr.ndim != 2 or arr.shape[1] != 2:
            if arr.size == 0:
                return ()
            raise AttrKindError
        return tuple((int(lo), int(hi)) for lo, hi in arr.tolist())

    def write(self, v: Sequence[tuple[int, int]]) -> Attr:
        arr = np.asarray(v, dtype=np.int64).reshape(len(v), 2)
        return DenseElementsAttr(tensor_type((len(v), 2), "i64"), arr)


@dataclass(frozen=True)
class Int(Codec):
    """``3 : i64`` (the element type spelled by ``type``)."""

    what: str = "an integer"
    type: str = "i64"

    def read(self, a: Any) -> int:
        if isinstance(a, IntegerAttr):
            return a.value
        if isinstance(a, DenseElementsAttr) and a.array.size == 1 and a.type.element.kind in ("sint", "uint"):
            return int(a.array.reshape(()))
        raise AttrKindError

    def write(self, v: int) -> Attr:
        return IntegerAttr(int(v), element_type(self.type))


@dataclass(frozen=True)
class Float(Codec):
    what: str = "a float"
    type: str = "f32"

    def read(self, a: Any) -> float:
        if isinstance(a, (FloatAttr, IntegerAttr)):
            return float(a.value)
        raise AttrKindError

    def write(self, v: float) -> Attr:
        return FloatAttr(float(v), element_type(self.type))


@dataclass(frozen=True)
class Bool(Codec):
    what: str = "a bool"

    def read(self, a: Any) -> bool:
        if isinstance(a, BoolAttr):
            return a.value
        raise AttrKindError

    def write(self, v: bool) -> Attr:
        return BoolAttr(bool(v))


@dataclass(frozen=True)
class Unit(Codec):
    """A unit attribute: present (True) or absent (False)."""

    what: str = "a unit attribute"

    def read(self, a: Any) -> bool:
        if isinstance(a, UnitAttr):
            return True
        raise AttrKindError

    def write(self, v: bool) -> Attr:
        return UnitAttr()


@dataclass(frozen=True)
class Enum(Codec):
    """``#stablehlo<comparison_direction GT>`` as ``"GT"``."""

    what: str = "an enum"
    dialect: str = "stablehlo"
    kind: str = ""
    cases: tuple[str, ...] = ()

    def read(self, a: Any) -> str:
        if isinstance(a, EnumAttr) and (not self.kind or a.kind == self.kind):
            v = a.value
        elif isinstance(a, StringAttr):
            v = a.value
        else:
            raise AttrKindError
        if self.cases and v not in self.cases:
            raise AttrKindError
        return v

    def write(self, v: str) -> Attr:
        return EnumAttr(self.dialect, self.kind, v)


@dataclass(frozen=True)
class Str(Codec):
    what: str = "a string"

    def read(self, a: Any) -> str:
        if isinstance(a, StringAttr):
            return a.value
        raise AttrKindError

    def write(self, v: str) -> Attr:
        return StringAttr(v)


@dataclass(frozen=True)
class Symbol(Codec):
    what: str = "a symbol"

    def read(self, a: Any) -> str:
        if isinstance(a, SymbolRefAttr):
            return a.name
        if isinstance(a, StringAttr):
            return a.value
        raise AttrKindError

    def write(self, v: str) -> Attr:
        return SymbolRefAttr((v,))


@dataclass(frozen=True)
class Raw(Codec):
    """Any attribute, kept as the IR object (a constant's value, a backend config)."""

    kinds: tuple[type, ...] = ()

    def read(self, a: Any) -> Any:
        if self.kinds and not isinstance(a, self.kinds):
            raise AttrKindError
        return a

    def write(self, v: Any) -> Attr:
        return v


@dataclass(frozen=True)
class Member(Codec):
    """One field of a struct attribute (``#stablehlo.gather<offset_dims = [...], ...>``);
    ``member`` defaults to the record field's own name."""

    struct: str = ""
    member: str = ""

    def read_struct(self, a: Any) -> StructAttr:
        if not (isinstance(a, StructAttr) and a.name == self.struct):
            raise AttrKindError
        return a


def ints(key: str, spelling: str = "array") -> Ints:
    return Ints(key, spelling=spelling)


def bools(key: str) -> Bools:
    return Bools(key)


def pairs(key: str) -> Pairs:
    return Pairs(key)


def integer(key: str, type: str = "i64") -> Int:
    return Int(key, type=type)


def floating(key: str, type: str = "f32") -> Float:
    return Float(key, type=type)


def boolean(key: str) -> Bool:
    return Bool(key)


def unit(key: str) -> Unit:
    return Unit(key)


def enum(key: str, kind: str, cases: Sequence[str] = (), dialect: str = "stablehlo") -> Enum:
    return Enum(key, dialect=dialect, kind=kind, cases=tuple(cases))


def string(key: str) -> Str:
    return Str(key)


def symbol(key: str) -> Symbol:
    return Symbol(key)


def raw(key: str, *kinds: type, what: str = "an attribute") -> Raw:
    return Raw(key, what=what, kinds=kinds)


def member(key: str, struct: str, name: str = "") -> Member:
    return Member(key, what=f"a #{struct} struct", struct=struct, member=name)


_NO_DEFAULT = dataclasses.MISSING


def attr(codec: Codec, default: Any = _NO_DEFAULT, *, always: bool = False) -> Any:
    """A record field stored by ``codec``; without ``default`` the attribute is required.
    ``always``: written even at its default (upstream's parser requires it, e.g.
    convolution's feature_group_count), though a text without it still reads."""
    return dataclasses.field(default=default, metadata={"ir": codec, "always": always})


R = TypeVar("R", bound="Attrs")


def record(cls: type[R]) -> type[R]:
    """Make ``cls`` an attribute record: a frozen, keyword-only dataclass."""
    return dataclass(frozen=True, kw_only=True)(cls)


@dataclass(frozen=True, kw_only=True)
class Attrs:
    """Base of every attribute record (and the record of ops without attributes)."""

    # IR keys of attributes this op reads though no field holds them (none by default)
    extra_keys: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def codecs(cls) -> list[tuple[str, Codec, Any]]:
        """(field name, codec, default or MISSING) in declaration order."""
        out = []
        for f in dataclasses.fields(cls):
            codec = f.metadata.get("ir")
            if codec is not None:
                out.append((f.name, codec, f.default))
        return out

    @classmethod
    def always_written(cls) -> frozenset[str]:
        """The IR keys ``to_ir`` writes even at their defaults."""
        return frozenset(f.metadata["ir"].key for f in dataclasses.fields(cls)
                         if f.metadata.get("always"))

    @classmethod
    def ir_names(cls) -> frozenset[str]:
        """The top-level IR attribute keys this record reads and writes."""
        return frozenset(c.key for _, c, _ in cls.codecs()) | frozenset(cls.extra_keys)

    @classmethod
    def from_ir(cls: type[R], attributes: Mapping[str, Attr], error: ErrorFn) -> R:
        """The record of an op's attributes; ``error(constraint, message)`` builds the
        exception for a missing attribute or one of the wrong kind."""
        values: dict[str, Any] = {}
        present = set()
        for name, codec, default in cls.codecs():
            a = attributes.get(codec.key)
            if a is None:
                if default is _NO_DEFAULT:
                    raise error(None, f"missing attribute '{codec.key}'")
                values[name] = default
                continue
            present.add(codec.key)
            try:
                if isinstance(codec, Member):
                    values[name] = _read_member(codec, name, a)
                else:
                    values[name] = codec.read(a)
            except AttrKindError:
                raise error(None, f"attribute '{codec.key}' must be {codec.what}, got {a}") from None
        rec = cls(**values)
        # the keys the text had, in its order: to_ir writes them back the same way
        object.__setattr__(rec, "_present", tuple(k for k in attributes if k in present))
        return rec

    def to_ir(self) -> dict[str, Attr]:
        """The IR attributes of this record: those the parsed text had in its order, the
        others in field order. A field at its default is written only when the parsed
        text had it (so text round-trips), a struct attribute whenever one of its members is."""
        present: tuple[str, ...] = getattr(self, "_present", ())
        out: dict[str, Attr] = {}
        groups: dict[str, list[tuple[Member, str, Any]]] = {}
        always = self.always_written()
        for name, codec, default in self.codecs():
            v = getattr(self, name)
            if isinstance(codec, Member):
                groups.setdefault(codec.key, []).append((codec, name, v))
                out.setdefault(codec.key, None)  # type: ignore[arg-type]  # keep field order
                continue
            if default is not _NO_DEFAULT and _same(v, default) and codec.key not in present \
                    and codec.key not in always:
                continue
            if isinstance(codec, Unit) and not v:
                continue
            out[codec.key] = codec.write(v)
        for key, members in groups.items():
            out[key] = _write_struct(members)
        order = [k for k in present if k in out] + [k for k in out if k not in present]
        return {k: out[k] for k in order}

    def replace(self: R, **changes: Any) -> R:
        """A copy with ``changes`` (keeps which defaulted attributes the text had)."""
        rec = dataclasses.replace(self, **changes)
        object.__setattr__(rec, "_present", getattr(self, "_present", ()))
        return rec


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays compare element-wise
        return a is b


def _read_member(codec: Member, field_name: str, a: Any) -> Any:
    s = codec.read_struct(a)
    v = s.get(codec.member or field_name)
    if v is None:
        raise AttrKindError
    return v


def _write_struct(members: list[tuple[Member, str, Any]]) -> Attr:
    struct = members[0][0].struct
    values = {(c.member or name): (tuple(v) if isinstance(v, list) else v) for c, name, v in members}
    if struct == "stablehlo.conv":
        return ConvDimsAttr(struct, tuple((k, values[k]) for k in CONV_FIELDS))
    return make_struct(SCHEMAS[struct], values)


# --- inferred result types -------------------------------------------------------------

@dataclass(frozen=True)
class Partial:
    """The part of a result type an op's operands and attributes fix: ``shape``
    (None: any; a ``None`` entry: any size) and ``element`` (None: any)."""

    shape: tuple[int | None, ...] | None = None
    element: Any = None
    # a predicate on the declared type for what the two fields cannot say
    # ("a tensor of integer type"), with its description
    check: Callable[[Any], bool] | None = dataclasses.field(default=None, compare=False)
    what: str = ""

    def __str__(self) -> str:
        shape = "*" if self.shape is None else "x".join("?" if d is None else str(d) for d in self.shape)
        elem = "?" if self.element is None else str(self.element)
        return self.what or f"tensor<{shape}x{elem}>"


Inferred = Type | Partial


@dataclass(frozen=True)
class AsDeclared:
    """What ``infer`` gives for an op whose operands and attributes do not fix how many
    results it has (an if or a case has its branches' results, a call its callee's):
    any number of results, each admitted by ``each``."""

    each: Inferred = Partial()

    def expand(self, n: int) -> list[Inferred]:
        return [self.each] * n


def inferred_for(inferred: list[Inferred] | AsDeclared, declared: Sequence[Type]) -> list[Inferred]:
    """``infer``'s answer as one entry per declared result (``AsDeclared`` expanded)."""
    return inferred.expand(len(declared)) if isinstance(inferred, AsDeclared) else list(inferred)


def infer_with(infer: Callable[[Any, list[Type]], list[Inferred] | AsDeclared], rec: Any,
               operand_types: list[Type], error: ErrorFn) -> list[Inferred] | AsDeclared:
    """``infer(rec, operand_types)`` with an InferError turned into ``error(constraint, message)``."""
    try:
        return infer(rec, operand_types)
    except InferError as e:
        raise error(e.constraint, e.message) from None


def type_admits(inferred: Inferred, declared: Type) -> bool:
    """``declared`` is a type ``inferred`` allows: equal, up to dynamic sizes (``?``)
    and i32/si32 spellings, or matching a ``Partial``'s fixed parts."""
    from hlolab.ops.common import same_element, shapes_compatible

    if isinstance(inferred, Partial):
        if inferred.check is not None and not inferred.check(declared):
            return False
        if inferred.shape is None and inferred.element is None:
            return True
        if not isinstance(declared, TensorType):
            return False
        if inferred.shape is not None and not shapes_compatible(inferred.shape, declared.shape):
            return False
        return inferred.element is None or same_element(inferred.element, declared.element)
    if isinstance(inferred, TensorType) and isinstance(declared, TensorType):
        return (same_element(inferred.element, declared.element)
                and shapes_compatible(inferred.shape, declared.shape))
    from hlolab.types import TupleType

    if isinstance(inferred, TupleType) and isinstance(declared, TupleType):
        return len(inferred.types) == len(declared.types) and all(
            type_admits(a, b) for a, b in zip(inferred.types, declared.types, strict=True))
    return inferred == declared


def same_types(operand_types: Sequence[Type], n: int | None = None) -> list[Inferred]:
    """infer of ops whose results have the types of their operands (``n`` of them)."""
    return list(operand_types[:n] if n is not None else operand_types)
