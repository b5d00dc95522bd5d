"""The program view: layered layout facts, trace highlighting (by geometry and by pixel),
collapsing of long programs, determinism."""

from __future__ import annotations

import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from PIL import Image  # noqa: E402

from hlolab.errors import ExecutionError  # noqa: E402
from hlolab.interp.engine import ARGS_NODE  # noqa: E402
from hlolab.render import style  # noqa: E402
from hlolab.render.program import draw_program, program_layout  # noqa: E402
from hlolab.session import Session  # noqa: E402
from tests.trace.programs import chain_program  # noqa: E402
from tests.trace.test_program import WHILE_ACCUMULATE  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "hlolab" / "examples"


def run_example(name: str) -> Session:
    s = Session((EXAMPLES / f"{name}.mlir").read_text())
    s.bind(seed=0)
    assert s.run().reason == "end"
    return s


def key_by_name(lay, s: Session, name: str) -> str:
    return lay.key_of_def(s.find(name))


def boxes_overlap(a, b) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def check_geometry(lay) -> None:
    layer = {n.key: n.layer for n in lay.nodes}
    for e in lay.edges:
        assert layer[e.src] < layer[e.dst], (e.src, e.dst)
    shown = lay.shown
    for a, b in combinations(shown, 2):
        assert not boxes_overlap(lay.node_box(a.key), lay.node_box(b.key)), (a.key, a.text, b.key, b.text)
    for n in shown:
        x, y, w, h = lay.node_box(n.key)
        assert 0 <= x and x + w <= lay.width and 0 <= y and y + h <= lay.height
    args = [n for n in shown if n.kind == "arg"]
    assert {n.layer for n in args} == {0}
    assert lay.node("return").layer == max(n.layer for n in lay.nodes)


@pytest.mark.parametrize("name", ["mlp_step", "conv_maxpool"])
def test_layout_facts(name):
    s = run_example(name)
    lay = program_layout(s)
    top = [ev for ev in s.history if ev.frame.depth == 0]
    assert len(top) == len(s.history)  # no stepped bodies in these two
    # every op instance and every argument has its own box, plus the return
    ops = [n for n in lay.shown if n.kind in ("op", "const")]
    assert sorted(e for n in ops for e in n.events) == [ev.id for ev in top]
    assert len({lay.key_of[ev.id] for ev in top}) == len(top)
    assert sum(n.kind == "arg" for n in lay.shown) == len(s.func.args)
    assert [n.kind for n in lay.shown].count("return") == 1
    # value edges are exactly the operand_defs relation (and the returned values)
    want = {(lay.key_of_def(d), lay.key_of[ev.id], d, i)
            for ev in top for i, d in enumerate(ev.operand_defs) if d is not None}
    got = {(e.src, e.dst, e.value, e.index) for e in lay.edges if e.kind == "operand"}
    assert got == want
    returned = {(lay.key_of_def(d), "return", d, r) for r, d in enumerate(s.result_defs())}
    assert {(e.src, e.dst, e.value, e.index) for e in lay.edges if e.kind == "result"} == returned
    check_geometry(lay)


def test_box_and_edge_text_mlp():
    s = run_example("mlp_step")
    lay = program_layout(s)
    n0 = lay.node(key_by_name(lay, s, "%0"))
    assert (n0.text, n0.sub, n0.line) == ("%0 = dot_general", "tensor<4x16xf32>", 5)
    assert lay.node("arg1").text == "%arg1 : tensor<8x16xf32>"
    assert lay.node(key_by_name(lay, s, "%cst")).kind == "const"
    assert lay.node(key_by_name(lay, s, "%cst")).text == "%cst = constant 0.0"
    # %10 = multiply %9, %9: one value used twice gives two edges
    k9, k10 = key_by_name(lay, s, "%9"), key_by_name(lay, s, "%10")
    twice = [e for e in lay.edges if e.src == k9 and e.dst == k10]
    assert sorted(e.index for e in twice) == [0, 1] and {e.label for e in twice} == {"%9 · 4x3"}
    # layers follow the longest path: dot_general reads arguments only; %9 is 6 deep
    # (%arg2 -> %1 -> %2 -> %3 -> %5 -> %6 -> %9)
    assert n0.layer == 1 and lay.node(k9).layer == 6


def test_trace_highlight_mlp():
    s = run_example("mlp_step")
    t = s.sources("%9", (1, 2))
    lay = program_layout(s, t)
    on_paths = {lay.key_of[h.node] for g in t.groups for h in g.path}
    assert lay.highlighted == on_paths
    # independently: %9 = (relu(x w1 + b1)) w2 + b2 goes through %0..%9 and nothing after
    assert lay.highlighted == {key_by_name(lay, s, f"%{i}") for i in range(10)}
    assert lay.node(key_by_name(lay, s, "%9")).query
    assert sum(n.query for n in lay.nodes) == 1
    assert lay.caption == "sources of %9[1, 2]"
    # sources: how many elements of each argument, in which role
    subs = {n.text.split(" ")[0]: (n.sub, n.role) for n in lay.shown if n.role is not None}
    assert subs == {"%arg0": ("8 of 32 · window", "window"),
                    "%arg1": ("128 of 128 · kernel", "kernel"), "%arg2": ("16 of 16 · copy", "copy"),
                    "%arg3": ("16 of 48 · kernel", "kernel"), "%arg4": ("1 of 3 · copy", "copy"),
                    "%cst": ("1 of 1 · copy", "copy")}
    # traced edges carry the role the next op reads them in; edges off the paths carry none
    role = {(e.src, e.dst): e.role for e in lay.edges}
    assert role[("arg1", key_by_name(lay, s, "%0"))] == "kernel"
    assert role[("arg0", key_by_name(lay, s, "%0"))] == "window"
    assert role[(key_by_name(lay, s, "%5"), key_by_name(lay, s, "%6"))] == "window"
    assert role[(key_by_name(lay, s, "%8"), key_by_name(lay, s, "%9"))] == "combine"
    assert role[(key_by_name(lay, s, "%9"), key_by_name(lay, s, "%10"))] is None
    assert role[(key_by_name(lay, s, "%9"), "return")] is None
    assert lay.roles == ["kernel", "copy", "window", "combine"]


def pixel(fig, xy) -> tuple[int, int]:
    """PNG (column, row) of a layout point (inches, y down) through the axes transform."""
    px, py = fig.axes[0].transData.transform(xy)
    scale = style.EXPORT_DPI / fig.dpi  # PNGs are written at EXPORT_DPI
    height = fig.get_size_inches()[1] * fig.dpi
    return int(round(px * scale)), int(round((height - py) * scale))


def test_highlight_pixels(tmp_path):
    s = run_example("mlp_step")
    t = s.sources("%9", (1, 2))
    lay = program_layout(s, t)
    fig = draw_program(s, t)
    png = style.save_figure(fig, tmp_path / "mlp.png")
    img = Image.open(png).convert("RGB")
    assert img.size == pixel(fig, (lay.width, lay.height))

    def fill_at(key: str) -> tuple[int, int, int]:
        x, y, w, h = lay.node_box(key)  # inside the box, left of the centred text
        return img.getpixel(pixel(fig, (x + 0.07, y + h / 2)))

    def edge_at(key: str) -> tuple[int, int, int]:
        x, y, w, h = lay.node_box(key)  # middle of the left border: no edge arrives there
        return img.getpixel(pixel(fig, (x, y + h / 2)))

    on, off = key_by_name(lay, s, "%3"), key_by_name(lay, s, "%10")
    assert fill_at(on) == style.hex_to_rgb(style.PATH_FILL)
    assert edge_at(on) == style.hex_to_rgb(style.ACCENT)
    assert fill_at(off) == (255, 255, 255)
    assert edge_at(off) != style.hex_to_rgb(style.ACCENT)
    assert fill_at("arg1") == style.hex_to_rgb(style.ROLE_COLORS["kernel"])
    assert fill_at("arg0") == style.hex_to_rgb(style.ROLE_COLORS["window"])
    assert edge_at(key_by_name(lay, s, "%9")) == style.hex_to_rgb(style.ROLE_COLORS["result"])
    # the traced edge arg1 -> %0 is drawn in the kernel colour; the untraced %10 -> %11 is grey
    for src, dst, want in (("arg1", key_by_name(lay, s, "%0"), style.ROLE_COLORS["kernel"]),):
        (e,) = [e for e in lay.edges if (e.src, e.dst) == (src, dst)]
        (x0, y0), (x1, y1) = e.points[0], e.points[1]
        mid = (x0 + (x1 - x0) * 0.2, y0 + (y1 - y0) * 0.2)
        assert img.getpixel(pixel(fig, mid)) == style.hex_to_rgb(want)
    (e,) = [e for e in lay.edges if (e.src, e.dst) == (off, key_by_name(lay, s, "%11"))]
    (x0, y0), (x1, y1) = e.points[0], e.points[1]
    c = img.getpixel(pixel(fig, (x0 + (x1 - x0) * 0.2, y0 + (y1 - y0) * 0.2)))
    assert c not in {style.hex_to_rgb(col) for col in style.ROLE_COLORS.values()}
    assert c != (255, 255, 255)  # the grey edge is there


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_deterministic(tmp_path, fmt):
    s = run_example("conv_maxpool")
    t = s.sources("%2", (0, 1, 2, 1))
    a = style.save_figure(draw_program(s, t, title="conv"), tmp_path / f"a.{fmt}").read_bytes()
    s2 = run_example("conv_maxpool")
    b = style.save_figure(draw_program(s2, s2.sources("%2", (0, 1, 2, 1)), title="conv"),
                          tmp_path / f"b.{fmt}").read_bytes()
    assert a == b and len(a) > 1000


def chain_session() -> Session:
    s = Session(chain_program(100, 64, seed=2))
    s.bind(seed=0)
    assert s.run().reason == "end"
    return s


def test_long_program_collapses_and_keeps_paths(tmp_path):
    s = chain_session()
    assert len(s.history) > 100
    t = s.sources(s.result_defs()[0], (4, 4))
    lay = program_layout(s, t, max_nodes=60)
    path_events = {h.node for g in t.groups for h in g.path}
    collapsed = [n for n in lay.shown if n.kind == "collapsed"]
    assert collapsed and all(n.text == f"… {len(n.events)} ops" for n in collapsed)
    # each traced op instance keeps its own box, highlighted; no collapsed box is on a path
    for ev in path_events:
        n = lay.node(lay.key_of[ev])
        assert n.kind in ("op", "const") and n.events == [ev] and n.on_path
    assert not any(n.on_path for n in collapsed)
    # every op instance is shown exactly once (in its box or in a collapsed one)
    shown_events = sorted(e for n in lay.shown for e in n.events)
    assert shown_events == [ev.id for ev in s.history]
    # the paths are continuous: consecutive hops in different boxes have a traced edge
    traced = {(e.src, e.dst) for e in lay.edges if e.role is not None}
    for g in t.groups:
        keys = [lay.key_of_def(g.value)] + [lay.key_of[h.node] for h in g.path]
        for a, b in zip(keys, keys[1:]):
            assert a == b or (a, b) in traced
    # the arguments and the return stay; the rest fits the budget where the paths allow
    assert {"arg0", "arg1", "return"} <= {n.key for n in lay.shown}
    # at most the kept boxes plus one per run of other ops between them
    kept = {n.key for n in lay.shown if n.on_path or n.role is not None}
    order = sorted((ev.frame.path[0], lay.key_of[ev.id] in kept) for ev in s.history)
    runs = sum(1 for (_, a), (_, b) in zip([(None, True)] + order, order) if a and not b)
    assert len(kept) > 40 and runs >= 2
    assert len(lay.shown) <= max(60, len(kept) + runs + 3)  # + 2 args + return
    assert all(len(n.events) >= 2 for n in collapsed)
    check_geometry(lay)
    style.save_figure(draw_program(s, t, max_nodes=60), tmp_path / "chain.png")


def test_long_program_without_trace_fills_the_budget():
    s = chain_session()
    lay = program_layout(s, max_nodes=40)
    assert len(lay.shown) == 40
    assert sum(n.kind == "collapsed" for n in lay.shown) >= 1
    assert sorted(e for n in lay.shown for e in n.events) == [ev.id for ev in s.history]
    check_geometry(lay)
    assert len(program_layout(s, max_nodes=1000).shown) == len(s.history) + 3  # 2 args + return


def test_while_is_one_box_with_captured_edges():
    s = Session(WHILE_ACCUMULATE)
    s.bind([np.array([1, 2, 4, 8, 16], np.float32)])
    s.run()
    t = s.sources("%acc", ())
    lay = program_layout(s, t)
    wkey = key_by_name(lay, s, "%acc")
    w = lay.node(wkey)
    assert w.text == "%i, %acc = while" and w.query and w.on_path
    # the body's op instances are shown by the while's box
    assert all(lay.key_of[ev.id] == wkey for ev in s.history if ev.frame.depth > 0)
    assert lay.highlighted == {wkey}
    # %c0, %zero start the loop (operands); %x, %one, %n are read inside the body (captured)
    kinds = {(s.label(e.value), e.kind) for e in lay.edges if e.dst == wkey}
    assert kinds == {("%c0", "operand"), ("%zero", "operand"), ("%x", "captured"), ("%one", "captured"),
                     ("%n", "captured")}
    assert lay.node("arg0").sub == "3 of 5 · copy"  # x[3], x[4] are never read
    check_geometry(lay)


def test_foreign_trace_is_a_clean_error():
    chain = chain_session()
    t = chain.sources(chain.result_defs()[0], (4, 4))
    with pytest.raises(ExecutionError):
        program_layout(run_example("mlp_step"), t)
    with pytest.raises(ExecutionError):
        program_layout(run_example("mlp_step"), max_nodes=0)


def test_argument_query_and_partial_run():
    s = Session((EXAMPLES / "mlp_step.mlir").read_text())
    s.bind(seed=0)
    s.step(3)  # stopped after %2: only the ops run so far are boxes, no returned values yet
    lay = program_layout(s, s.sources("%arg2", (3,)))
    assert sorted(n.kind for n in lay.shown).count("op") == 3
    assert not [e for e in lay.edges if e.kind == "result"]
    assert lay.node("arg2").query and lay.highlighted == set()
    assert lay.key_of_def((ARGS_NODE, 2)) == "arg2"
    check_geometry(lay)


def test_import_does_not_load_matplotlib():
    code = "import sys, hlolab.render.program; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
