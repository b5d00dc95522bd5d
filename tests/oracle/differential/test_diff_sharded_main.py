"""Sharded JAX programs run whole vs XLA:CPU on 8 host devices: what ``jax.jit(...).lower(...)
.as_text()`` prints for ``jax.jit(shard_map(...))`` and for plain ``jax.jit`` with
``NamedSharding`` arguments / ``with_sharding_constraint``, lowered with BOTH partitioners
(Shardy: ``sdy.manual_computation``; GSPMD: ``@Sharding`` / ``@SPMDFullToShardShape`` /
``@SPMDShardToFullShape``), run by hlolab as ``@main`` on the module's grid with the GLOBAL
inputs, compared with XLA's global output (every process's result).

A subprocess with ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` lowers and runs the
programs (``_XLA_SCRIPT``). Bounds: integers and data movement bit-exact; float matmuls
within ``(K + n) * eps * sum|a_ik * w_kj|`` per element (K the contraction length, n the
devices a psum adds over; hlolab and XLA may add in other orders).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hlolab.interp.engine import Interpreter, drain
from hlolab.interp.processes import module_grid, run_grid
from hlolab.ir.parser import parse_module
from tests.conftest import require_oracle

try:
    import jax  # noqa: F401  # only to know it is installed; XLA runs in the subprocess
except ImportError:
    if require_oracle():
        raise
    pytest.skip("SKIPPED LOUDLY: jax is not installed; the sharded-main oracle tests need it",
                allow_module_level=True)

MODES = ("sdy", "gspmd")

# kind "shard_map": fn on shards, in_specs / out_spec, optional axis_names (partially manual),
# check_vma; kind "jit": fn on global arrays, in_shardings (specs), out_sharding (spec or None);
# "explicit": the mesh's axes are Explicit (jax.sharding.reshard lowers to sdy.sharding_constraint).
# "devices": "reverse" builds the mesh over the devices in reverse order (device_ids).
CASES: dict[str, dict] = {
    "matmul_rows": dict(kind="shard_map", mesh=(4,), axes=("x",), fn="lambda a, w: a @ w",
                        in_specs=[("x", None), (None, None)], out_spec=("x", None),
                        shapes=[(8, 6), (6, 4)], dtype="float32", matmul=(8, 1)),
    "matmul_contract_psum": dict(kind="shard_map", mesh=(4,), axes=("x",),
                                 fn="lambda a, w: jax.lax.psum(a @ w, 'x')",
                                 in_specs=[(None, "x"), ("x", None)], out_spec=(None, None),
                                 shapes=[(8, 8), (8, 4)], dtype="float32", matmul=(8, 4)),
    "matmul_contract_psum_i32": dict(kind="shard_map", mesh=(8,), axes=("x",),
                                     fn="lambda a, w: jax.lax.psum(a @ w, 'x')",
                                     in_specs=[(None, "x"), ("x", None)], out_spec=(None, None),
                                     shapes=[(3, 16), (16, 5)], dtype="int32"),
    "matmul_2d_mesh": dict(kind="shard_map", mesh=(2, 4), axes=("x", "y"),
                           fn="lambda a, w: jax.lax.psum(a @ w, 'y')",
                           in_specs=[("x", "y"), ("y", None)], out_spec=("x", None),
                           shapes=[(4, 8), (8, 3)], dtype="float32", matmul=(8, 4)),
    "two_axes_one_dim": dict(kind="shard_map", mesh=(2, 4), axes=("x", "y"),
                             fn="lambda a: a * 3 + jax.lax.axis_index('y')",
                             in_specs=[(("x", "y"), None)], out_spec=(("y", "x"), None),
                             shapes=[(16, 3)], dtype="int32"),
    "all_gather_2d": dict(kind="shard_map", mesh=(2, 4), axes=("x", "y"),
                          fn="lambda a: jax.lax.all_gather(a, 'y', axis=1, tiled=True)",
                          in_specs=[("x", "y")], out_spec=("x", None), check_vma=False,
                          shapes=[(4, 8)], dtype="int32"),
    "all_to_all": dict(kind="shard_map", mesh=(8,), axes=("x",),
                       fn="lambda a: jax.lax.all_to_all(a, 'x', 1, 0, tiled=True)",
                       in_specs=[("x", None)], out_spec=("x", None), shapes=[(16, 8)], dtype="int32"),
    "ppermute_ring": dict(kind="shard_map", mesh=(8,), axes=("x",),
                          fn="lambda a: jax.lax.ppermute(a, 'x', [(i, (i + 1) % 8) for i in range(8)])",
                          in_specs=[("x",)], out_spec=("x",), shapes=[(16,)], dtype="int32"),
    "axis_index_2d": dict(kind="shard_map", mesh=(4, 2), axes=("x", "y"),
                          fn="lambda a: a * (jax.lax.axis_index('x') * 10 + jax.lax.axis_index('y'))",
                          in_specs=[("x", "y")], out_spec=("x", "y"), shapes=[(4, 4)], dtype="int32"),
    "replicated_out_own_value": dict(kind="shard_map", mesh=(4,), axes=("x",),
                                     fn="lambda a: a + jax.lax.axis_index('x')", check_vma=False,
                                     in_specs=[(None,)], out_spec=(None,), shapes=[(6,)], dtype="int32"),
    "partial_manual": dict(kind="shard_map", mesh=(2, 4), axes=("x", "y"), axis_names=("y",),
                           fn="lambda a: jax.lax.psum(a, 'y') * 2",
                           in_specs=[(None, "y")], out_spec=(None, None), shapes=[(4, 8)],
                           dtype="int32"),
    "partial_manual_sharded_arg": dict(kind="shard_map", mesh=(2, 4), axes=("x", "y"), axis_names=("y",),
                                       placed=("x", "y"), fn="lambda a: a * 2 + jax.lax.axis_index('y')",
                                       in_specs=[(None, "y")], out_spec=(None, "y"), shapes=[(8, 8)],
                                       dtype="int32"),
    "partial_manual_minor_axis": dict(kind="shard_map", mesh=(2, 4), axes=("y", "x"), axis_names=("x",),
                                      fn="lambda a: jax.lax.psum(a, 'x') * 3", placed=("x", "y"),
                                      in_specs=[("x", None)], out_spec=(None, None),
                                      shapes=[(8, 8)], dtype="int32"),
    "reversed_devices": dict(kind="shard_map", mesh=(4,), axes=("x",), devices="reverse",
                             fn="lambda a: jax.lax.ppermute(a, 'x', [(0, 1), (1, 2), (2, 3), (3, 0)])",
                             in_specs=[("x", None)], out_spec=("x", None), shapes=[(8, 2)],
                             dtype="int32"),
    "jit_constraint": dict(kind="jit", mesh=(2, 2), axes=("x", "y"),
                           fn="lambda a, b: jax.lax.with_sharding_constraint(a * 2 + b, "
                              "NamedSharding(mesh, P(None, 'y'))) - 1",
                           in_specs=[("x", "y"), (None, None)], out_spec=("y",), shapes=[(8, 8), (8, 8)],
                           dtype="int32"),
    "explicit_reshard": dict(kind="jit", explicit=True, mesh=(2, 2), axes=("x", "y"),
                             fn="lambda a: jax.sharding.reshard(a * 2 + 1, NamedSharding(mesh, "
                                "P(None, 'x')))",
                             in_specs=[("x", "y")], out_spec=None, shapes=[(8, 8)], dtype="int32"),
    "jit_matmul": dict(kind="jit", mesh=(4,), axes=("x",), fn="lambda a, w: a @ w",
                       in_specs=[("x", None), (None, "x")], out_spec=(None, "x"),
                       shapes=[(8, 6), (6, 8)], dtype="float32", matmul=(6, 1)),
}

_XLA_SCRIPT = r'''
import json, os, sys
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType, Mesh
from jax import shard_map
cases = json.loads(sys.argv[1]); out_dir = sys.argv[2]
assert len(jax.devices()) >= 8, jax.devices()
for mode in ("sdy", "gspmd"):
    jax.config.update("jax_use_shardy_partitioner", mode == "sdy")
    for name, c in cases.items():
        shape = tuple(c["mesh"]); n = int(np.prod(shape))
        devs = jax.devices()[:n]
        if c.get("devices") == "reverse":
            devs = devs[::-1]
        kind = AxisType.Explicit if c.get("explicit") else AxisType.Auto
        mesh = Mesh(np.array(devs).reshape(shape), tuple(c["axes"]), axis_types=(kind,) * len(shape))
        spec = lambda s: P(*[tuple(x) if isinstance(x, list) else x for x in s])
        in_specs = [spec(s) for s in c["in_specs"]]
        rng = np.random.default_rng(sum(map(ord, name)))
        args = []
        for s in c["shapes"]:
            if c["dtype"] == "int32":
                args.append(rng.integers(-100, 100, s).astype(np.int32))
            else:
                args.append(rng.standard_normal(s).astype(np.float32))
        fn = eval(c["fn"])
        if c["kind"] == "shard_map":
            kw = {}
            if "axis_names" in c:
                kw["axis_names"] = set(c["axis_names"])
            if "check_vma" in c:
                kw["check_vma"] = c["check_vma"]
            g = jax.jit(shard_map(fn, mesh=mesh, in_specs=tuple(in_specs), out_specs=spec(c["out_spec"]),
                                  **kw))
        else:
            outs = NamedSharding(mesh, spec(c["out_spec"])) if c["out_spec"] is not None else None
            g = jax.jit(fn, in_shardings=tuple(NamedSharding(mesh, s) for s in in_specs), out_shardings=outs)
        # "placed": the argument sits sharded otherwise than the in_specs (the partitioner reshards)
        put = [spec(c["placed"])] * len(args) if "placed" in c else in_specs
        placed = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(args, put)]
        text = g.lower(*placed).as_text()
        out = np.asarray(g(*placed))
        save = {f"in{i}": a for i, a in enumerate(args)}
        save["out"] = out
        np.savez(os.path.join(out_dir, f"{name}__{mode}.npz"), **save)
        open(os.path.join(out_dir, f"{name}__{mode}.mlir"), "w").write(text)
'''


@pytest.fixture(scope="module")
def xla_runs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sharded_main")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", _XLA_SCRIPT, json.dumps(CASES), str(out)], env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"the XLA subprocess failed:\n{proc.stderr[-4000:]}")
    return out


def run_main(d: Path, name: str, mode: str) -> tuple[str, list[np.ndarray], np.ndarray, list[np.ndarray]]:
    """hlolab runs ``@main`` on the module's grid, every process on the global inputs."""
    text = (d / f"{name}__{mode}.mlir").read_text()
    data = np.load(d / f"{name}__{mode}.npz")
    args = [data[f"in{i}"] for i in range(len(CASES[name]["shapes"]))]
    module = parse_module(text, f"{name}__{mode}.mlir")
    grid = module_grid(module)
    assert grid == (1, int(np.prod(CASES[name]["mesh"]))), grid
    interp = Interpreter(module)
    results = drain(run_grid(interp, interp.entry(), [list(args)] * (grid[0] * grid[1]), grid))
    return text, [r[0] for r in results], data["out"], args


CASE_IDS = [(n, m) for n in sorted(CASES) for m in MODES if n != "replicated_out_own_value"]


@pytest.mark.parametrize(("name", "mode"), CASE_IDS, ids=[f"{n}-{m}" for n, m in CASE_IDS])
def test_sharded_main_matches_xla(xla_runs, name, mode):
    case = CASES[name]
    text, got, want, args = run_main(xla_runs, name, mode)
    # the program is the global one jax prints, in the partitioner's own form
    if mode == "sdy":
        assert "sdy.mesh" in text
        assert ("sdy.manual_computation" in text) == (case["kind"] == "shard_map")
    else:
        assert "mhlo.sharding" in text and "sdy." not in text
        assert ("@SPMDFullToShardShape" in text) == (case["kind"] == "shard_map")
    for p, g in enumerate(got):
        assert g.shape == want.shape and g.dtype == want.dtype, (p, g.shape, want.shape, g.dtype)
        if "matmul" in case:
            k, n = case["matmul"]
            a, w = (x.astype(np.float64) for x in args)
            bound = (k + n) * float(np.finfo(np.float32).eps) * (np.abs(a) @ np.abs(w))
            diff = np.abs(g.astype(np.float64) - want.astype(np.float64))
            assert (diff <= bound).all(), f"{name} {mode} process {p}: max diff {diff.max()}"
            assert not np.array_equal(g, np.zeros_like(g))
        else:
            np.testing.assert_array_equal(g, want, err_msg=f"{name} {mode} process {p}")


def test_replicated_out_takes_each_process_own_value(xla_runs):
    # out_specs P() over values that differ per device (check_vma off): XLA's global array is
    # device 0's value; each hlolab process keeps its own (x + axis_index)
    for mode in MODES:
        _, got, want, args = run_main(xla_runs, "replicated_out_own_value", mode)
        for p, g in enumerate(got):
            np.testing.assert_array_equal(g, args[0] + p)
        np.testing.assert_array_equal(want, args[0])


def test_a_mesh_over_reversed_devices_runs_in_mesh_order(xla_runs):
    # jax 0.10 prints no device_ids for a mesh over reordered devices (the executable's device
    # assignment carries the order): partition p is mesh position p, and the ring shift by one
    # mesh position moves the row blocks down by one block
    text, got, want, args = run_main(xla_runs, "reversed_devices", "sdy")
    assert "device_ids" not in text
    np.testing.assert_array_equal(want, np.roll(args[0], 2, axis=0))
    for g in got:
        np.testing.assert_array_equal(g, want)
