"""The StableHLO struct attributes (``#stablehlo.gather<...>`` and friends).

Each known struct has a schema: its fields in canonical order and the kind of
value each holds. Parsing accepts the fields in any order and stores them in
schema order, so two spellings of the same struct compare equal.

Dimension-number structs (gather, scatter, dot, ragged_dot) always hold every
field (an omitted list is ``()``, an omitted ``index_vector_dim`` is ``0``),
so ops can read any field with ``attr.get(name)``; they print like MLIR does,
leaving out empty lists and zeros. The convolution dimension numbers print in
the compact ``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`` form (or the ``raw``
form they were written in).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hlolab.ir.attrs import StructAttr, _struct_value

# field kinds
INTS = "ints"  # [1, 2] -> tuple of ints
INT = "int"  # 3 -> int
BOOL = "bool"  # true -> bool
TYPE = "type"  # f32 -> a type (tf32 allowed: an OpaqueType)
ATTR = "attr"  # any attribute value
BOUNDS = "bounds"  # [4, ?] -> tuple of int or "?"

# styles
OMIT_DEFAULTS = "omit_defaults"  # every field stored; empty lists and zeros not printed
ALL = "all"  # every field required and printed
PRESENT = "present"  # fields stored and printed only when written


@dataclass(frozen=True)
class StructSchema:
    name: str  # "stablehlo.gather"
    fields: tuple[tuple[str, str], ...]
    style: str

    def kind(self, field_name: str) -> str | None:
        for n, k in self.fields:
            if n == field_name:
                return k
        return None

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.fields)


def _schema(name: str, style: str, *fields: tuple[str, str]) -> StructSchema:
    return StructSchema(name, tuple(fields), style)


SCHEMAS: dict[str, StructSchema] = {s.name: s for s in (
    _schema("stablehlo.gather", OMIT_DEFAULTS,
            ("offset_dims", INTS), ("collapsed_slice_dims", INTS), ("operand_batching_dims", INTS),
            ("start_indices_batching_dims", INTS), ("start_index_map", INTS), ("index_vector_dim", INT)),
    _schema("stablehlo.scatter", OMIT_DEFAULTS,
            ("update_window_dims", INTS), ("inserted_window_dims", INTS), ("input_batching_dims", INTS),
            ("scatter_indices_batching_dims", INTS), ("scatter_dims_to_operand_dims", INTS),
            ("index_vector_dim", INT)),
    _schema("stablehlo.dot", OMIT_DEFAULTS,
            ("lhs_batching_dimensions", INTS), ("rhs_batching_dimensions", INTS),
            ("lhs_contracting_dimensions", INTS), ("rhs_contracting_dimensions", INTS)),
    _schema("chlo.ragged_dot", OMIT_DEFAULTS,
            ("lhs_batching_dimensions", INTS), ("rhs_batching_dimensions", INTS),
            ("lhs_contracting_dimensions", INTS), ("rhs_contracting_dimensions", INTS),
            ("lhs_ragged_dimensions", INTS), ("rhs_group_dimensions", INTS)),
    _schema("stablehlo.dot_algorithm", ALL,
            ("lhs_precision_type", TYPE), ("rhs_precision_type", TYPE), ("accumulation_type", TYPE),
            ("lhs_component_count", INT), ("rhs_component_count", INT),
            ("num_primitive_operations", INT), ("allow_imprecise_accumulation", BOOL)),
    _schema("stablehlo.channel_handle", ALL, ("handle", INT), ("type", INT)),
    _schema("stablehlo.output_operand_alias", ALL,
            ("output_tuple_indices", INTS), ("operand_index", INT), ("operand_tuple_indices", INTS)),
    _schema("stablehlo.result_accuracy", PRESENT,
            ("atol", ATTR), ("rtol", ATTR), ("ulps", INT), ("mode", ATTR)),
    _schema("stablehlo.type_extensions", ALL, ("bounds", BOUNDS)),
)}

CONV_FIELDS: tuple[str, ...] = (
    "input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
    "kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions",
    "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions",
)


def default_value(kind: str) -> Any:
    return () if kind in (INTS, BOUNDS) else 0


def _is_default(kind: str, value: Any) -> bool:
    return value == default_value(kind) and not isinstance(value, bool)


@dataclass(frozen=True)
class DimsStructAttr(StructAttr):
    """A dimension-number struct holding all its fields; prints without the
    empty lists and zero integers, as MLIR does."""

    def __str__(self) -> str:
        schema = SCHEMAS.get(self.name)
        parts = []
        for k, v in self.fields:
            kind = schema.kind(k) if schema else None
            if kind is not None and _is_default(kind, v):
                continue
            parts.append(f"{k} = {_struct_value(v)}")
        return f"#{self.name}<" + ", ".join(parts) + ">"


@dataclass(frozen=True)
class ConvDimsAttr(StructAttr):
    """``#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>``.

    Fields are the canonical ``input_batch_dimension`` ... ``output_spatial_dimensions``;
    ``raw`` remembers that the text used the ``raw field = value`` spelling.
    """

    raw: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return f"#{self.name}<{self.body()}>"

    def body(self) -> str:
        """The text between ``<`` and ``>``."""
        compact = None if self.raw else self.compact()
        if compact is not None:
            return compact
        parts = [f"{k} = {_struct_value(v)}" for k, v in self.fields]
        return "raw " + ", ".join(parts)

    def compact(self) -> str | None:
        """``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]``, or None when the numbers
        cannot be written that way (inconsistent or out of range)."""
        g = dict(self.fields)
        groups = (
            ("b", g["input_batch_dimension"], "f", g["input_feature_dimension"],
             g["input_spatial_dimensions"]),
            ("i", g["kernel_input_feature_dimension"], "o", g["kernel_output_feature_dimension"],
             g["kernel_spatial_dimensions"]),
            ("b", g["output_batch_dimension"], "f", g["output_feature_dimension"],
             g["output_spatial_dimensions"]),
        )
        n_spatial = len(groups[0][4])
        texts = []
        for a_name, a, b_name, b, spatial in groups:
            if len(spatial) != n_spatial:
                return None
            rank = n_spatial + 2
            labels: list[str | None] = [None] * rank
            for label, dim in [(a_name, a), (b_name, b)] + [(str(i), d) for i, d in enumerate(spatial)]:
                if not isinstance(dim, int) or not 0 <= dim < rank or labels[dim] is not None:
                    return None
                labels[dim] = label
            texts.append("[" + ", ".join(labels) + "]")  # type: ignore[arg-type]
        return f"{texts[0]}x{texts[1]}->{texts[2]}"


def conv_from_compact(input_: list[str], kernel: list[str], output: list[str]) -> ConvDimsAttr | str:
    """The conv dimension numbers from the three label lists, or an error message."""
    values: dict[str, Any] = {}
    n_spatial = None
    for what, labels, first, second, prefix in (
            ("input", input_, "b", "f", "input"), ("kernel", kernel, "i", "o", "kernel"),
            ("output", output, "b", "f", "output")):
        spatial: dict[int, int] = {}
        seen: dict[str, int] = {}
        for pos, label in enumerate(labels):
            if label in seen:
                return f"duplicate '{label}' in the {what} dimensions"
            seen[label] = pos
            if label.isdigit():
                spatial[int(label)] = pos
            elif label not in (first, second):
                return (f"unexpected '{label}' in the {what} dimensions; expected '{first}', "
                        f"'{second}' or a spatial dimension number")
        for need in (first, second):
            if need not in seen:
                return f"the {what} dimensions lack '{need}'"
        if sorted(spatial) != list(range(len(spatial))):
            return f"the {what} spatial dimensions must be numbered 0..{len(spatial) - 1}"
        if n_spatial is None:
            n_spatial = len(spatial)
        elif n_spatial != len(spatial):
            return (f"the {what} dimensions have {len(spatial)} spatial dimensions, "
                    f"the input has {n_spatial}")
        spatial_dims = tuple(spatial[i] for i in range(len(spatial)))
        if prefix == "kernel":
            values["kernel_input_feature_dimension"] = seen["i"]
            values["kernel_output_feature_dimension"] = seen["o"]
            values["kernel_spatial_dimensions"] = spatial_dims
        else:
            values[f"{prefix}_batch_dimension"] = seen["b"]
            values[f"{prefix}_feature_dimension"] = seen["f"]
            values[f"{prefix}_spatial_dimensions"] = spatial_dims
    return ConvDimsAttr("stablehlo.conv", tuple((k, values[k]) for k in CONV_FIELDS))


def make_struct(schema: StructSchema, values: dict[str, Any]) -> StructAttr:
    """The struct attribute with ``values`` stored in schema order."""
    if schema.style == OMIT_DEFAULTS:
        fields = tuple((n, values.get(n, default_value(k))) for n, k in schema.fields)
        return DimsStructAttr(schema.name, fields)
    fields = tuple((n, values[n]) for n in schema.field_names if n in values)
    return StructAttr(schema.name, fields)
