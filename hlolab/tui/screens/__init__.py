"""Screens of the TUI: home, op explorer, help (the stepper lives beside them)."""
