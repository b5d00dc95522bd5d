"""Widgets of the TUI: tensor grid, parameter panel, explain panel."""
