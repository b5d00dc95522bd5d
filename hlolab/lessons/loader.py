"""Read lesson files: TOML front matter between ``+++`` lines, Markdown prose, and
fenced ``hlolab-program`` / ``hlolab-view`` / ``hlolab-exercise`` blocks whose bodies
are TOML (the format: ``lessons/README.md``).

Every mistake is a ``LessonError`` at ``file:line`` with the offending line, so an
author who never reads code can fix it.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from hlolab.errors import HloLabError, SourceLoc
from hlolab.lessons.model import (
    EXERCISE_KINDS,
    LANGUAGES,
    PROGRAM_LANGS,
    VIEW_MODES,
    Block,
    Exercise,
    Lesson,
    LessonFolder,
    Program,
    Prose,
    View,
)

_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)[^`]*$")
_FOLDER_RE = re.compile(r"^(\d{2})-([a-z0-9]+(?:-[a-z0-9]+)*)$")
_TOML_POS_RE = re.compile(r"\(at line (\d+), column (\d+)\)")
BLANK_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

FRONT_REQUIRED = {"id": str, "title": str, "order": int, "ops": list, "prerequisites": list}
FRONT_OPTIONAL = {"minutes": int}

PROGRAM_KEYS = {"name", "lang", "text", "file", "args", "seed", "results", "caption", "hidden"}
VIEW_KEYS = {"program", "value", "element", "mode", "highlight", "caption", "iteration", "process"}
# which instance of a value: in a while body (iteration) and on a process grid (process)
INSTANCE_KEYS = {"iteration", "process"}
COMMON_EXERCISE_KEYS = {"id", "kind", "prompt", "answer", "wrong", "hints", "show", "explanation"}
KIND_KEYS = {
    "predict-value": {"program", "value", "element", "rtol", "atol"} | INSTANCE_KEYS,
    "predict-shape": {"program", "value"} | INSTANCE_KEYS,
    "predict-type": {"program", "value"} | INSTANCE_KEYS,
    "pick-sources": {"program", "value", "element", "operand", "roles"} | INSTANCE_KEYS,
    "fill-attributes": {"lang", "template", "blanks", "target", "target_program", "target_value",
                        "target_result", "value", "rtol", "atol"} | INSTANCE_KEYS,
    "fix-program": {"lang", "broken", "expect_error", "target", "target_program", "target_value",
                    "target_result", "value", "rtol", "atol"} | INSTANCE_KEYS,
}
KIND_REQUIRED = {
    "predict-value": {"value"},
    "predict-shape": {"value"},
    "predict-type": {"value"},
    "pick-sources": {"value", "element", "operand"},
    "fill-attributes": {"template", "blanks"},
    "fix-program": {"broken", "expect_error"},
}
# the program a fill-attributes / fix-program "show me" view runs by default: the solved one
ANSWER_PROGRAM = "answer"


class LessonError(HloLabError):
    """A lesson file that does not follow the format (``file:line: error: …``)."""


def _loc(path: Path, lines: list[str], line: int) -> SourceLoc:
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    return SourceLoc(str(path), line, 1, src)


class _Reader:
    def __init__(self, path: Path, text: str, lang: str):
        self.path = path
        self.lines = text.splitlines()
        self.lang = lang

    def error(self, line: int, message: str) -> LessonError:
        return LessonError(message, _loc(self.path, self.lines, line))

    def toml(self, body: list[str], first: int, what: str) -> dict[str, Any]:
        try:
            return tomllib.loads("\n".join(body))
        except tomllib.TOMLDecodeError as e:
            m = _TOML_POS_RE.search(str(e))
            line = first + int(m.group(1)) - 1 if m else first
            msg = _TOML_POS_RE.sub("", str(e)).strip()
            raise self.error(line, f"{what}: not valid TOML: {msg}") from None

    def key_line(self, start: int, end: int, key: str) -> int:
        """The line of ``key = …`` in the block on lines start..end (else the fence line)."""
        pat = re.compile(rf"^\s*\[?{re.escape(key)}\]?\s*(=|$)")
        for i in range(start, min(end, len(self.lines)) + 1):
            if pat.match(self.lines[i - 1]):
                return i
        return start


def parse_lesson(path: str | Path, lang: str | None = None, text: str | None = None) -> Lesson:
    """One lesson file; ``lang`` defaults to the file's stem (``zh.md`` -> ``zh``)."""
    path = Path(path)
    lang = lang or path.stem
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise LessonError(f"cannot read {path}: {e}") from None
    r = _Reader(path, text, lang)
    lines = r.lines
    if not lines or lines[0].strip() != "+++":
        raise r.error(1, "a lesson starts with its front matter: a line '+++', TOML keys "
                         "(id, title, order, ops, prerequisites), then '+++'")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    except StopIteration:
        raise r.error(1, "the front matter has no closing '+++' line") from None
    front = r.toml(lines[1:end], 2, "front matter")
    for k, t in {**FRONT_REQUIRED, **FRONT_OPTIONAL}.items():
        if k not in front:
            if k in FRONT_REQUIRED:
                raise r.error(1, f"front matter: '{k}' is missing")
            continue
        if not isinstance(front[k], t) or (t is int and isinstance(front[k], bool)):
            raise r.error(r.key_line(2, end, k), f"front matter: '{k}' must be a {t.__name__}")
    for k in front:
        if k not in FRONT_REQUIRED and k not in FRONT_OPTIONAL:
            raise r.error(r.key_line(2, end, k), f"front matter: unknown key '{k}' (keys: "
                          f"{', '.join([*FRONT_REQUIRED, *FRONT_OPTIONAL])})")
    for k in ("ops", "prerequisites"):
        if not all(isinstance(x, str) for x in front[k]):
            raise r.error(r.key_line(2, end, k), f"front matter: '{k}' must be a list of strings")

    blocks: list[Block] = []
    raw_blocks: list[tuple[str, int, dict[str, Any]]] = []
    prose: list[str] = []
    prose_line = end + 2
    i = end + 1
    last_program = ""
    while i < len(lines):
        m = _FENCE_RE.match(lines[i])
        if not m:
            prose.append(lines[i])
            i += 1
            continue
        fence, info = m.group(2), m.group(3)
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if j == len(lines):
            raise r.error(i + 1, f"this code block ({fence}{info}) is never closed")
        if not info.startswith("hlolab-"):  # an ordinary code block is prose
            prose.extend(lines[i:j + 1])
            i = j + 1
            continue
        if "".join(prose).strip():
            blocks.append(Prose("\n".join(prose).strip("\n"), prose_line))
        prose = []
        kind = info.removeprefix("hlolab-")
        body = lines[i + 1:j]
        fence_line = i + 1
        table = r.toml(body, i + 2, f"hlolab-{kind} block")
        b = _block(r, kind, table, fence_line, j, last_program)
        if isinstance(b, Program):
            last_program = b.name
        blocks.append(b)
        raw_blocks.append((kind, fence_line, table))
        i = j + 1
        prose_line = i + 1
    if "".join(prose).strip():
        blocks.append(Prose("\n".join(prose).strip("\n"), prose_line))

    lesson = Lesson(path=path, lang=lang, id=front["id"], title=front["title"], order=front["order"],
                    ops=list(front["ops"]), prerequisites=list(front["prerequisites"]), blocks=blocks,
                    minutes=front.get("minutes"), front=front, raw_blocks=raw_blocks)
    _check_names(r, lesson)
    return lesson


def _check_names(r: _Reader, lesson: Lesson) -> None:
    """Program names and exercise ids unique; every reference names a program defined above."""
    seen: dict[str, int] = {}
    ids: dict[str, int] = {}
    for b in lesson.blocks:
        if isinstance(b, Program):
            if b.name in seen or b.name == ANSWER_PROGRAM:
                why = (f"already used on line {seen[b.name]}" if b.name in seen
                       else f"'{ANSWER_PROGRAM}' is reserved for the solved exercise")
                raise r.error(b.line, f"program name '{b.name}': {why}")
            seen[b.name] = b.line
        refs: list[tuple[str, str]] = []
        if isinstance(b, View):
            refs.append(("program", b.program))
        if isinstance(b, Exercise):
            if b.id in ids:
                raise r.error(b.line, f"exercise id '{b.id}' already used on line {ids[b.id]}")
            ids[b.id] = b.line
            if b.program:
                refs.append(("program", b.program))
            if b.target_program:
                refs.append(("target_program", b.target_program))
            if b.show.program != ANSWER_PROGRAM:
                refs.append(("show.program", b.show.program))
        for key, name in refs:
            if name not in seen:
                where = "no program block above" if not name else f"no program '{name}' above"
                raise r.error(b.line, f"{key}: {where} (program names above: "
                              f"{', '.join(seen) or 'none'})")


def _expect(r: _Reader, table: dict[str, Any], key: str, check: Any, what: str, line: tuple[int, int],
            block: str) -> None:
    if key in table and not check(table[key]):
        raise r.error(r.key_line(*line, key), f"{block}: '{key}' must be {what}")


def _is_index(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float)


def _is_nested_numbers(v: Any) -> bool:
    if isinstance(v, list):
        return all(_is_nested_numbers(x) for x in v)
    return _is_number(v)


def _unknown(r: _Reader, table: dict[str, Any], allowed: set[str], line: tuple[int, int], block: str) -> None:
    for k in table:
        if k not in allowed:
            raise r.error(r.key_line(*line, k),
                          f"{block}: unknown key '{k}' (keys: {', '.join(sorted(allowed))})")


def _required(r: _Reader, table: dict[str, Any], keys: set[str] | list[str], line: int, block: str) -> None:
    for k in sorted(keys):
        if k not in table:
            raise r.error(line, f"{block}: '{k}' is missing")


def _view(r: _Reader, t: dict[str, Any], line: int, end: int, default_program: str, block: str) -> View:
    span = (line, end)
    _unknown(r, t, VIEW_KEYS, span, block)
    _required(r, t, ["value"], line, block)
    _expect(r, t, "value", lambda v: isinstance(v, str) and v, "a value name like \"%r\"", span, block)
    _expect(r, t, "program", lambda v: isinstance(v, str), "a program name", span, block)
    _expect(r, t, "element", _is_index, "a list of integers, e.g. [1, 0]", span, block)
    _expect(r, t, "mode", lambda v: v in VIEW_MODES, f"one of {', '.join(VIEW_MODES)}", span, block)
    _expect(r, t, "highlight", lambda v: v in ("sources", "none"), "\"sources\" or \"none\"", span, block)
    _expect(r, t, "caption", lambda v: isinstance(v, str), "a string", span, block)
    _expect_instance(r, t, span, block)
    mode = t.get("mode", "value")
    element = tuple(t["element"]) if "element" in t else None
    if mode != "value" and element is None:
        raise r.error(line, f"{block}: mode = \"{mode}\" needs an 'element'")
    return View(value=t["value"], line=line, program=t.get("program", default_program), element=element,
                mode=mode, highlight=t.get("highlight", "sources"), caption=t.get("caption", ""),
                iteration=t.get("iteration"), process=t.get("process"))


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _expect_instance(r: _Reader, t: dict[str, Any], span: tuple[int, int], block: str) -> None:
    _expect(r, t, "iteration", _is_count, "a loop iteration (an integer >= 0, as in hlolab explain "
            "--iteration)", span, block)
    _expect(r, t, "process", _is_count, "a process number (an integer >= 0: replica * partitions + "
            "partition)", span, block)


def _program_file(r: _Reader, t: dict[str, Any], span: tuple[int, int], block: str) -> str:
    """The text of ``file = "x.mlir"``: a file in the lesson's folder (shipped with the package)."""
    name = t["file"]
    at = r.key_line(*span, "file")
    if not isinstance(name, str) or not re.fullmatch(r"[\w.-]+\.mlir", name):
        raise r.error(at, f"{block}: 'file' must name a .mlir file in the lesson's folder, e.g. "
                      "\"mlp.mlir\" (no folders: the file sits next to the lesson)")
    if t.get("lang") != "mlir":
        raise r.error(at, f"{block}: 'file' holds an MLIR program: it needs lang = \"mlir\"")
    path = r.path.parent / name
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise r.error(at, f"{block}: cannot read {path}: {why}") from None
    if not text.strip():
        raise r.error(at, f"{block}: {path} is empty")
    return text


def _block(r: _Reader, kind: str, t: dict[str, Any], line: int, end: int, last_program: str) -> Block:
    span = (line, end)
    if kind == "program":
        block = "hlolab-program"
        _unknown(r, t, PROGRAM_KEYS, span, block)
        _required(r, t, ["name", "lang"], line, block)
        if ("text" in t) == ("file" in t):
            raise r.error(line, f"{block}: give exactly one of 'text' (the program) and 'file' (a .mlir "
                          "file next to the lesson)")
        _expect(r, t, "name", lambda v: isinstance(v, str) and re.fullmatch(r"[\w.-]+", v), "a short name "
                "(letters, digits, _ . -)", span, block)
        _expect(r, t, "lang", lambda v: v in PROGRAM_LANGS, "\"mlir\" or \"builder\"", span, block)
        _expect(r, t, "text", lambda v: isinstance(v, str) and v.strip(), "the program text", span, block)
        _expect(r, t, "args", _is_str_list, "a list of literals like \"dense<[1, 2]> : tensor<2xi32>\"",
                span, block)
        _expect(r, t, "seed", lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer",
                span, block)
        _expect(r, t, "results", _is_str_list, "a list of value names", span, block)
        _expect(r, t, "caption", lambda v: isinstance(v, str), "a string", span, block)
        _expect(r, t, "hidden", lambda v: isinstance(v, bool), "true or false", span, block)
        if t.get("lang") == "builder" and "args" in t:
            raise r.error(r.key_line(*span, "args"), f"{block}: 'args' are inputs of an MLIR @main; "
                          "a builder program makes its values itself (x = [1, 2]:s32)")
        if "file" in t:
            text = _program_file(r, t, span, block)
            text_line = 1
        else:
            text = t["text"]
            text_line = r.key_line(*span, "text")
            if r.lines[text_line - 1].rstrip().endswith(("'''", '"""')):  # the text begins on the next line
                text_line += 1
        return Program(name=t["name"], lang=t["lang"], text=text, line=line, args=t.get("args"),
                       seed=t.get("seed", 0), results=t.get("results"), caption=t.get("caption", ""),
                       hidden=t.get("hidden", False), file=t.get("file", ""), text_line=text_line)
    if kind == "view":
        return _view(r, t, line, end, last_program, "hlolab-view")
    if kind == "exercise":
        return _exercise(r, t, line, end, last_program)
    raise r.error(line, f"unknown block 'hlolab-{kind}' "
                  "(blocks: hlolab-program, hlolab-view, hlolab-exercise)")


def _exercise(r: _Reader, t: dict[str, Any], line: int, end: int, last_program: str) -> Exercise:
    span = (line, end)
    block = "hlolab-exercise"
    _required(r, t, ["id", "kind"], line, block)
    kind = t["kind"]
    if kind not in EXERCISE_KINDS:
        raise r.error(r.key_line(*span, "kind"), f"{block}: kind '{kind}' is not one of "
                      f"{', '.join(EXERCISE_KINDS)}")
    block = f"hlolab-exercise ({kind})"
    _unknown(r, t, COMMON_EXERCISE_KEYS | KIND_KEYS[kind], span, block)
    _required(r, t, {"answer", "wrong", "hints", "show"} | KIND_REQUIRED[kind], line, block)
    _expect(r, t, "id", lambda v: isinstance(v, str) and re.fullmatch(r"[\w.-]+", v), "a short name",
            span, block)
    _expect(r, t, "prompt", lambda v: isinstance(v, str), "a string", span, block)
    _expect(r, t, "explanation", lambda v: isinstance(v, str), "a string", span, block)
    _expect(r, t, "hints", _is_str_list, "a list of strings", span, block)
    _expect(r, t, "wrong", lambda v: isinstance(v, list) and v, "a list of at least one wrong answer",
            span, block)
    _expect(r, t, "show", lambda v: isinstance(v, dict), "a table with the keys of a view, e.g. "
            "{ value = \"%r\", element = [0, 1], mode = \"explain\" }", span, block)
    _expect(r, t, "program", lambda v: isinstance(v, str), "a program name", span, block)
    _expect(r, t, "value", lambda v: isinstance(v, str) and v, "a value name like \"%r\"", span, block)
    _expect(r, t, "element", _is_index, "a list of integers, e.g. [1, 0]", span, block)
    _expect(r, t, "operand", lambda v: isinstance(v, str) and v, "a value name like \"%operand\"",
            span, block)
    _expect(r, t, "roles", _is_str_list, "a list of role names", span, block)
    for k in ("rtol", "atol"):
        _expect(r, t, k, lambda v: _is_number(v) and not isinstance(v, bool) and v >= 0,
                "a number >= 0", span, block)
    _expect(r, t, "lang", lambda v: v in PROGRAM_LANGS, "\"mlir\" or \"builder\"", span, block)
    for k in ("template", "broken", "expect_error"):
        _expect(r, t, k, lambda v: isinstance(v, str) and v.strip(), "a non-empty string", span, block)
    _expect(r, t, "blanks", lambda v: _is_str_list(v) and v, "a list of blank names", span, block)
    _expect(r, t, "target", _is_nested_numbers, "a number or a nested list of numbers", span, block)
    _expect(r, t, "target_program", lambda v: isinstance(v, str) and v, "a program name", span, block)
    _expect(r, t, "target_value", lambda v: isinstance(v, str) and v, "a value name like \"%r\"", span,
            block)
    _expect(r, t, "target_result", _is_count, "a result number (0 for the first)", span, block)
    _expect_instance(r, t, span, block)
    for k in ("target_value", "target_result"):
        if k in t and "target_program" not in t:
            raise r.error(r.key_line(*span, k), f"{block}: '{k}' picks a value of 'target_program', "
                          "which is not given")
    if kind in ("fill-attributes", "fix-program") and "iteration" in t and "value" not in t:
        raise r.error(r.key_line(*span, "iteration"), f"{block}: 'iteration' picks an instance of "
                      "'value', which is not given")
    if "target_value" in t and "target_result" in t:
        raise r.error(r.key_line(*span, "target_result"), f"{block}: give 'target_value' or "
                      "'target_result', not both")

    # the shape of an answer depends on the kind; wrong answers have the same shape
    answer_check: dict[str, tuple[Any, str]] = {
        "predict-value": (lambda v: _is_nested_numbers(v) or isinstance(v, str),
                          "a number (or a nested list of numbers for a whole value)"),
        "predict-shape": (_is_index, "a list of dimension sizes, e.g. [2, 3]"),
        "predict-type": (lambda v: isinstance(v, str) and v.strip(), "a type like \"tensor<2x3xf32>\""),
        "pick-sources": (lambda v: isinstance(v, list) and all(_is_index(x) for x in v),
                         "a list of indices, e.g. [[0, 1], [2, 1]]"),
        "fill-attributes": (lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
                            "a table { blank = \"text\", … }"),
        "fix-program": (lambda v: isinstance(v, dict) and all(isinstance(x, str) and k.isdigit()
                                                              for k, x in v.items()),
                        "a table { line number = \"new text of that line\", … }"),
    }
    ok, what = answer_check[kind]
    if not ok(t["answer"]):
        raise r.error(r.key_line(*span, "answer"), f"{block}: 'answer' must be {what}")
    for n, w in enumerate(t["wrong"]):
        if not ok(w):
            raise r.error(r.key_line(*span, "wrong"), f"{block}: wrong answer #{n + 1} must be {what}")

    program = t.get("program", "")
    if kind in ("predict-value", "predict-shape", "predict-type", "pick-sources"):
        program = program or last_program
        if not program:
            raise r.error(line, f"{block}: no program block above to ask about (or give 'program')")
    elif "program" in t:
        raise r.error(r.key_line(*span, "program"), f"{block}: carries its own program; 'program' "
                      "does not apply")
    blanks = list(t.get("blanks", []))
    if kind == "fill-attributes":
        used = BLANK_RE.findall(t["template"])
        if sorted(set(used)) != sorted(set(blanks)):
            raise r.error(r.key_line(*span, "blanks"), f"{block}: 'blanks' {blanks} must name exactly the "
                          f"${{…}} blanks of the template: {sorted(set(used))}")
        for n, a in enumerate([t["answer"], *t["wrong"]]):
            if sorted(a) != sorted(blanks):
                which = "answer" if n == 0 else f"wrong answer #{n}"
                raise r.error(r.key_line(*span, "answer" if n == 0 else "wrong"), f"{block}: {which} must "
                              f"fill exactly the blanks {blanks}, not {sorted(a)}")
    if kind in ("fill-attributes", "fix-program") and ("target" in t) == ("target_program" in t):
        raise r.error(line, f"{block}: give exactly one of 'target' (a nested list) and 'target_program'")
    if kind == "fix-program":
        n_lines = len(t["broken"].splitlines())
        for n, a in enumerate([t["answer"], *t["wrong"]]):
            for k in a:
                if not 1 <= int(k) <= n_lines:
                    raise r.error(r.key_line(*span, "answer" if n == 0 else "wrong"), f"{block}: line {k} "
                                  f"is not a line of 'broken' (1..{n_lines})")
    show_default = program if program else ANSWER_PROGRAM
    show = _view(r, t["show"], r.key_line(*span, "show"), end, show_default, f"{block} show")
    element = tuple(t["element"]) if "element" in t else None
    return Exercise(id=t["id"], kind=kind, line=line, answer=t["answer"], wrong=list(t["wrong"]),
                    hints=list(t["hints"]), show=show, prompt=t.get("prompt", ""),
                    explanation=t.get("explanation", ""), program=program, value=t.get("value", ""),
                    element=element, operand=t.get("operand", ""), roles=t.get("roles"),
                    rtol=float(t.get("rtol", 1e-3)), atol=float(t.get("atol", 1e-6)),
                    lang=t.get("lang", "mlir"), template=t.get("template", ""), blanks=blanks,
                    broken=t.get("broken", ""), expect_error=t.get("expect_error", ""),
                    target=t.get("target"), target_program=t.get("target_program", ""),
                    target_value=t.get("target_value", ""), target_result=t.get("target_result"),
                    iteration=t.get("iteration"), process=t.get("process"), raw=t)


# --- where the lessons are -----------------------------------------------------------------

def lessons_dir() -> Path:
    """The lessons folder: ``$HLOLAB_LESSONS`` if set; else the package's ``content`` (a
    symlink to the repository's ``lessons/`` in a checkout, a copy in an installed wheel)."""
    env = os.environ.get("HLOLAB_LESSONS")
    if env:
        return Path(env)
    return (Path(__file__).parent / "content").resolve()


def folders(root: Path | None = None) -> list[LessonFolder]:
    """The lesson folders under ``root`` (``NN-slug``), by number."""
    root = root or lessons_dir()
    if not root.is_dir():
        raise LessonError(f"no lessons folder at {root}")
    out = []
    for p in sorted(root.iterdir()):
        m = _FOLDER_RE.match(p.name)
        if not p.is_dir() or not m:
            continue
        files = {lang: p / f"{lang}.md" for lang in LANGUAGES if (p / f"{lang}.md").is_file()}
        out.append(LessonFolder(path=p, number=int(m.group(1)), slug=m.group(2), files=files))
    return out


def find_folder(key: str | int, root: Path | None = None) -> LessonFolder:
    """A lesson by number (``6``, ``"06"``), slug or id-like folder name (``gather``)."""
    all_ = folders(root)
    k = str(key).strip()
    for f in all_:
        if (k.isdigit() and int(k) == f.number) or k in (f.slug, f.path.name):
            return f
    names = ", ".join(f"{f.number} ({f.slug})" for f in all_)
    raise LessonError(f"no lesson '{key}' (lessons: {names or 'none'})")


def load(key: str | int, lang: str = "en", root: Path | None = None) -> Lesson:
    """A lesson in ``lang``, falling back to English when it has no translation yet."""
    f = find_folder(key, root)
    path = f.files.get(lang) or f.files.get("en")
    if path is None:
        raise LessonError(f"lesson {f.path.name} has no en.md")
    return parse_lesson(path)
