"""The pretty (custom assembly) forms of ops: one declarative entry per op.

Each entry is an ODS-like format (the language is described in
``hlolab.ir.syntax_engine``) or, for the few irregular ops, a small class of
``hlolab.ir.syntax_custom``. The entries follow StableHLO's
``StablehloOps.td`` / ``ChloOps.td`` / check and interpreter dialects; a pretty
form parses into the same canonical op as the generic form of the op.
"""

from __future__ import annotations

from hlolab.ir.attrs import ArrayAttr, BoolAttr, DictAttr, FloatAttr, IntegerAttr
from hlolab.ir.syntax_custom import ConstantSyntax, ReduceSyntax, WhileSyntax, compact_names, scan_derive
from hlolab.ir.syntax_engine import FormatSyntax, OpSyntax
from hlolab.ir.syntax_sdy import ManualComputationSyntax, ShardingOperandSyntax
from hlolab.types import element_type

__all__ = ["TABLE", "lookup", "compact_names", "OpSyntax"]

TABLE: dict[str, OpSyntax] = {}


def _add(names: str, syntax: OpSyntax) -> None:
    for n in names.split():
        TABLE[n] = syntax


_UNARY = FormatSyntax("$operand attr-dict : type:same")
_BINARY = FormatSyntax("$lhs , $rhs attr-dict : type:same")
_OPERANDS_FN = FormatSyntax("$operands* attr-dict : type:functional")

_add("stablehlo.abs stablehlo.cbrt stablehlo.ceil stablehlo.convert stablehlo.count_leading_zeros "
     "stablehlo.cosine stablehlo.exponential stablehlo.exponential_minus_one stablehlo.floor "
     "stablehlo.imag stablehlo.log stablehlo.log_plus_one stablehlo.logistic stablehlo.not "
     "stablehlo.negate stablehlo.popcnt stablehlo.real stablehlo.round_nearest_afz "
     "stablehlo.round_nearest_even stablehlo.rsqrt stablehlo.sign stablehlo.sine stablehlo.sqrt "
     "stablehlo.tan stablehlo.tanh stablehlo.uniform_quantize stablehlo.uniform_dequantize", _UNARY)
_add("stablehlo.add stablehlo.atan2 stablehlo.divide stablehlo.maximum stablehlo.minimum "
     "stablehlo.multiply stablehlo.power stablehlo.remainder stablehlo.shift_left "
     "stablehlo.shift_right_arithmetic stablehlo.shift_right_logical stablehlo.subtract "
     "stablehlo.and stablehlo.or stablehlo.xor", _BINARY)
_add("stablehlo.is_finite", FormatSyntax("$x attr-dict : type:functional"))
_add("stablehlo.complex", FormatSyntax("$lhs , $rhs attr-dict : type:complex"))
_add("stablehlo.reshape stablehlo.dynamic_reshape stablehlo.bitcast_convert stablehlo.dynamic_update_slice "
     "stablehlo.real_dynamic_slice stablehlo.dynamic_pad stablehlo.compute_reshape_shape "
     "stablehlo.cstr_reshapable", _OPERANDS_FN)
_add("stablehlo.constant", ConstantSyntax())
_add("stablehlo.iota", FormatSyntax("dim = @iota_dimension:i64 attr-dict : type:results"))
_add("stablehlo.dynamic_iota",
     FormatSyntax("$output_shape , dim = @iota_dimension:i64 attr-dict : type:functional"))
_add("stablehlo.create_token stablehlo.replica_id stablehlo.partition_id",
     FormatSyntax("attr-dict : type:results"))
_add("stablehlo.after_all", FormatSyntax("$inputs* attr-dict : type:variadic-same"))
_add("stablehlo.compare", FormatSyntax(
    "@comparison_direction:enum:stablehlo:comparison_direction , $lhs , $rhs "
    "(? , @compare_type:enum:stablehlo:comparison_type ?) attr-dict : type:functional"))
_add("stablehlo.get_tuple_element",
     FormatSyntax("$operand ~ [ @index:i32 ] attr-dict : type:functional"))
_add("stablehlo.tuple", FormatSyntax("$val* attr-dict : type:tuple"))
_add("stablehlo.slice", FormatSyntax("$operand custom:slice-ranges attr-dict : type:functional"))
_add("stablehlo.dynamic_slice", FormatSyntax(
    "$operand , $start_indices*, sizes = @slice_sizes:dims attr-dict : type:functional"))
_add("stablehlo.broadcast_in_dim", FormatSyntax(
    "$operand , dims = @broadcast_dimensions:dims attr-dict : type:functional"))
_add("stablehlo.broadcast", FormatSyntax(
    "$operand , sizes = @broadcast_sizes:dims attr-dict : type:functional"))
_add("stablehlo.dynamic_broadcast_in_dim", FormatSyntax(
    "$operand , $output_dimensions , dims = @broadcast_dimensions:dims attr-dict : type:functional",
    inherent=("known_expanding_dimensions", "known_nonexpanding_dimensions")))
_add("stablehlo.cholesky", FormatSyntax("$a (? , lower = @lower:bool ?) attr-dict : type:same",
                                        defaults={"lower": BoolAttr(False)}))
_add("stablehlo.clamp", FormatSyntax("$min , $operand , $max attr-dict : type:same"))
_add("stablehlo.select", FormatSyntax("$pred , $on_true , $on_false attr-dict : type:select"))
_add("stablehlo.concatenate", FormatSyntax("$inputs*, dim = @dimension:i64 attr-dict : type:functional"))
_add("stablehlo.convolution", FormatSyntax(
    "~ ( $lhs , $rhs ) dim_numbers = custom:conv-dims , window = { custom:window } attr-dict "
    ": type:functional",
    inherent=("feature_group_count", "batch_group_count", "precision_config")))
_add("stablehlo.custom_call", FormatSyntax(
    "custom:call-target ~ ( $inputs* ) attr-dict : type:functional",
    inherent=("backend_config", "operand_layouts", "result_layouts"),
    defaults={"has_side_effect": BoolAttr(False), "api_version": IntegerAttr(1, element_type("i32")),
              "called_computations": ArrayAttr(()), "output_operand_aliases": ArrayAttr(())}))
_add("stablehlo.dot", FormatSyntax("$lhs , $rhs custom:precision attr-dict : type:functional"))
_add("stablehlo.dot_general", FormatSyntax(
    "$lhs , $rhs , custom:dot-dims custom:precision-algorithm attr-dict : type:functional"))
_add("stablehlo.einsum", FormatSyntax(
    "$lhs , $rhs , config = @einsum_config:str attr-dict : type:functional"))
_add("stablehlo.unary_einsum", FormatSyntax(
    "$operand , config = @einsum_config:str attr-dict : type:functional"))
_add("stablehlo.fft", FormatSyntax(
    "$operand , type = @fft_type:enum:stablehlo:fft_type , length = @fft_length:dims attr-dict "
    ": type:functional"))
_add("stablehlo.get_dimension_size", FormatSyntax(
    "$operand , dim = @dimension:i64 attr-dict : type:functional"))
_add("stablehlo.set_dimension_size", FormatSyntax(
    "$operand , $size , dim = @dimension:i64 attr-dict : type:functional"))
_add("stablehlo.reverse", FormatSyntax("$operand , dims = @dimensions:dims attr-dict : type:same"))
_add("stablehlo.pad", FormatSyntax(
    "$operand , $padding_value , low = @edge_padding_low:dims , high = @edge_padding_high:dims , "
    "interior = @interior_padding:dims attr-dict : type:functional"))
_add("stablehlo.transpose", FormatSyntax(
    "$operand , dims = @permutation:dims attr-dict : type:functional"))
_add("stablehlo.optimization_barrier", FormatSyntax("attr-dict custom:barrier"))
_add("stablehlo.rng", FormatSyntax(
    "$a , $b , $shape , distribution = @rng_distribution:enum:stablehlo:rng_distribution attr-dict "
    ": type:functional"))
_add("stablehlo.rng_bit_generator", FormatSyntax(
    "$initial_state , algorithm = @rng_algorithm:enum:stablehlo:rng_algorithm attr-dict "
    ": type:functional"))
_add("stablehlo.reduce_precision", FormatSyntax(
    "$operand , format = custom:exp-mantissa attr-dict : type:same"))
_add("stablehlo.return", FormatSyntax("$results* attr-dict (? : type:operands ?)"))
_add("stablehlo.composite", FormatSyntax(
    "@name:str $inputs* attr-dict : type:functional", inherent=("decomposition",),
    defaults={"composite_attributes": DictAttr(()), "version": IntegerAttr(0, element_type("i32"))}))
_add("stablehlo.while", WhileSyntax())
_add("stablehlo.reduce", ReduceSyntax())

_add("func.return", FormatSyntax("attr-dict (? $operands* : type:operands ?)"))
_add("func.call", FormatSyntax("@callee:symref ~ ( $operands* ) attr-dict : type:functional",
                               inherent=("arg_attrs", "res_attrs", "no_inline")))

_add("check.expect_eq", FormatSyntax("$lhs , $rhs attr-dict : type:all", n_results=0))
_add("check.expect_eq_const", FormatSyntax("$lhs , @value:attr attr-dict type:from-value", n_results=0))
_TOLERANCE = {"tolerance": FloatAttr(1e-4, element_type("f64"))}
_add("check.expect_almost_eq_const", FormatSyntax(
    "$lhs , @value:attr (? , tolerance = @tolerance:f64 ?) attr-dict type:from-value", n_results=0,
    defaults=_TOLERANCE))
_add("check.expect_almost_eq", FormatSyntax(
    "$lhs , $rhs (? , tolerance = @tolerance:f64 ?) attr-dict : type:all", n_results=0,
    defaults=_TOLERANCE))
_add("check.expect_close", FormatSyntax(
    "$actual , $expected , max_ulp_difference = @max_ulp_difference:ui64 "
    "(? , min_ulp_difference = @min_ulp_difference:ui64 ?) : attr-dict type:operands", n_results=0,
    defaults={"min_ulp_difference": IntegerAttr(0, element_type("ui64"))}))
_add("check.expect_serialized_eq", FormatSyntax(
    "$expected , probe_id = @probe_id:str (? , iter = @iteration:ui32 ?) attr-dict : type:all",
    n_results=0, defaults={"iteration": IntegerAttr(0, element_type("ui32"))}))
# interpreter.print had a result in older StableHLO and has none now: results as written
_add("interpreter.print", FormatSyntax("$operand attr-dict : type:all"))
_add("interpreter.probe", FormatSyntax(
    "$operand , probe_id = @probe_id:str attr-dict : type:all", n_results=1))

_CHLO_BROADCAST = FormatSyntax("$lhs , $rhs attr-dict : type:functional",
                               inherent=("broadcast_dimensions",))
_add(" ".join("chlo.broadcast_" + n for n in (
    "add atan2 divide maximum minimum multiply next_after polygamma power remainder shift_left "
    "shift_right_arithmetic shift_right_logical subtract zeta and or xor complex").split()), _CHLO_BROADCAST)
_add("chlo.broadcast_compare", FormatSyntax(  # the broadcast ops' format; the direction in attr-dict
    "$lhs , $rhs attr-dict : type:functional",
    inherent=("broadcast_dimensions", "comparison_direction", "compare_type")))
_add("chlo.next_after chlo.polygamma chlo.zeta chlo.mulhi",
     FormatSyntax("$lhs , $rhs attr-dict : type:arrow"))
_add(" ".join("chlo." + n for n in (
    "asin_acos_kernel acos acosh asin asinh atan atanh bessel_i1e conj cosh sinh tan digamma erf "
    "erf_inv erfc is_inf is_neg_inf is_pos_inf lgamma square").split()),
     FormatSyntax("$operand attr-dict : type:arrow"))
_add("chlo.constant", ConstantSyntax())
_add("chlo.broadcast_select", FormatSyntax("$pred , $on_true , $on_false attr-dict : type:functional"))
_add("chlo.top_k", FormatSyntax("~ ( $operand , k = @k:i64 ) attr-dict : type:arrow"))
_add("chlo.scan", FormatSyntax(
    "~ custom:scan-operands dimension = @dimension:i64 attr-dict-with-keyword region : type:functional",
    inherent=("is_reverse", "is_associative"), derive=scan_derive, derived=("resultSegmentSizes",)))


# Shardy (jax's sharded programs)
_add("sdy.manual_computation", ManualComputationSyntax())
_add("sdy.sharding_constraint sdy.reshard", ShardingOperandSyntax())
_add("sdy.return", FormatSyntax("$results* attr-dict (? : type:operands ?)"))


def lookup(name: str) -> OpSyntax | None:
    """The pretty syntax of op ``name``, if it has one."""
    return TABLE.get(name)
