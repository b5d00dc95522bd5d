"""Nothing typed is lost: the autosave after every change, offered back after a crash;
Ctrl-C drops a line, Ctrl-D asks before losing unsaved work; history persists."""

from __future__ import annotations

import io
import json

from hlolab.repl.app import AUTOSAVE_NAME, HISTORY_NAME, Repl


def test_session_survives_a_crash(drive, data_home):
    crashed = Repl(out=io.StringIO(), colour=False)
    for line in ["x = Parameter(f32[2])", ":args %x [1.5, -2]", "y = Mul(x, x)", "z = Add(y, 1)",
                 "bad = Add(y, nope)"]:
        crashed.handle(line)
    autosave = data_home / "hlolab" / AUTOSAVE_NAME
    snap = json.loads(autosave.read_text())
    assert [e["text"] for e in snap["entries"]] == ["x = Parameter(f32[2])", "y = Mul(x, x)", "z = Add(y, 1)"]
    assert not list(autosave.parent.glob("*.tmp"))  # written through a temporary file, then renamed
    del crashed  # the process dies here: no clean exit, the autosave stays

    out, repl = drive([":show %z"], prefix="\r")  # Enter: the default answer, restore
    assert "restored 3 of 3 statements" in out
    assert "%z : tensor<2xf32>\n  [3.25 5.  ]" in out
    assert repl.program.bound[0].tolist() == [1.5, -2.0]
    assert not autosave.exists()  # the clean exit of the drive removed it


def test_restore_can_be_declined(drive, data_home):
    Repl(out=io.StringIO()).handle("x = Iota(s32[3], 0)")
    out, repl = drive([], prefix="n\r")
    assert "restore the unsaved session (1 statement)? [Y/n]" not in out  # asked on the screen
    assert repl.program.entries == []
    assert not (data_home / "hlolab" / AUTOSAVE_NAME).exists()


def test_ctrl_c_drops_the_line_and_history_persists(drive, data_home):
    out, repl = drive(["y = Iota(s32[3], 0)"], prefix="x = Iota(s32[2], 0)\x03")
    assert repl.program.b.names() == ["y"]
    history = (data_home / "hlolab" / HISTORY_NAME).read_text()
    assert "+y = Iota(s32[3], 0)" in history and "s32[2]" not in history


def test_ctrl_d_asks_when_unsaved(drive, tmp_path):
    out, repl = drive(["x = Iota(s32[3], 0)"])
    assert repl.program.unsaved
    # answered "n": the REPL goes on; then :save and Ctrl-D quits without asking
    import io as _io

    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    r = Repl(out=_io.StringIO(), colour=False)
    with create_pipe_input() as inp:
        inp.send_text(f"x = Iota(s32[3], 0)\r\x04n\r:save {tmp_path / 'p.mlir'}\r\x04")
        with create_app_session(input=inp, output=DummyOutput()):
            assert r.run() == 0
    assert not r.program.unsaved
    assert (tmp_path / "p.mlir").is_file()


def test_undo_and_reset(drive):
    out, repl = drive(["a = Iota(s32[3], 0)", "b = Add(a, a)", ":undo", "c = Mul(a, 3)", ":undo", ":undo",
                       ":undo"])
    assert "undone: b = Add(a, a)" in out and "undone: c = Mul(a, 3)" in out
    assert "undone: a = Iota(s32[3], 0)" in out and "nothing to undo" in out
    assert repl.program.b.names() == [] and repl.program.cache == {}
    out, repl = drive(["a = Iota(s32[3], 0)", ":reset", "a = Iota(s32[2], 0)"], repl=repl)
    assert "the program is empty" in out
    assert str(repl.program.b.lookup("a").type) == "tensor<2xi32>"
