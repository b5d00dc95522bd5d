"""Turn the worked examples of the StableHLO spec into runnable programs.

The spec's "Examples" blocks follow one shape: input values in comments
(``// %lhs: [[1, 2], [3, 4]]``), one op (usually in generic form) whose
signature gives every type, and expected values in comments after it. We
read the values (facts from the spec) at test time and build::

    func.func @main(%lhs: T0, ...) -> (R0, ...) { <the op> ; return %result, ... }
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


@dataclass
class SpecExample:
    op: str  # the spec section, e.g. "pad"
    number: int  # 1-based within the section
    body: str  # op text (non-comment lines)
    inputs: dict[str, str] = field(default_factory=dict)  # name -> value text
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.op}#{self.number}"


def spec_examples(spec_path: Path) -> list[SpecExample]:
    text = spec_path.read_text()
    out: list[SpecExample] = []
    for sec in re.finditer(r"^### (\S+)\n(.*?)(?=^### |\Z)", text, re.S | re.M):
        name, section = sec.group(1), sec.group(2)
        ex = re.search(r"^#### Examples\n(.*)", section, re.S | re.M)
        if not ex:
            continue
        n = 0
        for block in re.findall(r"```mlir\n(.*?)```", ex.group(1), re.S):
            for case in _split_cases(block):
                n += 1
                out.append(_parse_case(name, n, case))
    return out


def _split_cases(block: str) -> list[str]:
    """Blocks holding several examples separate them with blank lines."""
    parts = [p for p in re.split(r"\n\s*\n", block) if p.strip()]
    with_ops = [p for p in parts if any(not ln.strip().startswith("//") and ln.strip()
                                        for ln in p.splitlines())]
    return parts if len(with_ops) == len(parts) and len(parts) > 1 else [block]


def _parse_case(name: str, number: int, case: str) -> SpecExample:
    ex = SpecExample(name, number, "")
    lines = case.splitlines()
    body_lines: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        m = re.match(r"//\s*%\s*([\w.$-]+)\s*[:=]\s*(.*)$", line)
        if m and "@" not in m.group(1):
            value = _strip_comment(m.group(2))
            while _depth(value) > 0 and i + 1 < len(lines) and lines[i + 1].strip().startswith("//"):
                i += 1
                value += " " + _strip_comment(lines[i].strip()[2:])
            target = ex.outputs if body_lines else ex.inputs
            target[m.group(1)] = value
        elif line and not line.startswith("//"):
            body_lines.append(lines[i])
        i += 1
    ex.body = "\n".join(body_lines)
    return ex


def _strip_comment(value: str) -> str:
    """Values may carry a trailing note: ``[0.0, 1.57] // [0.0, pi/2]``."""
    return value.split("//")[0].strip()


def _depth(s: str) -> int:
    return sum(s.count(c) for c in "[(") - sum(s.count(c) for c in "])")


def _balanced(text: str, start: int) -> int:
    """Index just past the bracket group opening at ``start``."""
    stack = []
    i = start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c == "-" and text.startswith("->", i):
            i += 1
        elif c in OPENERS:
            stack.append(OPENERS[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise ValueError("unbalanced")


def split_top(s: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, cur = [], 0, ""
    i = 0
    while i < len(s):
        c = s[i]
        if s.startswith("->", i):
            cur += "->"
            i += 2
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    if cur.strip():
        parts.append(cur.strip())
    return parts


def generic_signatures(body: str) -> list[tuple[list[str], list[str], list[str]]]:
    """(operand names, operand types, result types) of every generic op in ``body``."""
    sigs = []
    for m in re.finditer(r'"[\w.]+"\(', body):
        end = _balanced(body, m.end() - 1)
        operands = [o.strip() for o in split_top(body[m.end():end - 1])]
        j = end
        while j < len(body):  # skip props, regions and attr-dict up to the ':'
            c = body[j]
            if c in "({<":
                j = _balanced(body, j)
                continue
            if c == ":":
                break
            j += 1
        k = body.index("(", j)
        close = _balanced(body, k)
        in_types = split_top(body[k + 1:close - 1])
        rest = body[close:].lstrip()
        if rest.startswith("->"):
            rest = rest[2:].lstrip()
            if rest.startswith("("):
                rclose = _balanced(rest, 0)
                out_types = split_top(rest[1:rclose - 1])
            else:
                out_types = [re.match(r"(tensor<[^\n]*?>|tuple<.*?>|!stablehlo.token)(?=\s|$|,|\))",
                                      rest).group(1)]
        else:
            out_types = []
        sigs.append((operands, in_types, out_types))
    return sigs


def value_types(body: str) -> dict[str, str]:
    """Types of SSA names, read from generic and pretty op signatures."""
    types: dict[str, str] = {}
    for operands, in_types, _ in generic_signatures(body):
        for o, t in zip(operands, in_types):
            types.setdefault(o.lstrip("%"), t)
    for m in re.finditer(r"stablehlo\.\w+\s+((?:%[\w.$-]+,\s*)*%[\w.$-]+)\s*:\s*(tensor<[^>]*>)", body):
        for o in m.group(1).split(","):
            types.setdefault(o.strip().lstrip("%"), m.group(2))
    return types


def result_names_and_types(body: str) -> tuple[list[str], list[str]]:
    """Results of the outermost (first) op of the example."""
    m = re.match(r"\s*((?:%[\w.$-]+\s*,\s*)*%[\w.$-]+)\s*=", body)
    if not m:
        return [], []
    names = [n.strip().lstrip("%") for n in m.group(1).split(",")]
    sigs = generic_signatures(body)
    return names, (sigs[0][2] if sigs else [])


def build_program(ex: SpecExample) -> tuple[str, list[str], list[str]] | None:
    """(module text, input names, result names) or None when not runnable alone."""
    if not ex.body.strip() or not ex.outputs:
        return None
    try:
        types = value_types(ex.body)
        names, rtypes = result_names_and_types(ex.body)
    except (ValueError, AttributeError):  # a signature our small reader does not follow
        return None
    if not names or len(names) != len(rtypes):
        return None
    params = []
    for n in ex.inputs:
        if n not in types or not types[n].startswith("tensor<"):
            return None  # unknown type, or a tuple/token a dense literal cannot spell
        params.append(f"%{n}: {types[n]}")
    outs = [n for n in names if n in ex.outputs]
    if not outs:
        return None
    out_types = [rtypes[names.index(n)] for n in outs]
    text = (f"func.func @main({', '.join(params)}) -> ({', '.join(out_types)}) {{\n{ex.body}\n"
            f"  func.return {', '.join('%' + n for n in outs)} : {', '.join(out_types)}\n}}\n")
    return text, list(ex.inputs), outs
