"""hlolab export from op parameters (schemas), the gallery, and the program view export."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from PIL import Image  # noqa: E402

from hlolab.cli import main  # noqa: E402
from hlolab.render import export  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GALLERY = REPO / "assets" / "gallery"
CONV_ARGS = ["--lhs", "1x5x5x1", "--rhs", "3x3x1x1", "--stride", "2", "--padding", "1"]


def test_conv_from_shorthand_parameters_animates_every_result_element(tmp_path, capsys):
    gif = tmp_path / "c.gif"
    assert main(["export", "conv", *CONV_ARGS, "--format", "gif", "--out", str(gif)]) == 0
    # (5 + 2*1 - 3) / 2 + 1 = 3 per spatial dim: 9 result elements, one frame each
    assert Image.open(gif).n_frames == 9
    assert "9 frames of stablehlo.convolution" in capsys.readouterr().out


def test_shorthand_and_param_forms_draw_the_same_picture(tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert main(["export", "conv", *CONV_ARGS, "--out", str(a)]) == 0
    params = [f"--param={k[2:]}={v}" for k, v in zip(CONV_ARGS[::2], CONV_ARGS[1::2])]
    assert main(["export", "convolution", *params, "--out", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()


def test_gather_spec_example_reproduces_the_spec_result():
    t = export.op_target("gather", "spec-example")
    out = t.event.outputs[0]
    assert out.shape == (2, 2, 3, 2, 2)
    # the spec's result for batch [0, 1, 2]: start [0, 9] clamped to [0, 2] in operand batch 1
    np.testing.assert_array_equal(out[0, 1, 2], [[41, 42], [43, 44]])
    np.testing.assert_array_equal(out[0, 0, 0], [[1, 2], [3, 4]])
    assert t.elements == [(0, (0, 1, 2, 1, 1))]
    assert t.command == "hlolab export gather --preset spec-example"


def test_chosen_index_and_fill_reach_the_target():
    t = export.op_target("pad", "default", {"operand": "2x2"}, [(1, 1)], fill="random", seed=3)
    assert t.elements == [(0, (1, 1))] and not t.walk_all
    assert "--param operand=2x2" in t.command and "--fill random --seed 3" in t.command


def test_help_params_lists_parameters_and_presets(capsys):
    assert main(["export", "gather", "--help-params"]) == 0
    out = capsys.readouterr().out
    assert "index_vector_dim" in out and "presets (--preset NAME): default, spec-example" in out


@pytest.mark.parametrize("argv, message", [
    (["export", "gather", "--bogus", "3"], "has no parameter 'bogus'; parameters: operand"),
    (["export", "gather", "--param", "index_vector_dim=7"], "gather (C2)"),
    (["export", "gather", "--param", "slice_sizes=a,b"], "parameter 'slice_sizes': cannot read 'a,b'"),
    (["export", "gather", "--preset", "nope"], "no preset 'nope'; presets: default, spec-example"),
    (["export", "nosuchop"], "not an op with a parameter schema nor a file"),
    (["export", "--example", "conv2d", "--param", "x=1"], "--param/--preset/--help-params describe an op"),
    (["export", "gather", "--program"], "--program and --value apply to a program file"),
    (["export", "--example", "conv2d", "--program", "--format", "gif"], "the program view is a still"),
])
def test_export_errors_name_the_problem(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_invalid_parameters_show_the_generated_line_and_a_caret(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["export", "gather", "--param", "index_vector_dim=7"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("<stablehlo.gather example>:2:3: error: gather (C2)")
    assert lines[2].strip() == "^"


def test_program_view_export(tmp_path, capsys):
    out = tmp_path / "p.png"
    assert main(["export", "--example", "conv_maxpool", "--program", "--value", "%2", "--index", "0,1,1,0",
                 "--out", str(out)]) == 0
    assert Image.open(out).size[0] > 300
    assert "program view of @main" in capsys.readouterr().out


def test_gallery_subset_writes_pictures_and_an_index(tmp_path):
    ops = (("pad", {}, "pad"), ("convolution", dict(zip(("lhs", "rhs", "stride", "padding"),
                                                        CONV_ARGS[1::2])), "conv_ps"))
    paths = export.write_gallery(tmp_path, ops)
    names = sorted(p.name for p in paths)
    assert names == ["conv_ps.gif", "conv_ps.png", "index.md", "pad.gif", "pad.png",
                     "program_conv_maxpool.png"]
    index = (tmp_path / "index.md").read_text()
    assert "hlolab export pad --preset spec-example --format gif --max-frames 36" in index
    assert "hlolab export convolution --param lhs=1x5x5x1" in index
    assert "![pad](pad.png)" in index and "(program_conv_maxpool.png)" in index
    assert Image.open(tmp_path / "pad.gif").n_frames == 36  # 5x9 result, capped at the gallery's 36
    assert Image.open(tmp_path / "conv_ps.gif").n_frames == 9


@pytest.mark.skipif(not GALLERY.is_dir(), reason="assets/gallery is not in this checkout")
def test_committed_gallery_is_current(tmp_path):
    """The committed pictures are what the code draws now.

    Regenerate with: hlolab export --gallery assets/gallery"""
    listed = (GALLERY / "index.md").read_text()
    for _, _, stem in export.gallery_ops():
        assert f"![{stem}]({stem}.png)" in listed and (GALLERY / f"{stem}.gif").is_file()
    for stem in ("pad", "gather"):
        fresh, _ = export.write(export.op_target(stem, "spec-example"), "png", tmp_path / f"{stem}.png")
        assert fresh.read_bytes() == (GALLERY / f"{stem}.png").read_bytes(), f"{stem}.png is stale"


def test_gallery_reports_each_item_with_the_totals(tmp_path):
    calls = []
    # progress=True too: the gallery's bar is the only live display (no frame bar per GIF inside it)
    paths = export.write_gallery(tmp_path, (("pad", {}, "pad"), ("slice", {}, "slice")), progress=True,
                                 on_item=lambda *a: calls.append(a))
    assert calls == [(1, 3, "pad"), (2, 3, "slice"), (3, 3, "program_conv_maxpool")]
    assert len(paths) == 6
    calls.clear()
    export.write_gallery(tmp_path, (("pad", {}, "pad"),), program=False, on_item=lambda *a: calls.append(a))
    assert calls == [(1, 1, "pad")]


def test_gallery_command_off_a_terminal_prints_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(export, "gallery_ops", lambda: (("pad", {}, "pad"),))
    out = tmp_path / "g"
    assert main(["export", "--gallery", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"wrote 4 files to {out} (index: {out / 'index.md'})\n"
    assert captured.err == ""  # no bar, no control codes: stderr is not a terminal here


def test_gallery_command_on_a_terminal_draws_a_bar_on_stderr(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(export, "gallery_ops", lambda: (("pad", {}, "pad"),))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    out = tmp_path / "g"
    assert main(["export", "--gallery", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"wrote 4 files to {out} (index: {out / 'index.md'})\n"
    assert "gallery · wrote program_conv_maxpool" in captured.err and "2/2" in captured.err
