"""The parser: types, attributes, modules and functions, the generic form of
any op, the pretty form of every op in the syntax table (each compared with
its generic spelling), and malformed inputs (exact message and position)."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import ParseError
from hlolab.ir.attrs import (
    ArrayAttr,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    DictAttr,
    EnumAttr,
    FloatAttr,
    IntegerAttr,
    OpaqueAttr,
    StringAttr,
    StructAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
)
from hlolab.ir.module import Module, Op
from hlolab.ir.parser import INDEX, parse_attribute, parse_file, parse_module, parse_type, split_source
from hlolab.ir.structs import ConvDimsAttr, DimsStructAttr
from hlolab.types import (
    ALL_ELEMENT_TYPE_NAMES,
    BoundsEncoding,
    FunctionType,
    OpaqueType,
    QuantizedElementType,
    TensorType,
    TokenType,
    TupleType,
    element_type,
)

F32, I64, I32 = element_type("f32"), element_type("i64"), element_type("i32")


# --------------------------------------------------------------------------
# types
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_ELEMENT_TYPE_NAMES + ("si8", "si32", "si4"))
def test_every_element_type_spelling(name):
    t = parse_type(f"tensor<2x?x3x{name}>")
    assert t == TensorType((2, None, 3), element_type(name))
    assert str(t) == f"tensor<2x?x3x{name}>"
    assert parse_type(name) == element_type(name)


def test_tensor_shapes_encodings_and_special_types():
    assert parse_type("tensor<f32>") == TensorType((), F32)
    assert parse_type("tensor<0x2xi8>").shape == (0, 2)
    t = parse_type("tensor<?xf32, #stablehlo.bounds<4>>")
    assert t.shape == (None,) and t.encoding == BoundsEncoding((4,))
    assert str(t) == "tensor<?xf32, #stablehlo.bounds<4>>"
    ext = parse_type("tensor<?x3xf32, #stablehlo.type_extensions<bounds = [4, ?]>>").encoding
    assert ext == StructAttr("stablehlo.type_extensions", (("bounds", (4, "?")),))
    assert str(ext) == "#stablehlo.type_extensions<bounds = [4, ?]>"
    assert parse_type("!stablehlo.token") == TokenType()
    assert parse_type("tuple<>") == TupleType(())
    nested = parse_type("tuple<tensor<f32>, tuple<tensor<2xi32>, !stablehlo.token>>")
    assert nested == TupleType((TensorType((), F32), TupleType((TensorType((2,), I32), TokenType()))))
    assert parse_type("tensor<2xindex>").element == INDEX
    assert parse_type("!foo.bar<1, \"x>\">") == OpaqueType('!foo.bar<1, "x>">')
    assert parse_type("complex<f64>") == element_type("complex<f64>")


def test_function_types():
    assert parse_type("(tensor<f32>, tensor<i32>) -> tensor<i1>") == FunctionType(
        (TensorType((), F32), TensorType((), I32)), (TensorType((), element_type("i1")),))
    assert parse_type("() -> ()") == FunctionType((), ())
    assert parse_type("(f32) -> (i32, i64)") == FunctionType((F32,), (I32, I64))
    assert parse_type("(f32) -> ((i32) -> i64)") == FunctionType((F32,), (FunctionType((I32,), (I64,)),))


def test_quantized_types_keep_their_scale_texts():
    q = parse_type("!quant.uniform<i8:f32, 0.1:-3>")
    assert q == QuantizedElementType(element_type("i8"), F32, (0.1,), (-3,))
    assert str(q) == "!quant.uniform<i8:f32, 0.1:-3>"
    axis = parse_type("tensor<2x!quant.uniform<i8<-127:127>:f32:1, {0.1:-3, 2.5e-1:4}>>").element
    assert (axis.axis, axis.storage_min, axis.storage_max) == (1, -127, 127)
    assert axis.scales == (0.1, 0.25) and axis.zero_points == (-3, 4)
    assert str(axis) == "!quant.uniform<i8<-127:127>:f32:1, {0.1:-3,2.5e-1:4}>"
    assert parse_type("!quant.uniform<ui8:f32, 34.0>").zero_points == (0,)


def test_tf32_is_an_unsupported_element_type_at_its_position():
    with pytest.raises(ParseError) as e:
        parse_type("tensor<4xtf32>")
    assert e.value.message == "element type tf32 is not supported: ml_dtypes has no TensorFloat32 dtype"
    assert e.value.loc.col == 10


# --------------------------------------------------------------------------
# attributes
# --------------------------------------------------------------------------
def test_scalar_attributes():
    assert parse_attribute("5") == IntegerAttr(5)
    assert parse_attribute("-3 : i64") == IntegerAttr(-3, I64)
    assert parse_attribute("0x1F : i32") == IntegerAttr(31, I32)
    assert parse_attribute("255 : i8") == IntegerAttr(-1, element_type("i8"))  # a signless bit pattern
    assert parse_attribute("76 : ui8") == IntegerAttr(76, element_type("ui8"))
    f = parse_attribute("-1.5e-3 : f32")
    assert f == FloatAttr(-1.5e-3, F32) and str(f) == "-1.5e-3 : f32"
    nan = parse_attribute("0x7FC00000 : f32")
    assert np.isnan(nan.value) and str(nan) == "0x7FC00000 : f32"
    assert parse_attribute("0x3C00 : f16").value == 1.0
    assert parse_attribute("1.0") == FloatAttr(1.0)
    assert parse_attribute("true") == BoolAttr(True) and parse_attribute("false") == BoolAttr(False)
    assert parse_attribute('"a\\"b\\n"') == StringAttr('a"b\n')
    assert parse_attribute("unit") == UnitAttr()
    assert parse_attribute("@main") == SymbolRefAttr(("main",))
    assert parse_attribute('@outer::@"in ner"') == SymbolRefAttr(("outer", "in ner"))


def test_collections_and_type_attributes():
    a = parse_attribute('[1, "x", [], {k = 2 : i32, flag, "q w" = unit}]')
    assert a == ArrayAttr((IntegerAttr(1), StringAttr("x"), ArrayAttr(()),
                           DictAttr((("k", IntegerAttr(2, I32)), ("flag", UnitAttr()), ("q w", UnitAttr())))))
    assert parse_attribute("tensor<2xf32>") == TypeAttr(TensorType((2,), F32))
    assert parse_attribute("(f32) -> i1") == TypeAttr(FunctionType((F32,), (element_type("i1"),)))
    assert parse_attribute("!stablehlo.token") == TypeAttr(TokenType())


def test_dense_arrays():
    assert parse_attribute("array<i64: 1, -2>") == DenseArrayAttr("i64", (1, -2))
    assert parse_attribute("array<i64>") == DenseArrayAttr("i64", ())
    assert parse_attribute("array<i1: true, false>") == DenseArrayAttr("i1", (True, False))
    assert parse_attribute("array<f32: 1.5, -2>") == DenseArrayAttr("f32", (1.5, -2.0))
    assert str(parse_attribute("array<i1: true>")) == "array<i1: true>"


def test_dense_elements_attribute():
    d = parse_attribute("dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>")
    assert isinstance(d, DenseElementsAttr) and d.type == TensorType((2, 2), I32)
    assert d.array.tolist() == [[1, 2], [3, 4]] and d.array.dtype == np.int32
    commented = parse_attribute("dense<[[0.5, 1.0], // row 0 (a > b)\n [2.0, 3.0]]> : tensor<2x2xf32>")
    assert commented.array.tolist() == [[0.5, 1.0], [2.0, 3.0]]
    args = parse_attribute("[dense<1> : tensor<2xi32>, dense<2> : tensor<2xi32>]")
    assert [x.array.tolist() for x in args.items] == [[1, 1], [2, 2]]


def test_enum_and_opaque_attributes():
    assert parse_attribute("#stablehlo<comparison_direction GT>") == EnumAttr(
        "stablehlo", "comparison_direction", "GT")
    for text in ("#stablehlo<precision DEFAULT>", "#stablehlo<fft_type FFT>", "#chlo<precision HIGH>",
                 "#stablehlo<rng_distribution UNIFORM>", "#stablehlo<transpose ADJOINT>",
                 "#stablehlo<custom_call_api_version API_VERSION_ORIGINAL>"):
        a = parse_attribute(text)
        assert isinstance(a, EnumAttr) and str(a) == text
    odd = '#foo.bar<"x>" -> [1, <2>]>'
    assert parse_attribute(odd) == OpaqueAttr(odd)
    assert parse_attribute("#mydialect<{a = 1}>") == OpaqueAttr("#mydialect<{a = 1}>")


STRUCTS = [
    "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
    "index_vector_dim = 1>",
    "#stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [0, 1], "
    "scatter_dims_to_operand_dims = [0, 1]>",
    "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
    "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>",
    "#stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, "
    "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, "
    "allow_imprecise_accumulation = false>",
    "#stablehlo.channel_handle<handle = 1, type = 0>",
    "#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices "
    "= []>",
    "#stablehlo.result_accuracy<atol = 0.000000e+00, rtol = 0.000000e+00, ulps = 0, "
    "mode = #stablehlo.result_accuracy_mode<DEFAULT>>",
    "#chlo.ragged_dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
    "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>",
    "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>",
    "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = "
    "[1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, "
    "kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, "
    "output_spatial_dimensions = [1, 2]>",
]


@pytest.mark.parametrize("text", STRUCTS)
def test_struct_attributes_print_back(text):
    a = parse_attribute(text)
    assert isinstance(a, StructAttr)
    assert str(a) == text
    assert parse_attribute(str(a)) == a


def test_struct_fields_are_canonical_whatever_the_spelling():
    g = parse_attribute("#stablehlo.gather<start_index_map = [0], offset_dims = [1], operand_batching_dims "
                        "= []>")
    assert isinstance(g, DimsStructAttr)
    # every field is there for the ops to read; defaults print as MLIR prints them (left out)
    assert dict(g.fields) == {"offset_dims": (1,), "collapsed_slice_dims": (), "operand_batching_dims": (),
                              "start_indices_batching_dims": (), "start_index_map": (0,),
                              "index_vector_dim": 0}
    assert str(g) == "#stablehlo.gather<offset_dims = [1], start_index_map = [0]>"
    assert g == parse_attribute("#stablehlo.gather<offset_dims = [1], start_index_map = [0], "
                                "index_vector_dim = 0>")
    alg = parse_attribute(STRUCTS[3])
    assert alg.get("lhs_precision_type") == OpaqueType("tf32") and alg.get("accumulation_type") == F32
    assert alg.get("allow_imprecise_accumulation") is False


def test_conv_dimension_numbers_compact_and_raw_are_the_same_numbers():
    compact = parse_attribute("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>")
    raw = parse_attribute(STRUCTS[-1])
    assert isinstance(compact, ConvDimsAttr) and compact == raw
    assert compact.get("input_feature_dimension") == 3 and compact.get("kernel_spatial_dimensions") == (0, 1)
    nchw = parse_attribute("#stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>")
    assert nchw.get("input_spatial_dimensions") == (2, 3) and nchw.get("kernel_output_feature_dimension") == 0


# --------------------------------------------------------------------------
# modules, functions, regions
# --------------------------------------------------------------------------
def test_named_module_with_attributes_and_loc():
    m = parse_module('module @jit_f attributes {mhlo.num_replicas = 1 : i32} {\n'
                     '  func.func public @main(%arg0: tensor<f32> {jax.arg_info = "x"}) -> '
                     '(tensor<f32> {jax.result_info = "r"}) {\n'
                     '    return %arg0 : tensor<f32>\n  }\n} loc(#loc)\n#loc = loc(unknown)\n')
    assert not m.implicit and m.name == "jit_f"
    assert m.attributes == {"mhlo.num_replicas": IntegerAttr(1, I32)}
    assert m.mlir_loc == "loc(#loc)" and m.loc_aliases == {"#loc": "loc(unknown)"}
    f = m.funcs[0]
    assert (f.name, f.visibility) == ("main", "public")
    assert f.arg_attrs == [{"jax.arg_info": StringAttr("x")}]
    assert f.result_attrs == [{"jax.result_info": StringAttr("r")}]
    ret = f.body.blocks[0].ops[0]
    assert ret.name == "func.return" and ret.operands == f.args  # `return` is func.return
    assert f.body.blocks[0].args is not None and f.args[0] is f.body.blocks[0].args[0]


def test_bare_functions_make_an_implicit_module():
    m = parse_module("func.func @a() {\n  func.return\n}\nfunc.func private @b(tensor<f32>) -> tensor<f32>\n"
                     "func.func @c(%x: tensor<f32>) -> tensor<f32> attributes {foo} {\n"
                     "  %0 = call @b(%x) : (tensor<f32>) -> tensor<f32>\n  func.return %0 : tensor<f32>\n}")
    assert m.implicit and [f.name for f in m.funcs] == ["a", "b", "c"]
    b = m.funcs[1]
    assert b.body is None and b.visibility == "private" and [a.type for a in b.args] == [TensorType((), F32)]
    c = m.funcs[2]
    assert c.attributes == {"foo": UnitAttr()} and c.result_types == [TensorType((), F32)]
    call = c.body.blocks[0].ops[0]
    assert call.name == "func.call" and call.attributes == {"callee": SymbolRefAttr(("b",))}


def test_generic_func_and_module_forms():
    generic = ('"builtin.module"() <{sym_name = "m"}> ({\n'
               '  "func.func"() <{function_type = (tensor<f32>) -> tensor<f32>, sym_name = "id", '
               'arg_attrs = [{a = 1 : i32}]}> ({\n'
               '  ^bb0(%arg0: tensor<f32>):\n    "func.return"(%arg0) : (tensor<f32>) -> ()\n  }) : () '
               '-> ()\n'
               '}) : () -> ()')
    pretty = ("module @m {\n  func.func @id(%arg0: tensor<f32> {a = 1 : i32}) -> tensor<f32> {\n"
              "    func.return %arg0 : tensor<f32>\n  }\n}")
    assert parse_module(generic) == parse_module(pretty)


def test_empty_and_comment_only_chunks():
    for text in ("", "// only a comment\n\n", "#loc = loc(unknown)"):
        m = parse_module(text)
        assert m == Module(implicit=True) and m.implicit and not m.funcs


def test_split_source_like_mlir():
    text = "a\n// -----\nb\nc\n// // ----- inside a comment\nd\n// -----"
    chunks = split_source(text)
    assert chunks == [(1, "a\n"), (2, "\nb\nc\n// "), (5, " inside a comment\nd\n"), (7, "")]
    lines = text.splitlines()
    for first, chunk in chunks:  # each chunk continues the line of the marker before it
        assert lines[first - 1].endswith(chunk.split("\n")[0])


def test_text_after_a_marker_on_its_line_belongs_to_the_next_chunk():
    (_, a), (line, b) = split_source("func.func @a() {\n  func.return\n}\n// ----- x\n")
    assert parse_module(a).funcs[0].name == "a"
    with pytest.raises(ParseError) as e:
        parse_module(b, "s.mlir", line)
    assert (e.value.loc.line, e.value.message) == (4, "expected 'func.func' or 'module' at the top level, "
                                                      "got 'x'")


def test_errors_report_the_line_in_the_original_file(tmp_path):
    path = tmp_path / "x.mlir"
    path.write_text("func.func @a() {\n  func.return\n}\n// -----\nfunc.func @b() {\n  func.return %q : "
                    "tensor<f32>\n}\n")
    first_line, chunk = split_source(path.read_text())[0]
    assert parse_module(chunk, str(path), first_line).funcs[0].name == "a"
    with pytest.raises(ParseError) as e:
        parse_file(str(path), split=True)
    assert (e.value.loc.file, e.value.loc.line, e.value.loc.col) == (str(path), 6, 15)
    assert e.value.message == "use of undefined value %q"


def test_results_groups_and_uses():
    m = parse_module('func.func @f(%a: tensor<f32>) {\n'
                     '  %r:2, %s = "x.y"(%a) : (tensor<f32>) -> (tensor<f32>, tensor<i32>, tensor<i1>)\n'
                     '  "x.use"(%r#1, %s, %s#0, %r#0) : (tensor<i32>, tensor<i1>, tensor<i1>, tensor<f32>) '
                     '-> ()\n'
                     '  func.return\n}')
    op, use = m.funcs[0].body.blocks[0].ops[:2]
    assert [v.name for v in op.results] == ["%r#0", "%r#1", "%s"]
    assert op.result_groups == [("%r", 2), ("%s", 1)]
    assert use.operands == [op.results[1], op.results[2], op.results[2], op.results[0]]


def test_generic_ops_of_any_shape():
    m = parse_module(
        'func.func @f(%a: tensor<f32>) {\n'
        '  "x.nothing"() : () -> ()\n'
        '  %0 = "unknown.op"(%a, %a) <{p = 1 : i64}> ({\n'
        '  ^bb0(%b: tensor<f32> loc("b"), %c: tensor<f32>):\n'
        '    "x.yield"(%b) : (tensor<f32>) -> ()\n'
        '  }, {\n'
        '  }, {\n'
        '    "x.yield"(%a) : (tensor<f32>) -> ()\n'
        '  ^bb1:\n'
        '    "x.yield"(%a) : (tensor<f32>) -> ()\n'
        '  }) {q = "s"} : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("here")\n'
        '  func.return\n}')
    nothing, op = m.funcs[0].body.blocks[0].ops[:2]
    assert nothing.operands == [] and nothing.results == []
    assert op.name == "unknown.op" and op.prop_names == {"p"}
    assert op.attributes == {"p": IntegerAttr(1, I64), "q": StringAttr("s")}
    assert op.mlir_loc == 'loc("here")' and op.loc.line == 3
    r0, r1, r2 = op.regions
    assert [a.name for a in r0.blocks[0].args] == ["%b", "%c"] and r0.blocks[0].arg_locs == ['loc("b")', None]
    assert r1.blocks == [] and len(r2.blocks) == 2 and r2.blocks[1].label == "^bb1"
    assert r2.blocks[0].ops[0].operands == [m.funcs[0].args[0]]  # regions see values from outside


def test_sibling_regions_reuse_names_but_nested_ones_cannot_shadow():
    ok = ('func.func @f(%a: tensor<f32>) {\n'
          '  "x.two"() ({\n    %v = "x.c"() : () -> tensor<f32>\n  }, {\n'
          '    %v = "x.c"() : () -> tensor<f32>\n  }) : () -> ()\n  func.return\n}')
    parse_module(ok)
    with pytest.raises(ParseError, match="redefinition of SSA value %a"):
        parse_module('func.func @f(%a: tensor<f32>) {\n  "x.r"() ({\n    %a = "x.c"() : () -> tensor<f32>\n'
                     '  }) : () -> ()\n  func.return\n}')


def test_names_are_scoped_per_function():
    m = parse_module("func.func @a(%x: tensor<f32>) {\n  func.return\n}\n"
                     "func.func @b(%x: tensor<i32>) {\n  func.return\n}")
    assert [f.args[0].type for f in m.funcs] == [TensorType((), F32), TensorType((), I32)]


def test_debug_locations_and_aliases():
    m = parse_module('#loc1 = loc("f.py":1:2)\n'
                     'func.func @f(%a: tensor<f32> loc("a")) -> tensor<f32> {\n'
                     '  %0 = stablehlo.abs %a : tensor<f32> loc(fused["x", callsite(#loc1 at #loc2)])\n'
                     '  func.return %0 : tensor<f32> loc(#loc1)\n'
                     '} loc(#loc2)\n#loc2 = loc("g"(#loc1))')
    f = m.funcs[0]
    assert f.mlir_loc == "loc(#loc2)" and f.body.blocks[0].arg_locs == ['loc("a")']
    assert f.body.blocks[0].ops[0].mlir_loc == 'loc(fused["x", callsite(#loc1 at #loc2)])'
    assert m.loc_aliases == {"#loc1": 'loc("f.py":1:2)', "#loc2": 'loc("g"(#loc1))'}


# --------------------------------------------------------------------------
# pretty forms: each parses into the same op as its generic spelling
# --------------------------------------------------------------------------
ARGS = ("%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %p: tensor<2x3xi1>, %b: tensor<i1>, %s: tensor<f32>, "
        "%i: tensor<i64>, %j: tensor<i64>, %c: tensor<2x3xcomplex<f32>>, %t: !stablehlo.token, "
        "%k: tensor<4xi32>, %u: tensor<2xui64>, %v: tensor<1x4x4x1xf32>, %w: tensor<3x3x1x1xf32>, "
        "%tu: tuple<tensor<f32>, tensor<i64>>, %q: tensor<2x3x!quant.uniform<i8:f32, 0.1:-3>>")
T = "tensor<2x3xf32>"
FT2 = f"({T}, {T}) -> {T}"

PAIRS = {
    "add": (f"%r = stablehlo.add %x, %y : {T}", f'%r = "stablehlo.add"(%x, %y) : {FT2}'),
    "add_functional": (f"%r = stablehlo.add %x, %y : {FT2}", f'%r = "stablehlo.add"(%x, %y) : {FT2}'),
    "abs": (f"%r = stablehlo.abs %x : {T}", f'%r = "stablehlo.abs"(%x) : ({T}) -> {T}'),
    "convert": (f"%r = stablehlo.convert %x : ({T}) -> tensor<2x3xi32>",
                f'%r = "stablehlo.convert"(%x) : ({T}) -> tensor<2x3xi32>'),
    "constant": ("%r = stablehlo.constant dense<1.5> : tensor<2xf32>",
                 '%r = "stablehlo.constant"() <{value = dense<1.5> : tensor<2xf32>}> : () -> tensor<2xf32>'),
    "constant_quant": (
        "%r = stablehlo.constant() <{value = dense<1> : tensor<2xi8>}> : () -> "
        "tensor<2x!quant.uniform<i8:f32, 0.1>>",
        '%r = "stablehlo.constant"() <{value = dense<1> : tensor<2xi8>}> : () -> '
        'tensor<2x!quant.uniform<i8:f32, 0.1>>'),
    "compare": (f"%r = stablehlo.compare GT, %x, %y, FLOAT : ({T}, {T}) -> tensor<2x3xi1>",
                '%r = "stablehlo.compare"(%x, %y) <{compare_type = #stablehlo<comparison_type FLOAT>, '
                f'comparison_direction = #stablehlo<comparison_direction GT>}}> : ({T}, {T}) -> '
                'tensor<2x3xi1>'),
    "compare_no_type": (f"%r = stablehlo.compare  LT, %x, %y : ({T}, {T}) -> tensor<2x3xi1>",
                        '%r = "stablehlo.compare"(%x, %y) <{comparison_direction = '
                        f'#stablehlo<comparison_direction LT>}}> : ({T}, {T}) -> tensor<2x3xi1>'),
    "iota": (f"%r = stablehlo.iota dim = 1 : {T}",
             f'%r = "stablehlo.iota"() <{{iota_dimension = 1 : i64}}> : () -> {T}'),
    "dynamic_iota": ("%r = stablehlo.dynamic_iota %k, dim = 0 : (tensor<4xi32>) -> tensor<?x?x?x?xf32>",
                     '%r = "stablehlo.dynamic_iota"(%k) <{iota_dimension = 0 : i64}> : (tensor<4xi32>) -> '
                     'tensor<?x?x?x?xf32>'),
    "broadcast_in_dim": (f"%r = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> {T}",
                         '%r = "stablehlo.broadcast_in_dim"(%s) <{broadcast_dimensions = array<i64>}> : '
                         f'(tensor<f32>) -> {T}'),
    "transpose": (f"%r = stablehlo.transpose %x, dims = [1, 0] : ({T}) -> tensor<3x2xf32>",
                  f'%r = "stablehlo.transpose"(%x) <{{permutation = array<i64: 1, 0>}}> : ({T}) -> '
                  'tensor<3x2xf32>'),
    "reshape": (f"%r = stablehlo.reshape %x : ({T}) -> tensor<6xf32>",
                f'%r = "stablehlo.reshape"(%x) : ({T}) -> tensor<6xf32>'),
    "slice": (f"%r = stablehlo.slice %x [0:2, 1:3:2] : ({T}) -> tensor<2x1xf32>",
              '%r = "stablehlo.slice"(%x) <{limit_indices = array<i64: 2, 3>, start_indices = array<i64: '
              '0, 1>, '
              f'strides = array<i64: 1, 2>}}> : ({T}) -> tensor<2x1xf32>'),
    "concatenate": (f"%r = stablehlo.concatenate %x, %y, dim = 0 : ({T}, {T}) -> tensor<4x3xf32>",
                    f'%r = "stablehlo.concatenate"(%x, %y) <{{dimension = 0 : i64}}> : ({T}, {T}) -> '
                    'tensor<4x3xf32>'),
    "pad": (f"%r = stablehlo.pad %x, %s, low = [0, 1], high = [1, 0], interior = [0, 2] : ({T}, tensor<f32>) "
            "-> tensor<3x8xf32>",
            '%r = "stablehlo.pad"(%x, %s) <{edge_padding_high = array<i64: 1, 0>, edge_padding_low = '
            f'array<i64: 0, 1>, interior_padding = array<i64: 0, 2>}}> : ({T}, tensor<f32>) -> '
            'tensor<3x8xf32>'),
    "reverse": (f"%r = stablehlo.reverse %x, dims = [1] : {T}",
                f'%r = "stablehlo.reverse"(%x) <{{dimensions = array<i64: 1>}}> : ({T}) -> {T}'),
    "dynamic_slice": (f"%r = stablehlo.dynamic_slice %x, %i, %j, sizes = [1, 2] : ({T}, tensor<i64>, "
                      "tensor<i64>) -> tensor<1x2xf32>",
                      '%r = "stablehlo.dynamic_slice"(%x, %i, %j) <{slice_sizes = array<i64: 1, 2>}> : '
                      f'({T}, tensor<i64>, tensor<i64>) -> tensor<1x2xf32>'),
    "dynamic_update_slice": (f"%r = stablehlo.dynamic_update_slice %x, %y, %i, %j : ({T}, {T}, tensor<i64>, "
                             f"tensor<i64>) -> {T}",
                             f'%r = "stablehlo.dynamic_update_slice"(%x, %y, %i, %j) : ({T}, {T}, '
                             'tensor<i64>, '
                             f'tensor<i64>) -> {T}'),
    "get_tuple_element": ("%r = stablehlo.get_tuple_element %tu[1] : (tuple<tensor<f32>, tensor<i64>>) -> "
                          "tensor<i64>",
                          '%r = "stablehlo.get_tuple_element"(%tu) <{index = 1 : i32}> : '
                          "(tuple<tensor<f32>, tensor<i64>>) -> tensor<i64>"),
    "tuple": ("%r = stablehlo.tuple %s, %i : tuple<tensor<f32>, tensor<i64>>",
              '%r = "stablehlo.tuple"(%s, %i) : (tensor<f32>, tensor<i64>) -> tuple<tensor<f32>, '
              'tensor<i64>>'),
    "select": (f"%r = stablehlo.select %p, %x, %y : tensor<2x3xi1>, {T}",
               f'%r = "stablehlo.select"(%p, %x, %y) : (tensor<2x3xi1>, {T}, {T}) -> {T}'),
    "select_scalar_pred": (f"%r = stablehlo.select %b, %x, %y : (tensor<i1>, {T}, {T}) -> {T}",
                           f'%r = "stablehlo.select"(%b, %x, %y) : (tensor<i1>, {T}, {T}) -> {T}'),
    "clamp": (f"%r = stablehlo.clamp %s, %x, %s : (tensor<f32>, {T}, tensor<f32>) -> {T}",
              f'%r = "stablehlo.clamp"(%s, %x, %s) : (tensor<f32>, {T}, tensor<f32>) -> {T}'),
    "dot_general": (
        f"%r = stablehlo.dot_general %x, %y, contracting_dims = [1] x [1], precision = [DEFAULT, HIGHEST] : "
        f"({T}, {T}) -> tensor<2x2xf32>",
        '%r = "stablehlo.dot_general"(%x, %y) <{dot_dimension_numbers = '
        '#stablehlo.dot<lhs_contracting_dimensions '
        "= [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, "
        f"#stablehlo<precision HIGHEST>]}}> : ({T}, {T}) -> tensor<2x2xf32>"),
    "dot_general_algorithm": (
        f"%r = stablehlo.dot_general %x, %y, batching_dims = [0] x [0], contracting_dims = [1] x [1], "
        "algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, "
        "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, "
        f"allow_imprecise_accumulation = false> : ({T}, {T}) -> tensor<2xf32>",
        '%r = "stablehlo.dot_general"(%x, %y) <{algorithm = #stablehlo.dot_algorithm<lhs_precision_type = '
        'tf32, '
        "rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count "
        "= 1, "
        "num_primitive_operations = 1, allow_imprecise_accumulation = false>, dot_dimension_numbers = "
        "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
        f"lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}}> : ({T}, {T}) -> "
        "tensor<2xf32>"),
    "dot": (f"%r = stablehlo.dot %x, %y, precision = [HIGH, HIGH] : ({T}, {T}) -> tensor<2x2xf32>",
            '%r = "stablehlo.dot"(%x, %y) <{precision_config = [#stablehlo<precision HIGH>, '
            f'#stablehlo<precision HIGH>]}}> : ({T}, {T}) -> tensor<2x2xf32>'),
    "convolution": (
        "%r = stablehlo.convolution(%v, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = "
        "{stride = [4, 4], pad = [[0, 0], [1, 1]], lhs_dilate = [2, 2], rhs_dilate = [1, 1], reverse = "
        "[0, 1]} "
        "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, "
        "tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>",
        '%r = "stablehlo.convolution"(%v, %w) <{batch_group_count = 1 : i64, dimension_numbers = '
        "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, "
        "lhs_dilation "
        "= array<i64: 2, 2>, padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>, rhs_dilation = "
        "array<i64: 1, "
        "1>, window_reversal = array<i1: false, true>, window_strides = array<i64: 4, 4>}> : "
        "(tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>"),
    "reduce_compact": (
        f"%r = stablehlo.reduce(%x init: %s) applies stablehlo.add across dimensions = [1] : ({T}, "
        "tensor<f32>) "
        "-> tensor<2xf32>",
        '%r = "stablehlo.reduce"(%x, %s) <{dimensions = array<i64: 1>}> ({\n'
        "  ^bb0(%r.lhs: tensor<f32>, %r.rhs: tensor<f32>):\n"
        '    %r.out = "stablehlo.add"(%r.lhs, %r.rhs) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
        '    "stablehlo.return"(%r.out) : (tensor<f32>) -> ()\n'
        f"  }}) : ({T}, tensor<f32>) -> tensor<2xf32>"),
    "reduce_reducer": (
        f"%r:2 = stablehlo.reduce(%x init: %s), (%y init: %s) across dimensions = [0, 1] : ({T}, {T}, "
        "tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)\n"
        "   reducer(%a0: tensor<f32>, %b0: tensor<f32>) (%a1: tensor<f32>, %b1: tensor<f32>) {\n"
        "    %m = stablehlo.maximum %a0, %b0 : tensor<f32>\n"
        "    stablehlo.return %m, %a1 : tensor<f32>, tensor<f32>\n  }",
        f'%r:2 = "stablehlo.reduce"(%x, %y, %s, %s) <{{dimensions = array<i64: 0, 1>}}> ({{\n'
        "  ^bb0(%a0: tensor<f32>, %a1: tensor<f32>, %b0: tensor<f32>, %b1: tensor<f32>):\n"
        '    %m = "stablehlo.maximum"(%a0, %b0) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
        '    "stablehlo.return"(%m, %a1) : (tensor<f32>, tensor<f32>) -> ()\n'
        f"  }}) : ({T}, {T}, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)"),
    "while": (
        "%r:2 = stablehlo.while(%it = %i, %acc = %s) : tensor<i64>, tensor<f32>\n"
        "  cond {\n    %cnd = stablehlo.compare LT, %it, %j : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
        "    stablehlo.return %cnd : tensor<i1>\n  } do {\n    stablehlo.return %it, %acc : tensor<i64>, "
        "tensor<f32>\n  }",
        '%r:2 = "stablehlo.while"(%i, %s) ({\n  ^bb0(%it: tensor<i64>, %acc: tensor<f32>):\n'
        '    %cnd = "stablehlo.compare"(%it, %j) <{comparison_direction = #stablehlo<comparison_direction '
        'LT>}> : '
        "(tensor<i64>, tensor<i64>) -> tensor<i1>\n"
        '    "stablehlo.return"(%cnd) : (tensor<i1>) -> ()\n  }, {\n  ^bb0(%it: tensor<i64>, %acc: '
        'tensor<f32>):\n'
        '    "stablehlo.return"(%it, %acc) : (tensor<i64>, tensor<f32>) -> ()\n'
        "  }) : (tensor<i64>, tensor<f32>) -> (tensor<i64>, tensor<f32>)"),
    "fft": ("%r = stablehlo.fft %c, type = FFT, length = [3] : (tensor<2x3xcomplex<f32>>) -> "
            "tensor<2x3xcomplex<f32>>",
            '%r = "stablehlo.fft"(%c) <{fft_length = array<i64: 3>, fft_type = #stablehlo<fft_type FFT>}> : '
            "(tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>"),
    "reduce_precision": (f"%r = stablehlo.reduce_precision %x, format = e5m10 : {T}",
                         '%r = "stablehlo.reduce_precision"(%x) <{exponent_bits = 5 : i32, mantissa_bits = '
                         '10 : '
                         f'i32}}> : ({T}) -> {T}'),
    "custom_call": (f'%r = stablehlo.custom_call @foo(%x) {{backend_config = "cfg", has_side_effect = '
                    'true} : '
                    f"({T}) -> {T}",
                    '%r = "stablehlo.custom_call"(%x) <{backend_config = "cfg", call_target_name = "foo", '
                    f"has_side_effect = true}}> : ({T}) -> {T}"),
    "custom_call_defaults": (
        f"%r = stablehlo.custom_call @foo() : () -> {T}",
        '%r = "stablehlo.custom_call"() <{api_version = 1 : i32, call_target_name = "foo", '
        'called_computations '
        f"= [], has_side_effect = false, output_operand_aliases = []}}> : () -> {T}"),
    "composite": (f'%r = stablehlo.composite "foo.bar" %x {{composite_attributes = {{n = 2 : i64}}, '
                  f"decomposition = @g}} : ({T}) -> {T}",
                  '%r = "stablehlo.composite"(%x) <{composite_attributes = {n = 2 : i64}, decomposition '
                  '= @g, '
                  f'name = "foo.bar", version = 0 : i32}}> : ({T}) -> {T}'),
    "after_all": ("%r = stablehlo.after_all %t, %t : !stablehlo.token",
                  '%r = "stablehlo.after_all"(%t, %t) : (!stablehlo.token, !stablehlo.token) -> '
                  '!stablehlo.token'),
    "after_all_empty": ("%r = stablehlo.after_all : !stablehlo.token",
                        '%r = "stablehlo.after_all"() : () -> !stablehlo.token'),
    "optimization_barrier": (f"%r:2 = stablehlo.optimization_barrier %x, %s : {T}, tensor<f32>",
                             f'%r:2 = "stablehlo.optimization_barrier"(%x, %s) : ({T}, tensor<f32>) -> '
                             f"({T}, tensor<f32>)"),
    "replica_id": ("%r = stablehlo.replica_id : "
                   "tensor<ui32>", '%r = "stablehlo.replica_id"() : () -> tensor<ui32>'),
    "partition_id": ("%r = stablehlo.partition_id : tensor<ui32>",
                     '%r = "stablehlo.partition_id"() : () -> tensor<ui32>'),
    "get_dimension_size": (f"%r = stablehlo.get_dimension_size %x, dim = 1 : ({T}) -> tensor<i32>",
                           '%r = "stablehlo.get_dimension_size"(%x) <{dimension = 1 : i64}> : '
                           f"({T}) -> tensor<i32>"),
    "rng_bit_generator": ("%r:2 = stablehlo.rng_bit_generator %u, algorithm = THREE_FRY : "
                          "(tensor<2xui64>) -> "
                          "(tensor<2xui64>, tensor<4xui32>)",
                          '%r:2 = "stablehlo.rng_bit_generator"(%u) <{rng_algorithm = '
                          '#stablehlo<rng_algorithm '
                          "THREE_FRY>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)"),
    "rng": ("%r = stablehlo.rng %s, %s, %k, distribution = NORMAL : (tensor<f32>, tensor<f32>, "
            f"tensor<4xi32>) -> {T}",
            '%r = "stablehlo.rng"(%s, %s, %k) <{rng_distribution = #stablehlo<rng_distribution NORMAL>}> : '
            f"(tensor<f32>, tensor<f32>, tensor<4xi32>) -> {T}"),
    "cholesky": (f"%r = stablehlo.cholesky %x, lower = true : {T}",
                 f'%r = "stablehlo.cholesky"(%x) <{{lower = true}}> : ({T}) -> {T}'),
    "cholesky_default": (f"%r = stablehlo.cholesky %x : {T}",
                         f'%r = "stablehlo.cholesky"(%x) <{{lower = false}}> : ({T}) -> {T}'),
    "complex": ("%r = stablehlo.complex %x, %y : tensor<2x3xcomplex<f32>>",
                f'%r = "stablehlo.complex"(%x, %y) : ({T}, {T}) -> tensor<2x3xcomplex<f32>>'),
    "real": (f"%r = stablehlo.real %c : (tensor<2x3xcomplex<f32>>) -> {T}",
             f'%r = "stablehlo.real"(%c) : (tensor<2x3xcomplex<f32>>) -> {T}'),
    "uniform_quantize": (f"%r = stablehlo.uniform_quantize %x : ({T}) -> tensor<2x3x!quant.uniform<i8:f32, "
                         "0.1:-3>>",
                         f'%r = "stablehlo.uniform_quantize"(%x) : ({T}) -> '
                         'tensor<2x3x!quant.uniform<i8:f32, '
                         "0.1:-3>>"),
    "uniform_dequantize": ("%r = stablehlo.uniform_dequantize %q : (tensor<2x3x!quant.uniform<i8:f32, "
                           f"0.1:-3>>) -> {T}",
                           '%r = "stablehlo.uniform_dequantize"(%q) : (tensor<2x3x!quant.uniform<i8:f32, '
                           '0.1:-3>>) '
                           f"-> {T}"),
    "einsum": (f'%r = stablehlo.einsum %x, %y, config = "ab,ab->ab" : ({T}, {T}) -> {T}',
               f'%r = "stablehlo.einsum"(%x, %y) <{{einsum_config = "ab,ab->ab"}}> : ({T}, {T}) -> {T}'),
    "is_finite": (f"%r = stablehlo.is_finite %x : ({T}) -> tensor<2x3xi1>",
                  f'%r = "stablehlo.is_finite"(%x) : ({T}) -> tensor<2x3xi1>'),
    "dynamic_reshape": (f"%r = stablehlo.dynamic_reshape %x, %k : ({T}, tensor<4xi32>) -> "
                        "tensor<?x?x?x?xf32>",
                        f'%r = "stablehlo.dynamic_reshape"(%x, %k) : ({T}, tensor<4xi32>) -> '
                        'tensor<?x?x?x?xf32>'),
    "expect_eq": (f"check.expect_eq %x, %y : {T}", f'"check.expect_eq"(%x, %y) : ({T}, {T}) -> ()'),
    "expect_eq_const": (f"check.expect_eq_const %x, dense<1.0> : {T}",
                        f'"check.expect_eq_const"(%x) <{{value = dense<1.0> : {T}}}> : ({T}) -> ()'),
    "expect_almost_eq": (f"check.expect_almost_eq %x, %y, tolerance = 1.0e-3 : {T}",
                         f'"check.expect_almost_eq"(%x, %y) <{{tolerance = 1.000000e-03 : f64}}> : ({T}, '
                         f'{T}) -> ()'),
    "expect_almost_eq_const": (f"check.expect_almost_eq_const %x, dense<2.0> : {T} {{tolerance = 0.1 : f64}}",
                               '"check.expect_almost_eq_const"(%x) <{tolerance = 1.000000e-01 : f64, value = '
                               f"dense<2.0> : {T}}}> : ({T}) -> ()"),
    "expect_close": (f"check.expect_close %x, %y, max_ulp_difference = 3, min_ulp_difference = 1 : {T}, {T}",
                     '"check.expect_close"(%x, %y) <{max_ulp_difference = 3 : ui64, min_ulp_difference = 1 : '
                     'ui64}> '
                     f": ({T}, {T}) -> ()"),
    "expect_serialized_eq": (f'check.expect_serialized_eq %x, probe_id = "p/0", iter = 2 : {T}',
                             '"check.expect_serialized_eq"(%x) <{iteration = 2 : ui32, probe_id = "p/0"}> : '
                             f"({T}) -> ()"),
    "probe": (f'%r = interpreter.probe %x, probe_id = "p" : {T}',
              f'%r = "interpreter.probe"(%x) <{{probe_id = "p"}}> : ({T}) -> {T}'),
    "print": (f"interpreter.print %x : {T}", f'"interpreter.print"(%x) : ({T}) -> ()'),
    "chlo_erf": (f"%r = chlo.erf %x : {T} -> {T}", f'%r = "chlo.erf"(%x) : ({T}) -> {T}'),
    "chlo_mulhi": ("%r = chlo.mulhi %k, %k : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>",
                   '%r = "chlo.mulhi"(%k, %k) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>'),
    "chlo_top_k": ("%v2, %ix = chlo.top_k(%k, k = 2) : tensor<4xi32> -> (tensor<2xi32>, tensor<2xi32>)",
                   '%v2, %ix = "chlo.top_k"(%k) <{k = 2 : i64}> : (tensor<4xi32>) -> (tensor<2xi32>, '
                   'tensor<2xi32>)'),
    "chlo_broadcast_add": (
        f"%r = chlo.broadcast_add %x, %s {{broadcast_dimensions = array<i64>}} : ({T}, tensor<f32>) -> {T}",
        f'%r = "chlo.broadcast_add"(%x, %s) <{{broadcast_dimensions = array<i64>}}> : ({T}, tensor<f32>) '
        f'-> {T}'),
    "chlo_scan": (
        "%r:2 = chlo.scan(%k) inits(%i) dimension=0 attributes {is_reverse = true} {\n"
        "  ^bb0(%e: tensor<i32>, %acc: tensor<i64>):\n    stablehlo.return %e, %acc : tensor<i32>, "
        "tensor<i64>\n"
        "  } : (tensor<4xi32>, tensor<i64>) -> (tensor<4xi32>, tensor<i64>)",
        '%r:2 = "chlo.scan"(%k, %i) <{dimension = 0 : i64, is_reverse = true, operandSegmentSizes = '
        "array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>}> ({\n"
        "  ^bb0(%e: tensor<i32>, %acc: tensor<i64>):\n"
        '    "stablehlo.return"(%e, %acc) : (tensor<i32>, tensor<i64>) -> ()\n'
        "  }) : (tensor<4xi32>, tensor<i64>) -> (tensor<4xi32>, tensor<i64>)"),
    "func_call": (f"%r = func.call @g(%x) : ({T}) "
                  f"-> {T}", f'%r = "func.call"(%x) <{{callee = @g}}> : ({T}) -> {T}'),
    "call": (f"%r = call @g(%x) : ({T}) -> {T}", f'%r = "func.call"(%x) <{{callee = @g}}> : ({T}) -> {T}'),
}


def first_op(ops: str) -> Op:
    m = parse_module(f"func.func @f({ARGS}) {{\n  {ops}\n  func.return\n}}", "<test>")
    return m.funcs[0].body.blocks[0].ops[0]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pretty_form_equals_its_generic_form(name):
    pretty, generic = PAIRS[name]
    a, b = first_op(pretty), first_op(generic)
    assert a == b, f"\n{a.attributes}\n{b.attributes}"
    assert a.prop_names == b.prop_names


def test_pretty_forms_build_the_canonical_attribute_classes():
    bcast = first_op(PAIRS["broadcast_in_dim"][0])
    assert bcast.attributes == {"broadcast_dimensions": DenseArrayAttr("i64", ())}
    cmp = first_op(PAIRS["compare"][0]).attributes
    assert cmp["comparison_direction"] == EnumAttr("stablehlo", "comparison_direction", "GT")
    assert cmp["compare_type"] == EnumAttr("stablehlo", "comparison_type", "FLOAT")
    conv = first_op(PAIRS["convolution"][0]).attributes
    assert conv["padding"].array.tolist() == [[0, 0], [1, 1]] and conv["padding"].array.dtype == np.int64
    assert conv["window_reversal"] == DenseArrayAttr("i1", (False, True))
    tol = first_op(PAIRS["expect_almost_eq"][0]).attributes["tolerance"]
    assert tol == FloatAttr(1e-3, element_type("f64"))
    assert first_op(PAIRS["iota"][0]).attributes == {"iota_dimension": IntegerAttr(1, I64)}
    cc = first_op(PAIRS["custom_call_defaults"][1])
    assert cc.attributes == {"call_target_name": StringAttr("foo")}  # defaults dropped, as MLIR elides them


def test_compact_reduce_body_is_built_like_mlir_does():
    op = first_op(PAIRS["reduce_compact"][0])
    (block,) = op.regions[0].blocks
    assert [a.name for a in block.args] == ["%r.lhs", "%r.rhs"]
    assert [a.type for a in block.args] == [TensorType((), F32)] * 2
    assert [o.name for o in block.ops] == ["stablehlo.add", "stablehlo.return"]
    assert block.ops[0].operands == block.args and block.ops[1].operands == block.ops[0].results


def test_while_regions_get_their_own_arguments():
    op = first_op(PAIRS["while"][0])
    cond, body = (r.blocks[0] for r in op.regions)
    assert [a.name for a in cond.args] == [a.name for a in body.args] == ["%it", "%acc"]
    assert cond.args[0] is not body.args[0]
    assert op.result_types == op.operand_types


# --------------------------------------------------------------------------
# malformed inputs: exact message and position
# --------------------------------------------------------------------------
def _fn(body: str) -> str:
    return f"func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {{\n{body}\n}}"


ERRORS = [
    (_fn("  %0 = stablehlo.add %a, %b : tensor<2xf32>"), 2, 26, "use of undefined value %b"),
    (_fn("  %0 = stablehlo.add %a, %a : tensor<3xf32>"), 2, 22,
     "type mismatch for %a: stablehlo.add expects tensor<3xf32> but %a has type tensor<2xf32>"),
    (_fn("  %a = stablehlo.abs %a : tensor<2xf32>"), 2, 3, "redefinition of SSA value %a"),
    (_fn("  %0 = stablehlo.abs %a : tensor<2xf32> 5"), 2, 41, "expected an operation, got '5'"),
    (_fn("  %0 = stablehlo.frobnicate %a : tensor<2xf32>"), 2, 8,
     "unknown operation 'stablehlo.frobnicate' in custom form; ops hlolab does not know must be written in "
     'the generic form "stablehlo.frobnicate"(...)'),
    (_fn("  %0 = stablehlo.add %a %a : tensor<2xf32>"), 2, 25, "expected ',' in stablehlo.add, got '%a'"),
    (_fn("  %0, %1 = stablehlo.abs %a : tensor<2xf32>"), 2, 3,
     "operation stablehlo.abs has 1 results but 2 are named"),
    (_fn('  %0 = "stablehlo.add"(%a, %a) : (tensor<2xf32>) -> tensor<2xf32>'), 2, 34,
     '"stablehlo.add" has 2 operands but its type lists 1 operand types'),
    (_fn('  %0 = "stablehlo.abs"(%a) : tensor<2xf32>'), 2, 30,
     "expected a function type (inputs) -> results, got tensor<2xf32>"),
    (_fn("  %0 = stablehlo.constant dense<1.0> : tensor<2xtf32>"), 2, 49,
     "element type tf32 is not supported: ml_dtypes has no TensorFloat32 dtype"),
    (_fn("  %0 = stablehlo.constant dense<1.0> : "
         "tensor<2xf33>"), 2, 49, "expected a tensor element type, got 'f33'"),
    (_fn("  %0 = stablehlo.compare GT, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1> "
         "loc(#loc9)"), 2, 90,
     "undefined location alias #loc9"),
    (_fn("  %0 = stablehlo.transpose %a, dims = [0 : (tensor<2xf32>) -> tensor<2xf32>"), 2, 42,
     "expected ',' or ']' in the integer list, got ':'"),
    (_fn("  %0 = stablehlo.iota dim = 0 : "
         "tensor<2xf32"), 3, 1, "expected '>' to close the tensor type, got '}'"),
    (_fn("  %0 = stablehlo.convolution(%a, %a) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, z], window = {} : "
         "(tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"), 2, 80,
     "expected a dimension label (b, f, i, o or a number), got 'z'"),
    (_fn("  %0 = stablehlo.convolution(%a, %a) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = "
         "{strid = "
         "[1]} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"), 2, 94,
     "unknown window attribute 'strid'; expected stride, pad, lhs_dilate, rhs_dilate or reverse"),
    (_fn("  %0 = stablehlo.convolution(%a, %a) dim_numbers = [b, 0, f]x[0, i, o]->[b, 1, f], window = {} : "
         "(tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"), 2, 52,
     "the output spatial dimensions must be numbered 0..0"),
    (_fn('  %0 = "x.g"(%a) {d = #stablehlo.gather<offset_dim = [1]>} : (tensor<2xf32>) -> '
         'tensor<2xf32>'), 2, 41,
     "unknown field 'offset_dim' in #stablehlo.gather; expected one of offset_dims, collapsed_slice_dims, "
     "operand_batching_dims, start_indices_batching_dims, start_index_map, index_vector_dim"),
    (_fn('  %0 = "x.g"(%a) {c = #stablehlo.channel_handle<handle = 1>} : (tensor<2xf32>) -> '
         'tensor<2xf32>'), 2, 48,
     "#stablehlo.channel_handle lacks field 'type'"),
    (_fn("  %0 = stablehlo.reduce(%a init: %a) applies stablehlo.subtract across dimensions = [0] : "
         "(tensor<2xf32>, tensor<2xf32>) -> tensor<f32>"), 2, 46,
     "expected the inner-op to be a commutative binary-op from the stablehlo dialect, with zero region, "
     "producing single result; got stablehlo.subtract"),
    (_fn("  %0 = stablehlo.reduce_precision %a, format = e5x10 : tensor<2xf32>"), 2, 48,
     "expected exponent mantissa in format e#m#, got 'e5x10'"),
    (_fn('  %0 = "x.y"(%a) {x = 1, x = 2} : (tensor<2xf32>) -> '
         'tensor<2xf32>'), 2, 26, "duplicate attribute 'x'"),
    (_fn('  "x.y"() {v = 300 : i8} : () -> ()'), 2, 16, "integer constant 300 is out of range for type i8"),
    (_fn('  "x.y"() {v = 1 : f32} : () '
         '-> ()'), 2, 16, "integer literal 1 cannot have float type f32; write 1.0"),
    (_fn("  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>"), 2, 33,
     "inferred shape of elements literal ([3]) does not match type tensor<2xf32> ([2])"),
    (_fn("  %0 = stablehlo.constant dense_resource<blob> : tensor<2xf32>"), 2, 27,
     "dense_resource blobs are not supported"),
    (_fn("  %0:3 = stablehlo.abs %a : "
         "tensor<2xf32>"), 2, 3, "operation stablehlo.abs has 1 results but 3 are named"),
    (_fn("  %0 = stablehlo.abs %a#1 : tensor<2xf32>"), 2, 22, "use of undefined value %a#1"),
    ("func.func @f() {\n  func.return\n}\nfunc.func @f() {\n  "
     "func.return\n}", 4, 1, "redefinition of function @f"),
    # the end of input is reported just past the last text
    ("func.func @f() {\n  func.return\n", 2, 14, "expected '}' to close the region, got end of input"),
    ("module {\n  func.func @f() {\n    func.return\n  }\n} }", 5, 3,
     "expected 'func.func' or 'module' at the top level, got '}'"),
    ("func.func @f(%a: tensor<*xf32>) {\n  func.return\n}", 1, 25, "unranked tensors are not supported"),
    ("func.func @f() {\n  func.return\n} $", 3, 3, "unexpected character '$'"),
    ("#map = affine_map<(d0) -> (d0)>\n#map = 1 : i32\n", 2, 1, "redefinition of alias #map"),
    ('func.func @f() {\n  "x.y"() : () -> () [\n}', 2, 22, "expected an operation, got '['"),
    ('func.func @f() {\n  "x.y"()[^bb1] : () -> '
     '()\n}', 2, 10, "successor blocks (branches) are not supported"),
]


@pytest.mark.parametrize("text,line,col,message", ERRORS)
def test_malformed_input_reports_message_and_position(text, line, col, message):
    with pytest.raises(ParseError) as e:
        parse_module(text, "t.mlir")
    assert e.value.message == message
    assert (e.value.loc.file, e.value.loc.line, e.value.loc.col) == ("t.mlir", line, col)
    lines = str(e.value).splitlines()
    assert lines[0] == f"t.mlir:{line}:{col}: error: {message}"
    if e.value.loc.source_line:  # (an error at the end of the input has no line to show)
        assert lines[1] == text.splitlines()[line - 1] and lines[2] == " " * (col - 1) + "^"


def test_deep_nesting_is_a_parse_error_not_a_crash():
    deep = "func.func @f() {\n" + '"x.y"() ({\n' * 400 + "}) : () -> ()\n" * 400 + "func.return\n}"
    with pytest.raises(ParseError, match="nesting too deep"):
        parse_module(deep)
    with pytest.raises(ParseError, match="nesting too deep"):
        parse_attribute("[" * 5000 + "]" * 5000)
    with pytest.raises(ParseError, match="nesting too deep"):
        parse_type("tuple<" * 3000 + ">" * 3000)


def test_trailing_text_after_an_attribute_or_type():
    with pytest.raises(ParseError, match="unexpected '2' after the attribute"):
        parse_attribute("[1] 2")
    with pytest.raises(ParseError, match="unexpected 'x' after the type"):
        parse_type("tensor<f32> x")
