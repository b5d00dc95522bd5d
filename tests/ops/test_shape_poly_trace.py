"""``hlolab trace`` of one element of a shape-polymorphic program (the jax.export fixtures):
the program runs on the inputs' shapes, the element's window and kernel are found through
dynamic_conv, and a constant of a function called several times (JAX's floor_divide
helper) is listed once per role, its paths counted together."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from hlolab.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "shape_poly" / "conv_strided_spatial.mlir"


def test_trace_of_a_strided_conv_element_lists_each_value_and_role_once(tmp_path, capsys):
    img, k = tmp_path / "img.npy", tmp_path / "k.npy"
    np.save(img, np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2) / 10)
    np.save(k, np.ones((3, 3, 2, 2), np.float32))
    assert main(["trace", str(FIXTURE), "--value", "%4", "--index", "0,1,1,0",
                 "--input", str(img), "--input", str(k)]) == 0
    out = capsys.readouterr().out
    # stride 2, SAME padding of 1 on a 5x5 image: output (1, 1) reads rows and columns 1..3
    assert "window     %arg0[0, 1:4, 1:4, 0:2]" in out
    assert "kernel     %arg1[0:3, 0:3, 0:2, 0]" in out
    entries = re.findall(r"[├└]─ (\w+)\s+(@\S+|%\S+)", out)
    assert ("index_read", "@floor_divide:%c") in entries
    assert len(entries) == len(set(entries)), entries  # once per (role, value)
