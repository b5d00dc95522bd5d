"""A short fuzz campaign with a fixed seed: every mutated program and every random op parameter
set ends in a result or a clean hlolab error. The long campaign: python -m tests.fuzz --minutes N."""

from __future__ import annotations

import pytest

from tests.fuzz.campaign import CORPUS, campaign, mutate

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"LOUD SKIP: {CORPUS} is missing")


def test_mutations_are_deterministic_and_change_the_text():
    import numpy as np

    text = "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n  return %a : tensor<2x3xf32>\n}\n"
    a = [mutate(text, np.random.default_rng(s), 2) for s in range(20)]
    b = [mutate(text, np.random.default_rng(s), 2) for s in range(20)]
    assert a == b and sum(m != text for m in a) >= 15


def test_short_campaign_finds_no_crash_and_no_hang(capsys):
    tally = campaign(20261123, programs=3000, ops=1500, case_seconds=0)
    with capsys.disabled():
        print(f"\nfuzz (CI, seed 20261123): {tally.line()}")
    assert tally.cases == 4500
    assert tally.ran > 500 and tally.clean_errors > 500  # the cases reach both outcomes
    assert not tally.findings, "\n".join(f"{f.kind}: {f.source}: {f.error}\n{f.text[:2000]}"
                                         for f in tally.findings[:5])
