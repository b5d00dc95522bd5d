"""Write assets/tui-explorer.svg, the README's picture of the op explorer.

Run from the repo root: python assets/make_tui_screenshot.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from hlolab.tui.app import HloLabApp

OUT = Path(__file__).resolve().parent


async def main() -> None:
    app = HloLabApp(open_op="gather")
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(20):  # the explorer builds its first view in a worker
            await pilot.pause(0.1)
        await pilot.press("left")  # the cursor on result[1, 1, 0]: its source and index read light up
        await pilot.pause(0.3)
        app.save_screenshot("tui-explorer.svg", str(OUT))


if __name__ == "__main__":
    asyncio.run(main())
