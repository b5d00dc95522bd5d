"""Property: program provenance agrees with the values, on random data-movement programs.

For random programs made only of ops that move elements (transpose, slice,
pad, gather, dynamic_slice, select, ...), every output element is a copy of
exactly one input element or padding / constant value. So:

- the trace's value source (role ``copy`` or ``pad_value``) of ``out[i]`` is
  one element, and ``out[i]`` equals it;
- perturbing every argument element that is NOT among the sources of
  ``out[i]`` (any role) never changes ``out[i]``;
- perturbing the value source (when it is an argument) does change ``out[i]``
  (to the new value, unless the element also steers a select).
"""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.session import Session
from tests.trace.programs import random_movement_program

VALUE_ROLES = ("copy", "pad_value")


def run(text: str, args: list[np.ndarray]) -> Session:
    s = Session(text)
    s.bind([a.copy() for a in args])
    assert s.run().reason == "end"
    return s


@pytest.mark.parametrize("seed", range(40))
def test_perturbing_non_sources_never_changes_the_element(seed):
    rng = np.random.default_rng(seed)
    text, args = random_movement_program(rng)
    s = run(text, args)
    out = s.results[0]
    result = s.result_defs()[0]
    flat = rng.choice(out.size, size=min(out.size, 3), replace=False)
    for f in flat:
        index = tuple(int(i) for i in np.unravel_index(f, out.shape))
        trace = s.sources(result, index)
        values = {(label, idx) for label, idx, role, _ in trace.elements() if role in VALUE_ROLES}
        assert len(values) == 1, (text, index, values)
        ((label, idx),) = values
        assert s.value(label)[idx] == out[index]
        # every argument element outside the sources gets a new value: out[index] stays
        perturbed = []
        for k, a in enumerate(args):
            mask = trace.mask(s.label((0, k)))
            keep = np.zeros(a.shape, bool) if mask is None else mask
            perturbed.append(np.where(keep, a, -1000.0 - np.arange(a.size).reshape(a.shape)).astype(a.dtype))
        assert run(text, perturbed).results[0][index] == out[index]
        # the value source itself, when it is an argument, decides out[index]
        names = [s.label((0, k)) for k in range(len(args))]
        if label in names:
            k = names.index(label)
            changed = [a.copy() for a in args]
            changed[k][idx] = 12345.0
            now = run(text, changed).results[0][index]
            decides = {(lb, ix) for lb, ix, role, _ in trace.elements() if role not in VALUE_ROLES}
            if (label, idx) in decides:  # it also steers a select: out changes, maybe to the other branch
                assert now != out[index]
            else:
                assert now == 12345.0
