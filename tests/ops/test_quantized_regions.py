"""explain() of quantized region ops (reduce, reduce_window, scatter, select_and_scatter,
sort): the dequantized elements read, every body call in real values (each quantized op in
the body dequantizes, computes in f32 and quantizes back), the float result of the last
call and its rounding to storage. Numbers worked by hand; the explained value is the
value the op computed."""

from __future__ import annotations

import numpy as np

from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.trace.explain import format_explanation

Q = "!quant.uniform<i8:f32, 1.0:0>"  # real = stored, saturating at -128 / 127
H = "!quant.uniform<i8:f32, 0.5:-1>"  # real = (stored + 1) / 2


def last_event(text: str, args: list[np.ndarray]):
    return list(Interpreter(parse_module(text)).events(None, args))[-1]


def stage(e, name: str):
    return next(s for s in e.steps if str(s.name) == name)


def calls(e) -> list:
    return next(s for s in e.steps if str(s.name).startswith("body calls")).children


def add_body(t: str) -> str:
    return (f"  ^bb0(%a: tensor<{t}>, %b: tensor<{t}>):\n"
            f"    %s = stablehlo.add %a, %b : (tensor<{t}>, tensor<{t}>) -> tensor<{t}>\n"
            f"    stablehlo.return %s : tensor<{t}>\n")


REDUCE = (f"func.func @main(%x: tensor<2x3x{Q}>) -> tensor<2x{Q}> {{\n"
          f"  %init = stablehlo.constant() {{value = dense<0> : tensor<i8>}} : () -> tensor<{Q}>\n"
          f"  %r = stablehlo.reduce(%x init: %init) across dimensions = [1] : "
          f"(tensor<2x3x{Q}>, tensor<{Q}>) -> tensor<2x{Q}>\n"
          f"   reducer(%a: tensor<{Q}>, %b: tensor<{Q}>) {{\n"
          f"    %s = stablehlo.add %a, %b : (tensor<{Q}>, tensor<{Q}>) -> tensor<{Q}>\n"
          f"    stablehlo.return %s : tensor<{Q}>\n  }}\n"
          f"  return %r : tensor<2x{Q}>\n}}")


def test_reduce_rounds_at_every_body_call():
    # the pairwise tree: add(100, 100) = 200 saturates to 127, then add(127, -100) = 27,
    # then add(init 0, 27) = 27; the exact sum would be 100
    x = np.array([[1, 2, 3], [100, 100, -100]], np.int8)
    ev = last_event(REDUCE, [x])
    e = ev.explain(0, (1,))
    assert e.value == 27
    deq = stage(e, "dequantized inputs").children
    assert [c.name for c in deq] == ["%init", "%x[1, 0]", "%x[1, 1]", "%x[1, 2]"]
    assert [float(c.value) for c in deq] == [0.0, 100.0, 100.0, -100.0]
    cs = calls(e)
    assert [c.substituted.args["args"] for c in cs] == ["100.0, 100.0", "127.0, -100.0", "0.0, 27.0"]
    assert [float(c.value) for c in cs] == [127.0, 27.0, 27.0]
    first = cs[0].children[0]
    assert first.substituted.args["float"] == 200.0 and first.value == 127  # clamped
    assert stage(e, "float result").value == 27.0
    q = stage(e, "quantize")
    assert [c.value for c in q.children] == [27.0, 27.0, 27.0, 27]
    txt = format_explanation(e)
    assert "add(100.0, 100.0) = 200.0 -> stored 127" in txt
    assert "rounded to storage" in txt


def test_reduce_explains_a_half_step_scale():
    # real = (q + 1) / 2: [4, 5, 6] -> 2.5, 3, 3.5; add(2.5, 3) = 5.5 -> 10; add(5.5, 3.5) = 9
    # -> 17; add(init (-1 -> 0), 9) = 9 -> 17
    text = REDUCE.replace(Q, H).replace("dense<0>", "dense<-1>")
    e = last_event(text, [np.array([[1, 2, 3], [4, 5, 6]], np.int8)]).explain(0, (1,))
    assert e.value == 17
    assert [float(c.value) for c in stage(e, "dequantized inputs").children] == [0.0, 2.5, 3.0, 3.5]
    assert [c.children[0].value for c in calls(e)] == [10, 17, 17]
    assert stage(e, "quantize").children[0].value == 17.0  # 9 / 0.5 - 1


def test_reduce_window_folds_from_init_in_window_order():
    # window 3, stride 1, padding 1 on each side; result[0] reads pad (init 10), 120, 20
    text = (f"func.func @main(%x: tensor<3x{Q}>) -> tensor<3x{Q}> {{\n"
            f"  %init = stablehlo.constant() {{value = dense<10> : tensor<i8>}} : () -> tensor<{Q}>\n"
            f"  %r = \"stablehlo.reduce_window\"(%x, %init) ({{\n{add_body(Q)}  }}) "
            f"{{window_dimensions = array<i64: 3>, padding = dense<[[1, 1]]> : tensor<1x2xi64>}} : "
            f"(tensor<3x{Q}>, tensor<{Q}>) -> tensor<3x{Q}>\n"
            f"  return %r : tensor<3x{Q}>\n}}")
    x = np.array([120, 20, -50], np.int8)
    ev = last_event(text, [x])
    e = ev.explain(0, (0,))
    # acc = 10; +10 (padding reads init) = 20; +120 = 140 -> 127; +20 = 147 -> 127
    assert e.value == 127
    cs = calls(e)
    assert cs[-1].children[0].value == e.value  # the last body call made the explained value
    assert [c.substituted.args["args"] for c in cs] == ["10.0, 10.0", "20.0, 120.0", "127.0, 20.0"]
    assert [c.children[0].substituted.args["float"] for c in cs] == [20.0, 140.0, 147.0]
    assert stage(e, "float result").value == 147.0
    clamp = stage(e, "quantize").children[1]
    assert clamp.value == 127.0 and clamp.before_clamp == 147.0
    e2 = ev.explain(0, (2,))  # 20 + -50 + pad 10, from 10: 30, -20, -10
    assert e2.value == -10
    assert [float(c.value) for c in calls(e2)] == [30.0, -20.0, -10.0]


SCATTER = (f"func.func @main(%x: tensor<3x{H}>, %i: tensor<2x1xi32>, %u: tensor<2x{H}>) -> tensor<3x{H}> {{\n"
           f"  %r = \"stablehlo.scatter\"(%x, %i, %u) ({{\n{add_body(H)}  }}) {{scatter_dimension_numbers = "
           f"#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
           f"index_vector_dim = 1>}} : (tensor<3x{H}>, tensor<2x1xi32>, tensor<2x{H}>) -> tensor<3x{H}>\n"
           f"  return %r : tensor<3x{H}>\n}}")


def test_scatter_combines_the_updates_in_order_in_real_values():
    # x[1] stored 2 -> 1.5; updates 4 -> 2.5 and 6 -> 3.5 both land on 1:
    # add(1.5, 2.5) = 4 -> stored 7; add(4, 3.5) = 7.5 -> stored 14
    x = np.array([0, 2, 0], np.int8)
    ev = last_event(SCATTER, [x, np.array([[1], [1]], np.int32), np.array([4, 6], np.int8)])
    e = ev.explain(0, (1,))
    assert e.value == 14
    assert [c.name for c in stage(e, "dequantized inputs").children] == ["%x[1]", "%u[0]", "%u[1]"]
    cs = calls(e)
    assert [c.substituted.args["args"] for c in cs] == ["1.5, 2.5", "4.0, 3.5"]
    assert [c.children[0].value for c in cs] == [7, 14]
    assert stage(e, "float result").value == 7.5
    assert stage(e, "quantize").children[0].value == 14.0  # 7.5 / 0.5 - 1
    # an element no update lands on: no body call, the stored value is the input's
    e0 = ev.explain(0, (0,))
    assert e0.value == 0 and not any(str(s.name).startswith("body calls") for s in e0.steps)


def test_select_and_scatter_adds_the_selected_sources_in_real_values():
    ge = (f"  ^bb0(%a: tensor<{H}>, %b: tensor<{H}>):\n"
          f"    %c = stablehlo.compare GE, %a, %b : (tensor<{H}>, tensor<{H}>) -> tensor<i1>\n"
          f"    stablehlo.return %c : tensor<i1>\n")
    text = (f"func.func @main(%x: tensor<4x{H}>, %src: tensor<2x{H}>) -> tensor<4x{H}> {{\n"
            f"  %init = stablehlo.constant() {{value = dense<0> : tensor<i8>}} : () -> tensor<{H}>\n"
            f"  %r = \"stablehlo.select_and_scatter\"(%x, %src, %init) ({{\n{ge}  }}, {{\n{add_body(H)}  }}) "
            f"{{window_dimensions = array<i64: 3>, window_strides = array<i64: 1>}} : "
            f"(tensor<4x{H}>, tensor<2x{H}>, tensor<{H}>) -> tensor<4x{H}>\n"
            f"  return %r : tensor<4x{H}>\n}}")
    # both windows [0:3] and [1:4] select x[1] (the max, 9); sources 2 -> 1.5 and 4 -> 2.5;
    # from init 0 -> 0.5: add(0.5, 1.5) = 2 -> 3; add(2, 2.5) = 4.5 -> 8
    x = np.array([1, 9, 3, 0], np.int8)
    ev = last_event(text, [x, np.array([2, 4], np.int8)])
    e = ev.explain(0, (1,))
    assert e.value == 8
    assert [c.name for c in stage(e, "dequantized inputs").children] == ["%init", "%src[0]", "%src[1]"]
    cs = calls(e)
    assert [c.substituted.args["args"] for c in cs] == ["0.5, 1.5", "2.0, 2.5"]
    assert [c.children[0].value for c in cs] == [3, 8]
    assert stage(e, "float result").value == 4.5


def test_sort_moves_stored_integers_and_rounds_nothing():
    lt = (f"  ^bb0(%a: tensor<{H}>, %b: tensor<{H}>):\n"
          f"    %c = stablehlo.compare LT, %a, %b : (tensor<{H}>, tensor<{H}>) -> tensor<i1>\n"
          f"    stablehlo.return %c : tensor<i1>\n")
    text = (f"func.func @main(%x: tensor<3x{H}>) -> tensor<3x{H}> {{\n"
            f"  %r = \"stablehlo.sort\"(%x) ({{\n{lt}  }}) {{dimension = 0 : i64}} : "
            f"(tensor<3x{H}>) -> tensor<3x{H}>\n  return %r : tensor<3x{H}>\n}}")
    e = last_event(text, [np.array([5, -3, 1], np.int8)]).explain(0, (0,))
    assert e.value == -3
    deq = stage(e, "dequantized inputs").children
    assert [c.name for c in deq] == ["%r[0]"] and float(deq[0].value) == -1.0
    assert not any(str(s.name) in ("float result", "quantize") for s in e.steps)
    assert "nothing is rounded" in format_explanation(e)


def test_a_body_that_returns_an_argument_carries_the_stored_integer():
    # update_computation returns the update: nothing is computed, so nothing is rounded
    body = (f"  ^bb0(%a: tensor<{H}>, %b: tensor<{H}>):\n"
            f"    stablehlo.return %b : tensor<{H}>\n")
    text = SCATTER.replace(add_body(H), body)
    ev = last_event(text, [np.array([0, 2, 0], np.int8), np.array([[1], [1]], np.int32),
                           np.array([4, 6], np.int8)])
    e = ev.explain(0, (1,))
    assert e.value == 6
    cs = calls(e)
    assert [c.substituted.args["args"] for c in cs] == ["1.5, 2.5", "2.5, 3.5"]
    assert [float(c.value) for c in cs] == [2.5, 3.5] and all(not c.children for c in cs)
    assert not any(str(s.name) in ("float result", "quantize") for s in e.steps)
    assert "carried unchanged" in format_explanation(e)


def test_reduce_animation_ends_on_the_value_the_op_computed():
    # the animation adds left to right: 0+100, +100 saturates at 127, -100 -> 27, -100 -> -73;
    # the op's pairwise tree gives add(127, -128) = -1: a last frame says so and writes -1
    text = REDUCE.replace("2x3x", "2x4x")
    ev = last_event(text, [np.array([[1, 2, 3, 4], [100, 100, -100, -100]], np.int8)])
    assert ev.outputs[0][1] == -1
    frames = ev.provenance().animation_steps(ev.call, ev.inputs, ev.outputs, elements=[(0, (1,))])
    assert [f.caption.key.rsplit(".", 1)[1] for f in frames] == ["start"] + ["element"] * 4 + ["tree"]
    assert frames[4].caption.args["after"] == -73
    last = frames[-1]
    assert last.caption.args["chain"] == -73 and last.caption.args["value"] == -1
    assert [(r, i, int(v)) for r, i, v in last.running] == [(0, (1,), -1)]
    # row 0 never saturates: the chain is the op's value and no extra frame is drawn
    frames0 = ev.provenance().animation_steps(ev.call, ev.inputs, ev.outputs, elements=[(0, (0,))])
    assert len(frames0) == 5
