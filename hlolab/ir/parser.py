"""Parse MLIR text (StableHLO, CHLO, check, interpreter, func) into the IR.

Both spellings of an op parse into the same canonical ``Op``: the generic
form ``"dialect.op"(%a) <{props}> ({regions}) {attrs} : (types) -> types``
and the pretty (custom assembly) form, which ``hlolab.ir.syntax`` describes
op by op. Every malformed input raises ``ParseError`` with file:line:col.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import HloLabError, ParseError, SourceLoc, UnsupportedError, VerificationError
from hlolab.ir import structs, syntax
from hlolab.ir.attrs import (
    ArrayAttr,
    Attr,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    DictAttr,
    EnumAttr,
    FloatAttr,
    IntegerAttr,
    OpaqueAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
)
from hlolab.ir.lexer import (
    AT,
    BANG,
    BARE,
    CARET,
    EOF,
    FLOAT,
    HASH,
    INT,
    PUNCT,
    STRING,
    VALUE,
    Lexer,
    Token,
    blank_comments,
    unescape_string,
)
from hlolab.ir.module import Block, Func, Module, Op, Region, Value
from hlolab.limits import ELEMENT_BUDGET
from hlolab.types import (
    BoundsEncoding,
    ElementType,
    FunctionType,
    OpaqueType,
    QuantizedElementType,
    TensorType,
    TokenType,
    TupleType,
    Type,
    element_type,
    is_element_type_name,
)

# MLIR's `index` type: an integer of the target's pointer width, 64 bits here.
INDEX = ElementType("index", "sint", 64, np.dtype(np.int64))

MAX_NESTING = 256  # nested regions, attributes and types before "nesting too deep"
_SPLIT_MARK = "// -----"
_TYPE_KEYWORDS = frozenset({"tensor", "tuple", "complex", "index", "none", "vector", "memref"})
_DENSE_ARRAY_TYPES = frozenset({"i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"})
_ALIAS_RE = re.compile(r"#[A-Za-z0-9_$.\-]+")
_STRING_RE = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"")
_ENUM_BODY_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z_][A-Za-z0-9_]*)\s*")
# pretty op names that resolve to the func dialect inside a function body
_DEFAULT_DIALECT_OPS = {"return": "func.return", "call": "func.call"}


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def parse_module(text: str, filename: str = "<string>", first_line: int = 1,
                 element_budget: int | None = None) -> Module:
    """Parse one module: ``module [@name] [attributes {...}] {...}`` or bare
    top-level ``func.func`` ops (an implicit module). A dense literal over
    ``element_budget`` elements (default ``hlolab.limits.ELEMENT_BUDGET``) is refused."""
    return _guarded(lambda p: p.parse_top(), text, filename, first_line, element_budget)


def parse_file(path: str, split: bool = False) -> list[Module]:
    """Parse a file; with ``split``, each ``// -----`` chunk is its own module."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ParseError(f"cannot read {path}: {e}") from None
    chunks = split_source(text) if split else [(1, text)]
    return [parse_module(chunk, str(path), line) for line, chunk in chunks]


def split_source(text: str) -> list[tuple[int, str]]:
    """Split like mlir's ``-split-input-file``: at every occurrence of ``// -----``
    (even inside a longer comment). Returns (first line, chunk) pairs; a chunk
    starts on the line of the marker before it."""
    out = []
    line = 1
    for chunk in text.split(_SPLIT_MARK):
        out.append((line, chunk))
        line += chunk.count("\n")
    return out


def parse_attribute(text: str, filename: str = "<args>") -> Attr:
    """Parse one attribute, e.g. ``[dense<1> : tensor<2xi32>, dense<2> : tensor<2xi32>]``."""
    def run(p: Parser) -> Attr:
        a = p.parse_attr()
        p.expect_end("after the attribute")
        return a
    return _guarded(run, text, filename, 1)


def parse_type(text: str, filename: str = "<type>") -> Type:
    """Parse one type, e.g. ``tensor<2x?xf32>`` or ``(tensor<f32>) -> tensor<i1>``."""
    def run(p: Parser) -> Type:
        t = p.parse_type()
        p.expect_end("after the type")
        return t
    return _guarded(run, text, filename, 1)


def _guarded(fn: Any, text: str, filename: str, first_line: int, element_budget: int | None = None) -> Any:
    parser = Parser(text, filename, first_line)
    if element_budget is not None:
        parser.element_budget = element_budget
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        return fn(parser)
    except RecursionError:
        raise parser.error("nesting too deep to parse", parser.tok.start) from None
    finally:
        sys.setrecursionlimit(old)


# --------------------------------------------------------------------------
# the parser
# --------------------------------------------------------------------------
@dataclass
class Use:
    """A value use not yet resolved: ``%x`` or ``%x#1`` at ``offset``."""

    name: str
    offset: int


@dataclass
class PendingOp:
    """What an op's syntax yields before its operands are resolved."""

    name: str
    uses: list[Use] = field(default_factory=list)
    operand_types: list[Type | None] | None = None  # None: take each value's own type
    attributes: dict[str, Attr] = field(default_factory=dict)
    prop_names: set[str] = field(default_factory=set)
    result_types: list[Type] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)


class Parser:
    """Recursive-descent parser over a ``Lexer``; ``tok`` is the current token."""

    def __init__(self, text: str, filename: str = "<string>", first_line: int = 1):
        self.lx = Lexer(text, filename, first_line)
        self.tok: Token = self.lx.lex(0)
        self.last_end = 0
        self.depth = 0
        self.element_budget = ELEMENT_BUDGET  # most elements a dense literal may denote
        # SSA names of the current function: name -> value; one set of names per open scope
        self.values: dict[str, Value] = {}
        self.scopes: list[list[str]] = []
        self.loc_aliases: dict[str, str] = {}
        self.alias_uses: list[tuple[str, int]] = []
        # MLIR aliases defined at the top of a module (tools print them): `!qx = !quant.uniform<…>`
        # and `#a = <attribute>`; a use stands for the definition (the printer writes it out)
        self.type_aliases: dict[str, Type] = {}
        self.attr_aliases: dict[str, Attr] = {}
        self.pending_groups: list[tuple[str, int, int]] = []  # result names of the op being parsed

    # --- token helpers ------------------------------------------------------
    def error(self, message: str, offset: int | None = None) -> ParseError:
        return self.lx.error(message, self.tok.start if offset is None else offset)

    def advance(self) -> Token:
        t = self.tok
        self.last_end = t.end  # where the last consumed token ends (an op's end line)
        self.tok = self.lx.lex(t.end)
        return t

    def peek(self) -> Token:
        """The token after the current one."""
        return self.lx.lex(self.tok.end)

    def at_punct(self, p: str) -> bool:
        return self.tok.kind == PUNCT and self.tok.text == p

    def accept_punct(self, p: str) -> bool:
        if self.tok.kind == PUNCT and self.tok.text == p:
            self.advance()
            return True
        return False

    def expect_punct(self, p: str, context: str = "") -> Token:
        if not self.at_punct(p):
            where = " " + context if context else ""
            raise self.error(f"expected '{p}'{where}, got {self.tok.describe()}")
        return self.advance()

    def at_bare(self, word: str) -> bool:
        return self.tok.kind == BARE and self.tok.text == word

    def accept_bare(self, word: str) -> bool:
        if self.at_bare(word):
            self.advance()
            return True
        return False

    def expect_bare(self, word: str, context: str = "") -> Token:
        if not self.at_bare(word):
            where = " " + context if context else ""
            raise self.error(f"expected '{word}'{where}, got {self.tok.describe()}")
        return self.advance()

    def expect_kind(self, kind: str, what: str) -> Token:
        if self.tok.kind != kind:
            raise self.error(f"expected {what}, got {self.tok.describe()}")
        return self.advance()

    def expect_end(self, context: str) -> None:
        if self.tok.kind != EOF:
            raise self.error(f"unexpected {self.tok.describe()} {context}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"nesting too deep to parse (more than {MAX_NESTING} levels)")

    def leave(self) -> None:
        self.depth -= 1

    def src_loc(self, offset: int) -> SourceLoc:
        return self.lx.loc(offset)

    # --- numbers ------------------------------------------------------------
    def parse_int(self, what: str = "an integer") -> int:
        neg = self.accept_punct("-")
        if self.tok.kind != INT:
            raise self.error(f"expected {what}, got {self.tok.describe()}")
        t = self.advance()
        if neg and t.text.startswith("0x"):
            raise self.error("hexadecimal integers cannot be negative", t.start)
        value = int_value(t.text)
        return -value if neg else value

    def parse_int_list(self, what: str = "an integer") -> list[int]:
        """``[1, 2, 3]`` (possibly empty)."""
        self.expect_punct("[")
        out: list[int] = []
        if self.accept_punct("]"):
            return out
        while True:
            at = self.tok.start
            v = self.parse_int(what)
            if not -2**63 <= v < 2**63:  # every integer list of the pretty syntax is i64
                raise self.error(f"integer {v} is out of range for i64", at)
            out.append(v)
            if self.accept_punct("]"):
                return out
            self.expect_punct(",", "or ']' in the integer list")

    # --- types --------------------------------------------------------------
    def parse_type(self, allow_tf32: bool = False) -> Type:
        self.enter()
        try:
            return self._parse_type(allow_tf32)
        finally:
            self.leave()

    def _parse_type(self, allow_tf32: bool) -> Type:
        t = self.tok
        if t.kind == PUNCT and t.text == "(":
            return self.parse_function_type()
        if t.kind == BANG:
            alias = self._type_alias()
            if alias is not None:
                return alias
            return self._parse_dialect_type()
        if t.kind != BARE:
            raise self.error(f"expected a type, got {t.describe()}")
        word = t.text
        if word == "tensor":
            return self._parse_tensor_type()
        if word == "tuple":
            self.advance()
            self.expect_punct("<", "after 'tuple'")
            types: list[Type] = []
            if not self.accept_punct(">"):
                types = self.parse_type_list()
                self.expect_punct(">", "to close the tuple type")
            return TupleType(tuple(types))
        if word == "complex":
            self.advance()
            self.expect_punct("<", "after 'complex'")
            part = self.expect_kind(BARE, "the element type of the complex type")
            self.expect_punct(">", "to close the complex type")
            return self._element_type(f"complex<{part.text}>", t.start)
        if word == "index":
            self.advance()
            return INDEX
        if word == "none":
            self.advance()
            return OpaqueType("none")
        if word == "tf32" and allow_tf32:
            self.advance()
            return OpaqueType("tf32")
        if is_element_type_name(word):
            self.advance()
            return self._element_type(word, t.start)
        if word in ("vector", "memref"):
            raise self.error(f"{word} types are not supported (StableHLO values are tensors)")
        raise self.error(f"expected a type, got '{word}'")

    def _element_type(self, name: str, offset: int) -> ElementType:
        try:
            return element_type(name)
        except UnsupportedError as e:
            raise self.error(e.message, offset) from None

    def parse_element_type(self) -> Type:
        """The element type of a tensor: a scalar type or a quantized type."""
        t = self.tok
        if t.kind == BANG and t.text == "!quant.uniform":
            return self._parse_quant_type()
        if t.kind == BANG:
            alias = self._type_alias()
            if alias is not None:
                if not isinstance(alias, ElementType | QuantizedElementType):
                    raise self.error(f"type alias {t.text} = {alias} is not a tensor element type", t.start)
                return alias
        if t.kind == BARE and (t.text in ("complex", "index") or is_element_type_name(t.text)):
            return self.parse_type()
        raise self.error(f"expected a tensor element type, got {t.describe()}")

    def _parse_tensor_type(self) -> TensorType:
        self.advance()  # 'tensor'
        lt = self.expect_punct("<", "after 'tensor'")
        dims_tok = self.lx.lex_dims(lt.end)
        self.tok = self.lx.lex(dims_tok.end)
        if self.at_punct("*"):
            raise self.error("unranked tensors are not supported")
        shape = tuple(None if d == "?" else int(d) for d in dims_tok.text.split("x")[:-1])
        elem = self.parse_element_type()
        encoding = None
        if self.accept_punct(","):
            at = self.tok.start
            encoding = self.parse_attr()
            text = str(encoding)
            if text.startswith("#stablehlo.bounds"):  # kept typed: run time checks sizes against it
                bounds = BoundsEncoding.parse(text)
                if bounds is None:
                    raise self.error(f"malformed bounds {text}", at)
                encoding = bounds
        self.expect_punct(">", "to close the tensor type")
        t = TensorType(shape, elem, encoding)  # type: ignore[arg-type]
        problem = t.bounds.problem(shape) if t.bounds is not None else None
        if problem is not None:
            raise self.error(problem, at)
        return t

    def _type_alias(self) -> Type | None:
        """The type a ``!alias`` token stands for (consumed), or None for a dialect type;
        an undefined alias (a name without a dialect prefix) is an error at its use."""
        t = self.tok
        if t.text in self.type_aliases:
            self.advance()
            return self.type_aliases[t.text]
        if "." not in t.text:
            known = ", ".join(sorted(self.type_aliases)) or "none defined"
            raise self.error(f"undefined type alias {t.text} (type aliases: {known})", t.start)
        return None

    def _parse_dialect_type(self) -> Type:
        t = self.tok
        if t.text == "!stablehlo.token":
            self.advance()
            return TokenType()
        if t.text == "!quant.uniform":
            return self._parse_quant_type()
        self.advance()
        text = t.text
        if self.at_punct("<") and self.tok.start == t.end:
            body = self.lx.lex_balanced(self.tok.end, "<", ">", f"type {t.text}")
            text += "<" + body.text + ">"
            self.tok = self.lx.lex(body.end)
        return OpaqueType(text)

    def _parse_quant_type(self) -> QuantizedElementType:
        start = self.advance().start  # '!quant.uniform'
        self.expect_punct("<", "after '!quant.uniform'")
        st = self.expect_kind(BARE, "the storage type of the quantized type")
        storage = self._element_type(st.text, st.start)
        if not storage.is_int:
            raise self.error(f"quantized storage type must be an integer type, got {st.text}", st.start)
        smin = smax = None
        if self.accept_punct("<"):
            smin = self.parse_int("the storage minimum")
            self.expect_punct(":", "between the storage minimum and maximum")
            smax = self.parse_int("the storage maximum")
            self.expect_punct(">", "after the storage range")
        self.expect_punct(":", "after the storage type")
        ex = self.expect_kind(BARE, "the expressed type of the quantized type")
        expressed = self._element_type(ex.text, ex.start)
        if not expressed.is_float:
            raise self.error(f"quantized expressed type must be a float type, got {ex.text}", ex.start)
        axis = None
        if self.accept_punct(":"):
            axis = self.parse_int("the quantization axis")
        self.expect_punct(",", "before the quantization parameters")
        params = []
        if self.accept_punct("{"):
            while True:
                params.append(self._parse_quant_param())
                if self.accept_punct("}"):
                    break
                self.expect_punct(",", "or '}' in the quantization parameters")
        else:
            params.append(self._parse_quant_param())
        self.expect_punct(">", "to close the quantized type")
        if axis is None and len(params) != 1:
            raise self.error("a per-tensor quantized type has one scale", start)
        texts, scales, zps = zip(*params, strict=True)
        return QuantizedElementType(storage, expressed, tuple(scales), tuple(zps), axis, smin, smax,
                                    tuple(texts))

    def _parse_quant_param(self) -> tuple[str, float, int]:
        neg = self.accept_punct("-")
        if self.tok.kind not in (FLOAT, INT):
            raise self.error(f"expected a quantization scale, got {self.tok.describe()}")
        t = self.advance()
        text = ("-" if neg else "") + t.text
        scale = float(int_value(text)) if t.kind == INT else float(text)
        zp = 0
        if self.accept_punct(":"):
            zp = self.parse_int("a zero point")
        return text, scale, zp

    def parse_type_list(self) -> list[Type]:
        """``t1, t2, ...`` (at least one type)."""
        types = [self.parse_type()]
        while self.accept_punct(","):
            types.append(self.parse_type())
        return types

    def parse_function_type(self) -> FunctionType:
        """``(t1, t2) -> t3`` or ``(...) -> (t3, t4)``."""
        self.expect_punct("(")
        ins: list[Type] = []
        if not self.accept_punct(")"):
            ins = self.parse_type_list()
            self.expect_punct(")", "to close the input types")
        self.expect_punct("->", "in the function type")
        return FunctionType(tuple(ins), tuple(self.parse_result_types()))

    def parse_result_types(self) -> list[Type]:
        """The result side of a function type: ``t`` or ``(t1, ...)``."""
        if self.at_punct("(") and self._paren_is_type_list():
            self.advance()
            if self.accept_punct(")"):
                return []
            outs = self.parse_type_list()
            self.expect_punct(")", "to close the result types")
            return outs
        return [self.parse_type()]

    def _paren_is_type_list(self) -> bool:
        """At '(': a parenthesized result list, not a function type as the result."""
        depth = 0
        pos = self.tok.start
        tok = self.tok
        while tok.kind != EOF:
            if tok.kind == PUNCT and tok.text == "(":
                depth += 1
            elif tok.kind == PUNCT and tok.text == ")":
                depth -= 1
                if depth == 0:
                    return not self.lx.lex(tok.end).is_punct("->")
            pos = tok.end
            tok = self.lx.lex(pos)
        return True

    # --- attributes ---------------------------------------------------------
    def parse_attr(self, typed: bool = True) -> Attr:
        """One attribute value; ``typed`` allows a trailing ``: type`` on numbers."""
        self.enter()
        try:
            return self._parse_attr(typed)
        finally:
            self.leave()

    def _parse_attr(self, typed: bool) -> Attr:
        t = self.tok
        k = t.kind
        if k == INT or k == FLOAT or (k == PUNCT and t.text == "-"):
            return self._parse_number_attr(typed)
        if k == STRING:
            self.advance()
            return StringAttr(self.string_value(t))
        if k == AT:
            return self.parse_symbol_ref()
        if k == HASH:
            return self._parse_hash_attr()
        if k == PUNCT:
            if t.text == "[":
                return self._parse_array_attr()
            if t.text == "{":
                return DictAttr(tuple(self.parse_attr_dict().items()))
            if t.text == "(":
                return TypeAttr(self.parse_type())
        if k == BARE:
            w = t.text
            if w in ("true", "false"):
                self.advance()
                return BoolAttr(w == "true")
            if w == "unit":
                self.advance()
                return UnitAttr()
            if w == "dense":
                return self._parse_dense_attr()
            if w == "array":
                return self._parse_dense_array_attr()
            if w == "dense_resource":
                raise self.error("dense_resource blobs are not supported")
            if w == "sparse":
                raise self.error("sparse elements attributes are not supported")
            if w in ("affine_map", "affine_set", "strided", "distinct"):
                return self._opaque_after_keyword()
            if w in _TYPE_KEYWORDS or is_element_type_name(w):
                return TypeAttr(self.parse_type())
        if k == BANG:
            return TypeAttr(self.parse_type())
        raise self.error(f"expected an attribute value, got {t.describe()}")

    def string_value(self, t: Token) -> str:
        try:
            return unescape_string(t.text)
        except ValueError as e:
            raise self.error(str(e), t.start) from None

    def _parse_number_attr(self, typed: bool) -> Attr:
        start = self.tok.start
        neg = self.accept_punct("-")
        t = self.tok
        if t.kind not in (INT, FLOAT):
            raise self.error(f"expected a number after '-', got {t.describe()}")
        self.advance()
        text = ("-" if neg else "") + t.text
        ty: Type | None = None
        if typed and self.at_punct(":"):
            self.advance()
            ty_off = self.tok.start
            ty = self.parse_type()
            if not isinstance(ty, ElementType):
                raise self.error(f"a number attribute needs a scalar type, got {ty}", ty_off)
        if t.kind == FLOAT:
            if ty is not None and not ty.is_float:
                raise self.error(f"float literal {text} cannot have type {ty}", start)
            return FloatAttr(float(text), ty, text)
        hexa = t.text.startswith("0x")
        if neg and hexa:
            raise self.error("hexadecimal integers cannot be negative", start)
        value = int_value(text)
        if ty is not None and ty.is_float:
            if not hexa:
                raise self.error(f"integer literal {text} cannot have float type {ty}; write {text}.0",
                                 start)
            return FloatAttr(_float_from_bits(value, ty), ty, t.text)
        if ty is not None and ty.is_complex:
            raise self.error(f"integer literal {text} cannot have complex type {ty}", start)
        if ty is not None and ty.kind in ("bool", "sint", "uint"):
            value = self._fit_integer(value, ty, start)
        return IntegerAttr(value, ty)

    def _fit_integer(self, value: int, ty: ElementType, at: int) -> int:
        """Check ``value`` fits ``ty``; a signless ``iN`` takes N-bit patterns
        (``255 : i8`` is -1), as in MLIR."""
        bits = ty.bits
        if ty.kind == "uint":
            if value < 0:
                raise self.error(f"negative integer literal {value} is not valid for unsigned type {ty}", at)
            lo, hi = 0, (1 << bits) - 1
        elif ty.name.startswith("si"):
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        else:
            lo, hi = -(1 << (bits - 1)), (1 << bits) - 1
        if not lo <= value <= hi:
            raise self.error(f"integer constant {value} is out of range for type {ty}", at)
        if ty.kind != "uint" and value >= 1 << (bits - 1) and bits > 1:
            value -= 1 << bits
        return value

    def parse_symbol_ref(self) -> SymbolRefAttr:
        names = [self._symbol_name(self.expect_kind(AT, "a symbol (@name)"))]
        while self.at_punct("::"):
            self.advance()
            names.append(self._symbol_name(self.expect_kind(AT, "a symbol after '::'")))
        return SymbolRefAttr(tuple(names))

    def _symbol_name(self, t: Token) -> str:
        body = t.text[1:]
        if body.startswith('"'):
            try:
                return unescape_string(body)
            except ValueError as e:
                raise self.error(str(e), t.start) from None
        return body

    def _parse_array_attr(self) -> ArrayAttr:
        self.expect_punct("[")
        items: list[Attr] = []
        if self.accept_punct("]"):
            return ArrayAttr(())
        while True:
            items.append(self.parse_attr())
            if self.accept_punct("]"):
                return ArrayAttr(tuple(items))
            self.expect_punct(",", "or ']' in the array")

    def parse_attr_dict(self) -> dict[str, Attr]:
        """``{a = 1, b, "c" = [2]}`` (insertion-ordered)."""
        self.expect_punct("{")
        out: dict[str, Attr] = {}
        if self.accept_punct("}"):
            return out
        while True:
            kt = self.tok
            if kt.kind == BARE:
                key = kt.text
            elif kt.kind == STRING:
                key = self.string_value(kt)
            else:
                raise self.error(f"expected an attribute name, got {kt.describe()}")
            self.advance()
            if key in out:
                raise self.error(f"duplicate attribute '{key}'", kt.start)
            out[key] = self.parse_attr() if self.accept_punct("=") else UnitAttr()
            if self.accept_punct("}"):
                return out
            self.expect_punct(",", "or '}' in the attribute dictionary")

    def _parse_dense_attr(self) -> DenseElementsAttr:
        kw = self.advance()  # 'dense'
        if not (self.at_punct("<") and self.tok.start == kw.end):
            raise self.error(f"expected '<' after 'dense', got {self.tok.describe()}")
        body = self.lx.lex_balanced(self.tok.end, "<", ">", "dense literal")
        self.tok = self.lx.lex(body.end)
        self.expect_punct(":", "and the type after the dense literal")
        ty_off = self.tok.start
        ty = self.parse_type()
        if not isinstance(ty, TensorType):
            raise self.error(f"a dense literal needs a tensor type, got {ty}", ty_off)
        return DenseElementsAttr(ty, self._dense_array(body, ty, kw.start))

    def _dense_array(self, body: Token, ty: TensorType, at: int) -> np.ndarray:
        from hlolab.ir import dense  # written alongside: parse/format the literal body

        try:
            return dense.parse_dense(blank_comments(body.text), ty, self.element_budget)
        except dense.DenseSyntaxError as e:
            offset = int(getattr(e, "offset", 0) or 0)
            message = getattr(e, "message", None) or (e.args[0] if e.args else "invalid dense literal")
            raise self.error(str(message), body.start + max(0, min(offset, len(body.text)))) from None
        except HloLabError as e:
            raise self.error(e.message, at) from None
        except RecursionError:
            raise self.error("dense literal nested too deeply", at) from None
        except Exception as e:  # dense.py must never leak a bare exception to the user
            raise self.error(f"invalid dense literal: {e}", at) from None

    def _parse_dense_array_attr(self) -> DenseArrayAttr:
        self.advance()  # 'array'
        self.expect_punct("<", "after 'array'")
        et = self.expect_kind(BARE, "the element type of the array")
        if et.text not in _DENSE_ARRAY_TYPES:
            raise self.error(f"unsupported dense array element type '{et.text}'", et.start)
        values: list[Any] = []
        if self.accept_punct(":"):
            while True:
                values.append(self._dense_array_value(et.text))
                if not self.accept_punct(","):
                    break
        self.expect_punct(">", "to close the array")
        return DenseArrayAttr(et.text, tuple(values))

    def _dense_array_value(self, elem: str) -> Any:
        t = self.tok
        if elem == "i1":
            if t.kind == BARE and t.text in ("true", "false"):
                self.advance()
                return t.text == "true"
            v = self.parse_int("true, false, 0 or 1")
            if v not in (0, 1):
                raise self.error(f"i1 array values must be true or false, got {v}", t.start)
            return bool(v)
        if elem.startswith("i"):
            return self._fit_integer(self.parse_int(), element_type(elem), t.start)
        neg = self.accept_punct("-")
        if self.tok.kind not in (INT, FLOAT):
            raise self.error(f"expected a number, got {self.tok.describe()}")
        t = self.advance()
        text = ("-" if neg else "") + t.text
        return float(int_value(text)) if t.kind == INT else float(text)

    def _opaque_after_keyword(self) -> OpaqueAttr:
        kw = self.advance()
        if not self.at_punct("<"):
            raise self.error(f"expected '<' after '{kw.text}'")
        body = self.lx.lex_balanced(self.tok.end, "<", ">", kw.text)
        self.tok = self.lx.lex(body.end)
        return OpaqueAttr(f"{kw.text}<{body.text}>")

    def _parse_hash_attr(self) -> Attr:
        t = self.advance()
        name = t.text[1:]
        if t.text in self.attr_aliases:
            return self.attr_aliases[t.text]
        if not (self.at_punct("<") and self.tok.start == t.end):
            known = ", ".join(sorted(self.attr_aliases)) or "none defined"
            raise self.error(f"undefined attribute alias {t.text} (attribute aliases: {known})", t.start)
        if name in structs.SCHEMAS:
            return self.parse_struct(structs.SCHEMAS[name])
        if name == "stablehlo.conv":
            self.advance()  # '<'
            dims = self.parse_conv_dims()
            self.expect_punct(">", "to close #stablehlo.conv")
            return dims
        body = self.lx.lex_balanced(self.tok.end, "<", ">", f"attribute {t.text}")
        self.tok = self.lx.lex(body.end)
        if "." not in name:
            m = _ENUM_BODY_RE.fullmatch(body.text)
            if m:
                return EnumAttr(name, m.group(1), m.group(2))
        return OpaqueAttr(f"{t.text}<{body.text}>")

    def parse_struct(self, schema: structs.StructSchema) -> Attr:
        open_ = self.expect_punct("<")
        values: dict[str, Any] = {}
        if not self.at_punct(">"):
            while True:
                ft = self.expect_kind(BARE, f"a field name of #{schema.name}")
                kind = schema.kind(ft.text)
                if kind is None:
                    raise self.error(f"unknown field '{ft.text}' in #{schema.name}; expected one of "
                                     + ", ".join(schema.field_names), ft.start)
                if ft.text in values:
                    raise self.error(f"duplicate field '{ft.text}' in #{schema.name}", ft.start)
                self.expect_punct("=", f"after '{ft.text}'")
                values[ft.text] = self._parse_struct_value(kind)
                if not self.accept_punct(","):
                    break
        self.expect_punct(">", f"to close #{schema.name}")
        if schema.style == structs.ALL:
            missing = [n for n in schema.field_names if n not in values]
            if missing:
                raise self.error(f"#{schema.name} lacks field '{missing[0]}'", open_.start)
        return structs.make_struct(schema, values)

    def _parse_struct_value(self, kind: str) -> Any:
        if kind == structs.INTS:
            return tuple(self.parse_int_list())
        if kind == structs.INT:
            return self.parse_int()
        if kind == structs.BOOL:
            t = self.tok
            if t.kind == BARE and t.text in ("true", "false"):
                self.advance()
                return t.text == "true"
            raise self.error(f"expected true or false, got {t.describe()}")
        if kind == structs.TYPE:
            return self.parse_type(allow_tf32=True)
        if kind == structs.BOUNDS:
            self.expect_punct("[")
            out: list[Any] = []
            if not self.accept_punct("]"):
                while True:
                    out.append("?" if self.accept_punct("?") else self.parse_int())
                    if self.accept_punct("]"):
                        break
                    self.expect_punct(",", "or ']' in the bounds")
            return tuple(out)
        return self.parse_attr()

    def parse_conv_dims(self) -> structs.ConvDimsAttr:
        """``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`` or ``raw input_batch_dimension = 0, ...``."""
        start = self.tok.start
        if self.accept_bare("raw"):
            values: dict[str, Any] = {}
            while True:
                ft = self.expect_kind(BARE, "a field of the raw convolution dimension numbers")
                if ft.text not in structs.CONV_FIELDS:
                    raise self.error(f"unknown convolution dimension field '{ft.text}'", ft.start)
                if ft.text in values:
                    raise self.error(f"duplicate field '{ft.text}'", ft.start)
                self.expect_punct("=", f"after '{ft.text}'")
                values[ft.text] = (tuple(self.parse_int_list()) if ft.text.endswith("dimensions")
                                   else self.parse_int())
                if not self.accept_punct(","):
                    break
            missing = [n for n in structs.CONV_FIELDS if n not in values]
            if missing:
                raise self.error(f"raw convolution dimension numbers lack '{missing[0]}'", start)
            return structs.ConvDimsAttr("stablehlo.conv",
                                        tuple((n, values[n]) for n in structs.CONV_FIELDS), raw=True)
        groups = [self._conv_labels()]
        self.expect_bare("x", "between the input and kernel dimensions")
        groups.append(self._conv_labels())
        self.expect_punct("->", "before the output dimensions")
        groups.append(self._conv_labels())
        result = structs.conv_from_compact(*groups)
        if isinstance(result, str):
            raise self.error(result, start)
        return result

    def _conv_labels(self) -> list[str]:
        self.expect_punct("[", "to open convolution dimension labels")
        labels: list[str] = []
        while True:
            t = self.tok
            if t.kind == INT and not t.text.startswith("0x"):
                labels.append(t.text)
            elif t.kind == BARE and t.text in ("b", "f", "i", "o"):
                labels.append(t.text)
            else:
                raise self.error(f"expected a dimension label (b, f, i, o or a number), got {t.describe()}")
            self.advance()
            if self.accept_punct("]"):
                return labels
            self.expect_punct(",", "or ']' in the dimension labels")

    # --- locations ----------------------------------------------------------
    def parse_optional_loc(self) -> str | None:
        """A trailing ``loc(...)``: its exact text, or None."""
        if not (self.tok.kind == BARE and self.tok.text == "loc"):
            return None
        self.advance()
        if not self.at_punct("("):
            raise self.error(f"expected '(' after 'loc', got {self.tok.describe()}")
        body = self.lx.lex_balanced(self.tok.end, "(", ")", "location")
        self.tok = self.lx.lex(body.end)
        text = f"loc({body.text})"
        stripped = _STRING_RE.sub(lambda m: " " * len(m.group()), body.text)
        for m in _ALIAS_RE.finditer(stripped):
            self.alias_uses.append((m.group(), body.start + m.start()))
        return text

    # --- SSA values ---------------------------------------------------------
    def push_scope(self) -> None:
        self.scopes.append([])

    def pop_scope(self) -> None:
        for name in self.scopes.pop():
            self.values.pop(name, None)

    def define(self, key: str, value: Value, offset: int) -> None:
        if key in self.values:
            raise self.error(f"redefinition of SSA value {key}", offset)
        self.values[key] = value
        self.scopes[-1].append(key)

    def parse_value_use(self) -> Use:
        t = self.expect_kind(VALUE, "an SSA value (%name)")
        return Use(t.text, t.start)

    def lookup(self, use: Use) -> Value:
        v = self.values.get(use.name)
        if v is None:
            raise self.error(f"use of undefined value {use.name}", use.offset)
        return v

    def new_block_arg(self, name: str, type_: Type, offset: int, owner: Block, index: int) -> Value:
        if "#" in name:
            raise self.error(f"block argument {name} cannot have a result number", offset)
        v = Value(name, type_, owner, index)
        self.define(name, v, offset)
        return v

    # --- regions and blocks -------------------------------------------------
    def parse_region(self, entry_args: list[tuple[str, Type, str | None, int]] | None = None) -> Region:
        """``{ [^bb0(%a: t, ...):] ops ... }``; ``entry_args`` (name, type, loc,
        offset) are the entry block's arguments when the op's syntax names them."""
        self.enter()
        self.expect_punct("{", "to open a region")
        self.push_scope()
        try:
            region = Region()
            if entry_args is not None:
                block = Block()
                self._add_args(block, entry_args)
                region.blocks.append(block)
                if self.tok.kind == CARET and self.peek().is_punct("("):
                    raise self.error("the entry block arguments are already named by the op syntax")
                if self.tok.kind == CARET:
                    block.label = self.advance().text
                    self.expect_punct(":", "after the block label")
                self._parse_block_ops(block)
            elif not self.at_punct("}"):
                block = self._parse_block_header(region) if self.tok.kind == CARET else Block()
                region.blocks.append(block)
                self._parse_block_ops(block)
            while self.tok.kind == CARET:
                block = self._parse_block_header(region)
                region.blocks.append(block)
                self._parse_block_ops(block)
            self.expect_punct("}", "to close the region")
            return region
        finally:
            self.pop_scope()
            self.leave()

    def _add_args(self, block: Block, args: list[tuple[str, Type, str | None, int]]) -> None:
        for i, (name, ty, loc, offset) in enumerate(args):
            block.args.append(self.new_block_arg(name, ty, offset, block, i))
            block.arg_locs.append(loc)

    def _parse_block_header(self, region: Region) -> Block:
        label = self.advance()  # ^bb
        if any(b.label == label.text for b in region.blocks):
            raise self.error(f"redefinition of block {label.text}", label.start)
        block = Block(label=label.text)
        if self.accept_punct("("):
            args = []
            if not self.at_punct(")"):
                while True:
                    use = self.parse_value_use()
                    self.expect_punct(":", f"and the type of block argument {use.name}")
                    ty = self.parse_type()
                    args.append((use.name, ty, self.parse_optional_loc(), use.offset))
                    if not self.accept_punct(","):
                        break
            self.expect_punct(")", "to close the block arguments")
            self._add_args(block, args)
        self.expect_punct(":", "after the block label")
        return block

    def _parse_block_ops(self, block: Block) -> None:
        while not (self.at_punct("}") or self.tok.kind in (CARET, EOF)):
            op = self.parse_statement()
            op.parent = block
            block.ops.append(op)

    # --- operations ---------------------------------------------------------
    def parse_statement(self) -> Op:
        """``[%r, %s:2 =] op [loc(...)]``."""
        start = self.tok.start
        groups: list[tuple[str, int, int]] = []  # (name, count, offset)
        if self.tok.kind == VALUE:
            while True:
                t = self.expect_kind(VALUE, "a result name")
                if "#" in t.text:
                    raise self.error(f"result name {t.text} cannot have a result number", t.start)
                count = 1
                if self.accept_punct(":"):
                    count = self.parse_int("a result count")
                    if count < 1:
                        raise self.error(f"result count must be at least 1, got {count}", t.start)
                groups.append((t.text, count, t.start))
                if not self.accept_punct(","):
                    break
            self.expect_punct("=", "after the result names")
        op_tok = self.tok
        self.pending_groups = groups
        pending = self.parse_op_body()
        mlir_loc = self.parse_optional_loc()
        op = self.finish_op(pending, groups, op_tok.start)
        op.loc = self.src_loc(start)
        op.end_line = self.src_loc(max(start, self.last_end - 1)).line
        op.mlir_loc = mlir_loc
        return op

    def parse_op_body(self) -> PendingOp:
        t = self.tok
        if t.kind == STRING:
            return self.parse_generic_op()
        if t.kind == BARE:
            name = _DEFAULT_DIALECT_OPS.get(t.text, t.text)
            fmt = syntax.lookup(name)
            if fmt is None:
                raise self.error(f"unknown operation '{t.text}' in custom form; ops hlolab does not "
                                 f"know must be written in the generic form \"{t.text}\"(...)")
            self.advance()
            return fmt.parse(self, name)
        raise self.error(f"expected an operation, got {t.describe()}")

    def parse_generic_op(self) -> PendingOp:
        t = self.advance()
        name = self.string_value(t)
        if not name:
            raise self.error("empty operation name", t.start)
        pending = PendingOp(name)
        self.expect_punct("(", f"to open the operands of \"{name}\"")
        if not self.at_punct(")"):
            while True:
                pending.uses.append(self.parse_value_use())
                if not self.accept_punct(","):
                    break
        self.expect_punct(")", "to close the operand list")
        if self.at_punct("["):
            raise self.error("successor blocks (branches) are not supported")
        if self.at_punct("<"):
            self.advance()
            props = self.parse_attr_dict()
            self.expect_punct(">", "to close the properties")
            pending.attributes.update(props)
            pending.prop_names.update(props)
        if self.at_punct("(") and self.peek().is_punct("{"):
            self.advance()
            while True:
                pending.regions.append(self.parse_region())
                if not self.accept_punct(","):
                    break
            self.expect_punct(")", "to close the region list")
        if self.at_punct("{"):
            at = self.tok.start
            attrs = self.parse_attr_dict()
            for k in attrs:
                if k in pending.attributes:
                    raise self.error(f"attribute '{k}' given both as a property and an attribute", at)
            pending.attributes.update(attrs)
        self.expect_punct(":", f"and the type of \"{name}\"")
        at = self.tok.start
        ft = self.parse_type()
        if not isinstance(ft, FunctionType):
            raise self.error(f"expected a function type (inputs) -> results, got {ft}", at)
        if len(ft.inputs) != len(pending.uses):
            raise self.error(f"\"{name}\" has {len(pending.uses)} operands but its type lists "
                             f"{len(ft.inputs)} operand types", at)
        pending.operand_types = list(ft.inputs)
        pending.result_types = list(ft.results)
        return pending

    def finish_op(self, pending: PendingOp, groups: list[tuple[str, int, int]], offset: int) -> Op:
        """Resolve operands (checking their types) and define the results."""
        operands = []
        types = pending.operand_types
        for i, use in enumerate(pending.uses):
            v = self.lookup(use)
            want = types[i] if types is not None and i < len(types) else None
            if want is not None and want != v.type:
                raise self.error(f"type mismatch for {use.name}: {pending.name} expects {want} but "
                                 f"{use.name} has type {v.type}", use.offset)
            operands.append(v)
        n_results = sum(c for _, c, _ in groups)
        if n_results != len(pending.result_types):
            where = groups[0][2] if groups else offset
            raise self.error(f"operation {pending.name} has {len(pending.result_types)} results but "
                             f"{n_results} {'is' if n_results == 1 else 'are'} named", where)
        attributes = dict(pending.attributes)
        fmt = syntax.lookup(pending.name)
        if fmt is not None:
            for k, default in fmt.defaults.items():
                if k in attributes and attributes[k] == default:
                    del attributes[k]
        op = Op(pending.name, operands=operands, attributes=attributes,
                regions=pending.regions, prop_names=set(pending.prop_names) & set(attributes))
        it = iter(pending.result_types)
        index = 0
        for name, count, off in groups:
            op.result_groups.append((name, count))
            for j in range(count):
                vname = name if count == 1 else f"{name}#{j}"
                v = Value(vname, next(it), op, index)
                index += 1
                op.results.append(v)
                self.define(vname, v, off)
                if count == 1:
                    self.values[f"{name}#0"] = v
                    self.scopes[-1].append(f"{name}#0")
        return op

    # --- functions and modules ----------------------------------------------
    def parse_top(self) -> Module:
        module: Module | None = None
        funcs: list[Func] = []
        first_func_off = None
        while self.tok.kind != EOF:
            t = self.tok
            if t.kind == HASH and self.peek().is_punct("="):
                self._parse_alias_def()
            elif t.kind == BANG and self.peek().is_punct("="):
                self._parse_type_alias_def()
            elif t.kind == BARE and t.text in ("module", "builtin.module"):
                if module is not None or funcs:
                    raise self.error("expected one module per chunk (split files with // -----)")
                module = self.parse_module_op()
            elif t.kind == STRING and t.text == '"builtin.module"':
                if module is not None or funcs:
                    raise self.error("expected one module per chunk (split files with // -----)")
                module = self.parse_generic_module()
            elif self._at_func():
                if module is not None:
                    raise self.error("a function after the module: expected one module per chunk")
                first_func_off = t.start if first_func_off is None else first_func_off
                funcs.append(self.parse_func_any())
            else:
                raise self.error(f"expected 'func.func' or 'module' at the top level, got {t.describe()}")
        if module is None:
            module = Module(funcs=funcs, implicit=True)
            module.loc = self.src_loc(first_func_off if first_func_off is not None else 0)
        self._check_unique_funcs(module)
        self._check_aliases()
        module.source_name = self.lx.filename
        module.first_line = self.lx.first_line
        module.loc_aliases = dict(self.loc_aliases)
        return module

    def _at_func(self) -> bool:
        t = self.tok
        return (t.kind == BARE and t.text == "func.func") or (t.kind == STRING and t.text == '"func.func"')

    def parse_func_any(self) -> Func:
        return self.parse_func() if self.tok.kind == BARE else self.parse_generic_func()

    def _parse_alias_def(self) -> None:
        """``#name = loc(...)`` (a location alias) or ``#name = <attribute>``."""
        t = self.advance()
        self.expect_punct("=")
        if t.text in self.loc_aliases or t.text in self.attr_aliases:
            raise self.error(f"redefinition of alias {t.text}", t.start)
        if self.at_bare("loc"):
            self.loc_aliases[t.text] = self.parse_optional_loc() or ""
            return
        self.attr_aliases[t.text] = self.parse_attr()

    def _parse_type_alias_def(self) -> None:
        """``!name = <type>`` at the top of a module."""
        t = self.advance()
        self.expect_punct("=")
        if t.text in self.type_aliases:
            raise self.error(f"redefinition of type alias {t.text}", t.start)
        if "." in t.text:
            raise self.error(f"a type alias name has no dialect prefix: {t.text} looks like a dialect "
                             "type", t.start)
        self.type_aliases[t.text] = self.parse_type()

    def _check_aliases(self) -> None:
        for name, offset in self.alias_uses:
            if name not in self.loc_aliases:
                raise self.error(f"undefined location alias {name}", offset)

    def _check_unique_funcs(self, module: Module) -> None:
        seen: set[str] = set()
        for f in module.funcs:
            if f.name in seen:
                raise ParseError(f"redefinition of function @{f.name}", f.loc)
            seen.add(f.name)

    def parse_module_op(self) -> Module:
        start = self.advance().start  # 'module'
        module = Module()
        if self.tok.kind == AT:
            module.name = self._symbol_name(self.advance())
        if self.accept_bare("attributes"):
            module.attributes = self.parse_attr_dict()
        self.expect_punct("{", "to open the module body")
        while not self.at_punct("}"):
            if self.tok.kind == EOF:
                raise self.error("expected '}' to close the module")
            if self.at_bare("sdy.mesh"):  # a Shardy mesh (jax's sharded programs)
                from hlolab.ir.syntax_sdy import parse_mesh

                module.symbols.append(parse_mesh(self))
                continue
            if not self._at_func():
                raise self.error(f"expected 'func.func' or 'sdy.mesh' in the module body, got "
                                 f"{self.tok.describe()}")
            module.funcs.append(self.parse_func_any())
        self.advance()
        module.mlir_loc = self.parse_optional_loc()
        module.loc = self.src_loc(start)
        return module

    def parse_generic_module(self) -> Module:
        start = self.advance().start
        self.expect_punct("(")
        self.expect_punct(")", "(a module has no operands)")
        module = Module()
        attrs: dict[str, Attr] = {}
        if self.accept_punct("<"):
            attrs.update(self.parse_attr_dict())
            self.expect_punct(">")
        self.expect_punct("(", "to open the module region")
        self.expect_punct("{", "to open the module region")
        if self.tok.kind == CARET:
            self.advance()
            self.expect_punct(":", "after the block label")
        while not self.at_punct("}"):
            if not self._at_func():
                raise self.error(f"expected a function in the module, got {self.tok.describe()}")
            module.funcs.append(self.parse_func_any())
        self.advance()
        self.expect_punct(")", "to close the module region")
        if self.at_punct("{"):
            attrs.update(self.parse_attr_dict())
        self.expect_punct(":")
        ft = self.parse_type()
        if ft != FunctionType((), ()):
            raise self.error(f"a module has type () -> (), got {ft}")
        name = attrs.pop("sym_name", None)
        if name is not None:
            if not isinstance(name, StringAttr):
                raise self.error("sym_name of a module must be a string", start)
            module.name = name.value
        module.attributes = attrs
        module.mlir_loc = self.parse_optional_loc()
        module.loc = self.src_loc(start)
        return module

    def parse_func(self) -> Func:
        start = self.advance().start  # 'func.func'
        visibility = None
        if self.tok.kind == BARE and self.tok.text in ("public", "private", "nested"):
            visibility = self.advance().text
        name = self._symbol_name(self.expect_kind(AT, "the function name (@name)"))
        self.values = {}
        self.scopes = [[]]
        self.expect_punct("(", "to open the function arguments")
        args: list[tuple[str, Type, str | None, int]] = []
        arg_attrs: list[dict[str, Attr]] = []
        declaration_style = False
        if not self.at_punct(")"):
            while True:
                at = self.tok.start
                if self.tok.kind == VALUE:
                    use = self.parse_value_use()
                    self.expect_punct(":", f"and the type of argument {use.name}")
                    aname = use.name
                else:
                    declaration_style = True
                    aname = f"%arg{len(args)}"
                ty = self.parse_type()
                arg_attrs.append(self.parse_attr_dict() if self.at_punct("{") else {})
                args.append((aname, ty, self.parse_optional_loc(), at))
                if not self.accept_punct(","):
                    break
        self.expect_punct(")", "to close the function arguments")
        result_types: list[Type] = []
        result_attrs: list[dict[str, Attr]] = []
        if self.accept_punct("->"):
            if self.at_punct("(") and self._paren_is_type_list():
                self.advance()
                if not self.at_punct(")"):
                    while True:
                        result_types.append(self.parse_type())
                        result_attrs.append(self.parse_attr_dict() if self.at_punct("{") else {})
                        if not self.accept_punct(","):
                            break
                self.expect_punct(")", "to close the function results")
            else:
                result_types.append(self.parse_type())
                result_attrs.append({})
        attributes: dict[str, Attr] = {}
        if self.accept_bare("attributes"):
            attributes = self.parse_attr_dict()
        func = Func(name, [], result_types, None, visibility, _norm_attrs(arg_attrs),
                    _norm_attrs(result_attrs), attributes)
        if self.at_punct("{"):
            if declaration_style:
                raise self.error("a function with a body must name its arguments (%name: type)", start)
            func.body = self.parse_region(entry_args=args)
            func.args = list(func.body.blocks[0].args)
        else:
            func.args = [Value(n, t, None, i) for i, (n, t, _, _) in enumerate(args)]
        func.mlir_loc = self.parse_optional_loc()
        func.loc = self.src_loc(start)
        _check_returns(func)
        return func

    def parse_generic_func(self) -> Func:
        start = self.tok.start
        self.values = {}
        self.scopes = [[]]
        pending = self.parse_generic_op()
        mlir_loc = self.parse_optional_loc()
        if pending.uses or pending.result_types:
            raise self.error("\"func.func\" takes no operands and has no results", start)
        attrs = dict(pending.attributes)
        name = attrs.pop("sym_name", None)
        ftype = attrs.pop("function_type", None)
        if not isinstance(name, StringAttr):
            raise self.error("\"func.func\" needs sym_name = \"name\"", start)
        if not (isinstance(ftype, TypeAttr) and isinstance(ftype.type, FunctionType)):
            raise self.error("\"func.func\" needs function_type = (inputs) -> results", start)
        vis = attrs.pop("sym_visibility", None)
        arg_attrs = _dict_list(attrs.pop("arg_attrs", None))
        res_attrs = _dict_list(attrs.pop("res_attrs", None))
        body = pending.regions[0] if pending.regions else None
        if len(pending.regions) > 1:
            raise self.error("\"func.func\" has one region", start)
        func = Func(name.value, [], list(ftype.type.results), body,
                    vis.value if isinstance(vis, StringAttr) else None,
                    _norm_attrs(arg_attrs), _norm_attrs(res_attrs), attrs)
        if body is not None and body.blocks:
            func.args = list(body.blocks[0].args)
            if [a.type for a in func.args] != list(ftype.type.inputs):
                raise self.error(f"the entry block arguments of @{name.value} do not match its "
                                 f"function_type {ftype.type}", start)
        else:
            func.args = [Value(f"%arg{i}", t, None, i) for i, t in enumerate(ftype.type.inputs)]
            if body is not None:
                func.body = None
        func.mlir_loc = mlir_loc
        func.loc = self.src_loc(start)
        _check_returns(func)
        return func


def _check_returns(func: Func) -> None:
    """func.return's operands must have exactly the function's result types (as MLIR checks)."""
    if func.body is None or not func.body.blocks or not func.body.blocks[-1].ops:
        return
    ret = func.body.blocks[-1].ops[-1]
    if ret.name not in ("func.return", "return"):
        return
    got = [v.type for v in ret.operands]
    if got != list(func.result_types):
        show = lambda ts: "(" + ", ".join(str(t) for t in ts) + ")"  # noqa: E731
        raise VerificationError("func.return", None, f"returns {show(got)}, but @{func.name} is declared "
                                f"to return {show(func.result_types)}", ret.loc)


def int_value(text: str) -> int:
    """The value of an integer literal: decimal (leading zeros allowed) or 0x hex."""
    neg = text.startswith("-")
    body = text[1:] if neg else text
    v = int(body, 16) if body.startswith("0x") else int(body, 10)
    return -v if neg else v


def _norm_attrs(dicts: list[dict[str, Attr]]) -> list[dict[str, Attr]]:
    """Per-argument attribute dicts, or [] when none has any (one canonical form)."""
    return dicts if any(dicts) else []


def _dict_list(a: Attr | None) -> list[dict[str, Attr]]:
    if a is None:
        return []
    if not isinstance(a, ArrayAttr) or not all(isinstance(d, DictAttr) for d in a.items):
        raise ParseError(f"expected an array of dictionaries, got {a}")
    return [dict(d.entries) for d in a.items]


def _float_from_bits(bits: int, ty: ElementType) -> float:
    """The value of a float written as its bit pattern (``0x7FC00000 : f32``)."""
    nbytes = ty.dtype.itemsize
    if bits >= 1 << (8 * nbytes):
        raise ParseError(f"hexadecimal value 0x{bits:X} does not fit in {ty}")
    raw = np.array([bits], dtype=f"<u{nbytes}") if nbytes in (1, 2, 4, 8) else None
    if raw is None:
        raise ParseError(f"hexadecimal float literals are not supported for {ty}")
    return float(raw.view(ty.dtype)[0])
