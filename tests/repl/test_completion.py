"""Completion: the attributes of the op being typed (MLIR and builder language), value
names, commands, paths."""

from __future__ import annotations

from hlolab.repl.app import Repl
from hlolab.repl.completion import completions

GATHER_FIELDS = {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                 "start_indices_batching_dims", "start_index_map", "index_vector_dim", "slice_sizes",
                 "indices_are_sorted"}


def _repl(*lines: str) -> Repl:
    r = Repl(colour=False)
    for line in lines:
        r.handle(line)
    return r


def _names(cs) -> set[str]:
    return {c.display_text for c in cs}


def test_stablehlo_gather_attributes_after_the_parenthesis():
    r = _repl()
    for text in ("%r = stablehlo.gather(", '%r = "stablehlo.gather"(%a, %b) {',
                 "%r = stablehlo.gather(%a, %b) o"):
        cs = completions(r, text)
        names = _names(cs)
        if text.endswith("o"):
            assert names == {"offset_dims", "operand_batching_dims"}
        else:
            assert GATHER_FIELDS <= names
    meta = {c.display_text: c.display_meta_text for c in completions(r, "%r = stablehlo.gather(")}
    assert meta["offset_dims"] == "tuple[int, ...]" and meta["index_vector_dim"] == "int"
    inserted = {c.text for c in completions(r, "%r = stablehlo.gather(")}
    assert "slice_sizes = " in inserted


def test_builder_gather_keywords_inside_the_call():
    r = _repl("x = Iota(s32[4,8], 1)")
    cs = completions(r, "y = Gather(")
    names = _names(cs)
    assert {"operand", "start_indices", "slice_sizes", "offset_dims", "collapsed_slice_dims",
            "start_index_map", "index_vector_dim"} <= names
    assert "x" in names  # values fit there too
    assert {c.text for c in cs if c.display_text == "offset_dims"} == {"offset_dims="}
    after_args = _names(completions(r, "y = Gather(x, x, sl"))
    assert after_args == {"slice_sizes"}
    # inside a nested call the innermost call counts
    assert "broadcast_dimensions" in _names(completions(r, "y = Gather(Add(x, x, "))


def test_values_functions_ops_and_commands():
    r = _repl("xs = Iota(s32[3], 0)", "xt = Iota(f32[2], 0)")
    assert _names(completions(r, "z = Add(x")) >= {"xs", "xt"}
    assert {c.display_meta_text for c in completions(r, "z = Add(xs")} == {"tensor<3xi32>"}
    assert _names(completions(r, "%z = stablehlo.add %x")) == {"%xs", "%xt"}
    assert "Gather" in _names(completions(r, "z = Ga"))
    assert "stablehlo.gather" in _names(completions(r, "%z = stablehlo.ga"))
    assert _names(completions(r, ":tr")) == {":trace"}
    assert _names(completions(r, ":show %x")) == {"%xs", "%xt"}
    assert {"op", "line", "name", "nan"} <= _names(completions(r, ":break "))
    assert _names(completions(r, ":lang e")) == {"en", "es"}


def test_paths_after_load_and_save(tmp_path, monkeypatch):
    (tmp_path / "prog.mlir").write_text("")
    (tmp_path / "other.txt").write_text("")
    monkeypatch.chdir(tmp_path)
    r = _repl()
    assert "prog.mlir" in _names(completions(r, ":load pr"))
    assert "prog.mlir" in _names(completions(r, ":save p"))
    assert "prog.mlir" in _names(completions(r, ":export %x[0] png pr"))
