"""How the REPL prints a value: its MLIR type as a header, then the elements with
numpy's printing (dtype-aware through ml_dtypes; large tensors elided), in colour
on a terminal."""

from __future__ import annotations

from typing import Any

# numpy print options: past THRESHOLD elements only EDGEITEMS per dim are shown
THRESHOLD = 200
EDGEITEMS = 3
LINE_WIDTH = 100

_RESET = "\x1b[0m"
COLOURS = {"header": "\x1b[36m", "name": "\x1b[1;33m", "error": "\x1b[31m", "dim": "\x1b[2m",
           "ok": "\x1b[32m"}


def paint(text: str, kind: str, colour: bool) -> str:
    return f"{COLOURS[kind]}{text}{_RESET}" if colour and text else text


def type_text(value: Any, type_: Any = None) -> str:
    """``tensor<2x3xf32>`` (the value's declared type when given)."""
    if type_ is not None:
        return str(type_)
    import numpy as np

    if isinstance(value, np.ndarray):
        from hlolab.types import TensorType, element_type_of_dtype

        return str(TensorType(tuple(value.shape), element_type_of_dtype(value.dtype)))
    if isinstance(value, tuple):
        return "tuple<" + ", ".join(type_text(v) for v in value) + ">"
    return type(value).__name__


def elements_text(value: Any, indent: str = "  ") -> str:
    """The elements of a value; a tensor past ``THRESHOLD`` elements is elided."""
    import numpy as np

    if isinstance(value, tuple):
        return "\n".join(f"{indent}#{i}: {type_text(v)}\n{elements_text(v, indent + '  ')}"
                         for i, v in enumerate(value))
    if not isinstance(value, np.ndarray):
        return f"{indent}{value!r}" if value is not None else f"{indent}(token)"
    if value.ndim == 0:
        return indent + _scalar(value)
    body = np.array2string(value, threshold=THRESHOLD, edgeitems=EDGEITEMS, max_line_width=LINE_WIDTH,
                           separator=", " if value.dtype.kind in "c" else " ")
    return "\n".join(indent + line for line in body.splitlines())


def _scalar(value: Any) -> str:
    import numpy as np

    return np.array2string(value.reshape(1), threshold=THRESHOLD)[1:-1].strip()


def format_binding(name: str, value: Any, type_: Any = None, colour: bool = False) -> str:
    """``%x : tensor<2x3xf32>`` then the elements, indented."""
    label = paint("%" + name.lstrip("%"), "name", colour)
    head = f"{label} : {paint(type_text(value, type_), 'header', colour)}"
    return f"{head}\n{elements_text(value)}"
