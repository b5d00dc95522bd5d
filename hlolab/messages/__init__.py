"""Message catalogues: every sentence hlolab explains with, in each language.

Ops never write English into an explanation. They build ``Msg(key, **args)``
values: a key into the catalogue and named arguments (numbers, index tuples,
spec symbols, nested messages, dimension roles). A front end turns a message
into text with ``text(msg, lang)`` at the moment it draws it, so the same
explanation reads in any language that has a catalogue.

A catalogue is a directory ``hlolab/messages/<lang>/`` of TOML files, one per
op family; ``[section] name = "template"`` in ``gather.toml`` is the key
``gather.section.name``. Templates are ``str.format`` strings with named
fields only (``{start_index_map}``; ``{{`` for a literal brace). A key a
language lacks falls back to English, per string.
"""

from __future__ import annotations

import os
import string
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

DEFAULT = "en"
_HERE = Path(__file__).parent
_catalogues: dict[str, dict[str, str]] = {}
# per thread / task, so a worker rendering in one language never changes another's
_current: ContextVar[str] = ContextVar("hlolab_language", default=os.environ.get("HLOLAB_LANG") or DEFAULT)


class Msg:
    """A sentence to be written in the reader's language: a catalogue key and its
    named arguments. Arguments are data (ints, tuples, arrays, spec symbols as
    ``str``), other ``Msg`` values, or anything with a ``message()`` (a DimRole)."""

    __slots__ = ("key", "args")

    def __init__(self, key: str, /, **args: Any) -> None:
        self.key = key
        self.args = args

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"Msg({self.key!r}{', ' if inner else ''}{inner})"

    def __str__(self) -> str:
        return text(self)


def _flatten(prefix: str, table: Mapping[str, Any], out: dict[str, str], where: Path) -> None:
    for k, v in table.items():
        key = f"{prefix}.{k}"
        if isinstance(v, dict):
            _flatten(key, v, out, where)
        elif isinstance(v, str):
            out[key] = v
        else:
            raise ValueError(f"{where}: {key} is a {type(v).__name__}, not a template string")


def load_directory(path: Path) -> dict[str, str]:
    """The catalogue held in a directory of TOML files (key prefix = file stem)."""
    out: dict[str, str] = {}
    for f in sorted(path.glob("*.toml")):
        with f.open("rb") as fh:
            _flatten(f.stem, tomllib.load(fh), out, f)
    return out


def catalogue(lang: str = DEFAULT) -> dict[str, str]:
    """The templates of ``lang`` (loaded once; an unknown language is empty)."""
    if lang not in _catalogues:
        d = _HERE / lang
        _catalogues[lang] = load_directory(d) if d.is_dir() else {}
    return _catalogues[lang]


def register(lang: str, templates: Mapping[str, str]) -> None:
    """Install (or replace) the catalogue of ``lang``, e.g. a test's or a plug-in's."""
    _catalogues[lang] = dict(templates)


def languages() -> list[str]:
    """The languages that ship a catalogue directory."""
    return sorted(p.name for p in _HERE.iterdir() if p.is_dir() and any(p.glob("*.toml")))


def current_language() -> str:
    return _current.get()


@contextmanager
def language(lang: str) -> Iterator[None]:
    """Render messages in ``lang`` inside the block (``text`` without ``lang=``)."""
    token = _current.set(lang)
    try:
        yield
    finally:
        _current.reset(token)


def fields(template: str) -> set[str]:
    """The named fields a template uses."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def template(key: str, lang: str | None = None) -> str:
    """The template of ``key`` in ``lang``, else English; KeyError if English lacks it too."""
    lang = lang or current_language()
    found = catalogue(lang).get(key)
    if found is None:
        found = catalogue(DEFAULT).get(key)
    if found is None:
        raise KeyError(f"no message {key!r} in the {DEFAULT} catalogue")
    return found


def arg_text(v: Any, lang: str | None = None) -> str:
    """One argument as text: messages and roles in ``lang``, values in their short form."""
    if isinstance(v, Msg):
        return text(v, lang)
    if hasattr(v, "message"):
        return text(v.message(), lang)
    if isinstance(v, str):
        return v
    from hlolab.trace.explain import format_value
    if lang is None:
        return format_value(v)
    with language(lang):  # messages nested in a list or tuple argument
        return format_value(v)


def text(msg: Msg | str | None, lang: str | None = None) -> str:
    """``msg`` written out in ``lang`` (default: the current language); a plain
    string (a spec symbol) is returned as it is, None as ""."""
    if msg is None:
        return ""
    if isinstance(msg, str):
        return msg
    lang = lang or current_language()
    args = {k: arg_text(v, lang) for k, v in msg.args.items()}
    return template(msg.key, lang).format_map(args)
