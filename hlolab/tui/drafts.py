"""The paste dialog's draft on disk: typed or pasted MLIR text survives quitting.

It lives beside ``recent.json`` (``$XDG_CONFIG_HOME/hlolab``), written atomically
(temp file + rename) so a crash mid-write never leaves half a program. Failures to
write are ignored: the in-memory draft still exists for this run.
"""

from __future__ import annotations

from pathlib import Path

from hlolab.atomic import write_text
from hlolab.tui.screens.home import recent_path


def draft_path() -> Path:
    return recent_path().parent / "draft.mlir"


def load_draft() -> str:
    """The saved draft ("" when there is none or it cannot be read)."""
    try:
        return draft_path().read_text()
    except (OSError, UnicodeDecodeError):
        return ""


def save_draft(text: str) -> bool:
    """Store ``text`` as the draft (an empty or blank text clears it); True when written."""
    if not text.strip():
        return clear_draft()
    try:
        write_text(draft_path(), text)
    except OSError:
        return False
    return True


def clear_draft() -> bool:
    """Forget the draft (it loaded); True when there is none left."""
    try:
        draft_path().unlink(missing_ok=True)
    except OSError:
        return False
    return True
