"""Fuzzing of the parser and executor: ``python -m tests.fuzz --minutes N`` (see campaign.py)."""
