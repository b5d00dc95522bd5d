"""MLIR text of combiner regions (reduce, reduce_window and scatter bodies) for tests."""

from __future__ import annotations


def combiner_body(kinds: list[str], es: list[str]) -> str:
    """``^bb0(%a0..., %b0...)`` computing output i with ``kinds[i]``:

    - a binary op name ("add", "maximum", ...): ``op(a_i, b_i)`` (recognized, numpy path);
    - "keep" / "replace": returns ``a_i`` / ``b_i`` (recognized);
    - "swapped_<op>": ``op(b_i, a_i)`` (recognized: operands in either order);
    - "affine": ``a_i * b_i + 1`` and "add_plus_zero": ``(a_i + b_i) + 0`` (not
      recognized: they run through the interpreter);
    - "mix": ``a_i + b_{i+1 mod n}`` (every output depends on every input).
    """
    n = len(es)
    args = ", ".join([f"%a{i}: tensor<{e}>" for i, e in enumerate(es)]
                     + [f"%b{i}: tensor<{e}>" for i, e in enumerate(es)])
    lines, rets = [], []
    for i, (k, e) in enumerate(zip(kinds, es, strict=True)):
        t = f"tensor<{e}>"
        if k == "keep":
            rets.append(f"%a{i}")
            continue
        if k == "replace":
            rets.append(f"%b{i}")
            continue
        if k == "affine":
            lines += [f"%m{i} = stablehlo.multiply %a{i}, %b{i} : {t}",
                      f"%one{i} = stablehlo.constant dense<1> : {t}",
                      f"%r{i} = stablehlo.add %m{i}, %one{i} : {t}"]
        elif k == "add_plus_zero":
            lines += [f"%s{i} = stablehlo.add %a{i}, %b{i} : {t}",
                      f"%z{i} = stablehlo.constant dense<0> : {t}",
                      f"%r{i} = stablehlo.add %s{i}, %z{i} : {t}"]
        elif k == "mix":
            lines.append(f"%r{i} = stablehlo.add %a{i}, %b{(i + 1) % n} : {t}")
        elif k.startswith("swapped_"):
            lines.append(f"%r{i} = stablehlo.{k.removeprefix('swapped_')} %b{i}, %a{i} : {t}")
        else:
            lines.append(f"%r{i} = stablehlo.{k} %a{i}, %b{i} : {t}")
        rets.append(f"%r{i}")
    ret_types = ", ".join(f"tensor<{e}>" for e in es)
    inner = "\n      ".join(lines + [f"stablehlo.return {', '.join(rets)} : {ret_types}"])
    return f"^bb0({args}):\n      {inner}"
