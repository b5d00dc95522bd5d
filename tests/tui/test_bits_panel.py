"""The bit view in the explorer's explain panel: coloured per field, marks styled and listed
under their bits (also when a narrow panel cuts the bits into chunks), at 120x40 and 80x24."""

from __future__ import annotations

import numpy as np
import pytest
from rich.console import Console

from hlolab.numerics import to_bits
from hlolab.trace.bits import format_bits, reduce_precision_panel
from hlolab.trace.roles import BIT_FIELD_COLORS, BIT_MARK_COLORS
from hlolab.tui.app import HloLabApp
from hlolab.tui.widgets.explain import BIT_MARK_SYMBOLS, BitLines, bit_cells, bit_panel_renderable

from .conftest import run, settle


def e5m2_panel():
    x = np.float32(0.1)
    return reduce_precision_panel(x, np.float32(0.09375), "f32", 5, 2, ("%operand[0]", "%output[0]"))


def lines(renderable, width: int) -> list[str]:
    console = Console(width=width, record=True, color_system="truecolor", file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text(styles=False).splitlines()


def test_bits_are_coloured_by_field_and_styled_by_mark():
    p = e5m2_panel()
    cells = bit_cells(p.rows[0])
    chars = "".join(c for c, _, _ in cells)
    # sign, exponent, (implicit bit) mantissa: 0.1 = 0x3DCCCCCD
    assert chars == "0 01111011 (1)10011001100110011001101"
    sign, exp, mant = cells[0], cells[2], cells[14]
    assert BIT_FIELD_COLORS["sign"].lower() in sign[1].lower()
    assert BIT_FIELD_COLORS["exponent"].lower() in exp[1].lower()
    assert BIT_FIELD_COLORS["mantissa"].lower() in mant[1].lower()
    # the kept bits 22, 21, the guard (bit 20, reversed) and the sticky bits (struck)
    marks = [m for _, _, m in cells if m is not None]
    assert marks == ["kept", "kept", "guard"] + ["sticky"] * 20
    guard = next(c for c in cells if c[2] == "guard")
    assert guard[0] == "0" and "reverse" in guard[1]
    # the output: every changed bit underlined
    out = bit_cells(p.rows[1])
    changed = [c for c in out if c[2] == "changed"]
    assert len(changed) == 11 and all("underline" in c[1] for c in changed)
    assert {c[0] for c in changed} == {"0"}  # the sticky 1s cleared


@pytest.mark.parametrize("width", [80, 30, 16])
def test_marker_line_stays_under_its_bits_at_any_width(width):
    p = e5m2_panel()
    row = p.rows[0]
    cells = bit_cells(row)
    out = lines(BitLines(row), width)
    assert len(out) % 2 == 0 and len(out) >= 2
    bits = "".join(line[2:] for line in out[0::2])
    marks = "".join(line[2:].ljust(len(b[2:])) for line, b in zip(out[1::2], out[0::2], strict=True))
    assert bits == "".join(c for c, _, _ in cells)
    want = "".join(BIT_MARK_SYMBOLS[m] if m else " " for _, _, m in cells)
    assert marks == want
    assert all(len(line) <= width for line in out)


def test_panel_renderable_lists_rows_steps_and_key():
    text = "\n".join(lines(bit_panel_renderable(e5m2_panel()), 100))
    assert "reduce_precision to e5m2, bit by bit" in text
    assert "%operand[0]  f32  = 0.1" in text and "%output[0]  f32  = 0.09375" in text
    assert "↓ dropped 21 bits 011001100110011001101: guard bit 0, below half" in text
    assert "= kept  g guard bit  s sticky bits  ^ changed" in text
    # the field key names each field once, on its colour
    assert " sign   exponent   mantissa " in text
    for k in ("guard", "sticky", "changed", "kept"):
        assert BIT_MARK_COLORS[k]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_explorer_shows_the_bits_of_the_chosen_element(size):
    """reduce_precision to e5m2 in the explorer: result [1, 1] = 2.3333333 rounds to 2.5
    (2.3333333 = 1.00101010101010101010101b x 2: keep "00", guard 1, sticky 1 -> up: 01)."""

    async def body():
        async with HloLabApp(open_op="reduce_precision").run_test(size=size) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            screen.query_one("#params").set_field("mantissa_bits", "2")
            await settle(pilot)
            result = screen.grid("result0")
            result.focus()
            result.move_cursor((1, 1))
            await pilot.pause()
            assert float(result.value[1, 1]) == 2.5
            panel = screen.query_one("#explain")
            plain = panel.text
            assert "reduce_precision to e5m2, bit by bit" in plain
            assert ("dropped 21 bits 101010101010101010101: guard bit 1 and sticky bit 1, above half -> "
                    "round up: 00 + 1 = 01") in plain
            assert "%result[1, 1]: f32 0 10000000 (1)01000000000000000000000 = 2.5" in plain
            # what the panel draws: the bits and, under them, the marks (in chunks when narrow)
            body_widget = panel.query_one("#explain-body")
            width = body_widget.content_region.width
            drawn = lines(body_widget.content, width)
            bits = [i for i, line in enumerate(drawn) if line.startswith("  0 10000000 (1)00101")]
            assert bits, "\n".join(drawn)
            i = bits[0]
            assert drawn[i + 1].startswith("                ==gsss")
            assert all(len(line) <= width for line in drawn)
            # scrolled to the end, the key of the marks is in view
            panel.focus()
            await pilot.press("end")
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            assert panel.scroll_y == panel.max_scroll_y > 0

    run(body)


def test_explorer_convert_shows_the_rounding():
    """convert f32 -> bf16 of the preset's values: 1.0, 2.0, ... convert exactly ("fits"), and
    the panel says which bits were kept."""

    async def body():
        async with HloLabApp(open_op="convert").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            params = screen.query_one("#params")
            params.set_field("dtype", "f32")
            await settle(pilot)
            params.set_field("result_dtype", "bf16")
            await settle(pilot)
            result = screen.grid("result0")
            result.focus()
            result.move_cursor((0, 1))
            await pilot.pause()
            plain = screen.query_one("#explain").text
            x = screen.grid("operand0").value[0, 1]
            want = format_bits(screen.built.event.explain(0, (0, 1)).bits[0])
            assert "convert f32 -> bf16, bit by bit" in plain and want in plain
            assert int(to_bits(np.asarray(result.value[0, 1]))) >> 7 == int(to_bits(np.asarray(x))) >> 23

    run(body)
