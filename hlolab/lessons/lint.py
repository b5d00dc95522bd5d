"""``hlolab lessons check``: every lesson is checked by running it.

For each lesson: every program runs; every view points at an existing value and
element; every exercise accepts its reference answer and rejects each of its wrong
answers; a fix-program's broken program fails with the error it names. For each
translation: the same blocks in the same order with the same checked content (only
prose, titles, prompts, hints, explanations and captions differ). Missing
translations (a lesson file, a UI message in ``hlolab/messages/zh|es``) are reported;
they fail the check only with ``strict``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hlolab.errors import HloLabError
from hlolab.lessons import check as chk
from hlolab.lessons.loader import folders, parse_lesson
from hlolab.lessons.model import LANGUAGES, TRANSLATABLE, Exercise, Lesson, LessonFolder, Program, View
from hlolab.lessons.views import check_view, view_messages

ERROR = "error"
MISSING = "missing"  # a translation not there yet: reported, fails only with --strict


@dataclass
class Issue:
    level: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.level}: {self.message}"


@dataclass
class Report:
    issues: list[Issue] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    missing_keys: dict[str, list[str]] = field(default_factory=dict)  # lang -> catalogue keys

    def add(self, level: str, where: str, message: str) -> None:
        self.issues.append(Issue(level, where, message))

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.level == ERROR]

    @property
    def missing(self) -> list[Issue]:
        return [i for i in self.issues if i.level == MISSING]

    def ok(self, strict: bool = False) -> bool:
        return not self.errors and not (strict and (self.missing or any(self.missing_keys.values())))

    def format(self, strict: bool = False) -> str:
        lines = [str(i) for i in self.issues]
        for lang, keys in sorted(self.missing_keys.items()):
            if keys:
                lines.append(f"{lang}: {len(keys)} message(s) the lessons show have no {lang} translation "
                             f"(English is shown): {', '.join(keys)}")
        c = self.counts
        lines.append(f"checked {c.get('lessons', 0)} lesson file(s): {c.get('programs', 0)} program(s) ran, "
                     f"{c.get('views', 0)} view(s), {c.get('exercises', 0)} exercise(s), "
                     f"{c.get('answers', 0)} reference answer(s) accepted, {c.get('wrong', 0)} wrong "
                     f"answer(s) rejected, {c.get('translations', 0)} translation(s) compared, "
                     f"{c.get('hidden', 0)} result(s)/view(s) held back until their exercise is answered")
        n_missing = len(self.missing) + sum(len(v) for v in self.missing_keys.values())
        verdict = "FAILED" if not self.ok(strict) else "ok"
        lines.append(f"{verdict}: {len(self.errors)} error(s), {n_missing} missing translation(s)"
                     + ("" if strict or not n_missing else " (reported; --strict fails on them)"))
        return "\n".join(lines)


def lint(root: Path | None = None, only: list[str] | None = None, langs: list[str] | None = None) -> Report:
    """Check the lessons under ``root`` (default: the installed lessons); ``only``: numbers or
    slugs of lessons to check; ``langs``: languages whose translations to compare."""
    report = Report()
    all_folders = folders(root)
    chosen = all_folders
    if only:
        from hlolab.lessons.loader import find_folder

        chosen = [find_folder(k, root) for k in only]
    langs = list(langs or LANGUAGES)
    ids: dict[str, str] = {}
    english: dict[str, Lesson] = {}
    for f in all_folders:  # ids and prerequisites are checked across every lesson
        if "en" not in f.files:
            continue
        try:
            les = parse_lesson(f.files["en"])
        except HloLabError as e:
            if f in chosen:
                report.add(ERROR, str(f.files["en"]), e.short() if e.loc is None else str(e))
            continue
        english[f.path.name] = les
        if les.id in ids:
            report.add(ERROR, f"{les.path}:1", f"lesson id '{les.id}' is also the id of {ids[les.id]}")
        ids[les.id] = str(les.path)
    ui_keys: set[str] = set()
    for f in chosen:
        if "en" not in f.files:
            report.add(ERROR, str(f.path), "a lesson folder needs en.md (the original)")
            continue
        en = english.get(f.path.name)
        if en is None:
            continue
        lint_lesson(en, f, report, ids, ui_keys)
        for lang in langs:
            if lang == "en":
                continue
            if lang not in f.files:
                report.add(MISSING, str(f.path), f"no {lang} translation ({lang}.md)")
                continue
            try:
                other = parse_lesson(f.files[lang])
            except HloLabError as e:
                report.add(ERROR, str(f.files[lang]), str(e))
                continue
            compare_translation(en, other, report)
            report.count("translations")
            report.count("lessons")
    _catalogue_report(report, ui_keys, [x for x in langs if x != "en"])
    return report


def _catalogue_report(report: Report, keys: set[str], langs: list[str]) -> None:
    from hlolab.messages import catalogue

    en = catalogue("en")
    keys = set(keys) | {k for k in en if k.startswith("lessons.")}
    for lang in langs:
        have = catalogue(lang)
        report.missing_keys[lang] = sorted(k for k in keys if k in en and k not in have)


def lint_lesson(les: Lesson, folder: LessonFolder, report: Report, ids: dict[str, str] | None = None,
                ui_keys: set[str] | None = None) -> None:
    """Every check of one lesson file (the original; translations are compared to it)."""
    from hlolab.ops.registry import lookup

    ui_keys = set() if ui_keys is None else ui_keys
    report.count("lessons")
    head = f"{les.path}:1"
    if les.order != folder.number:
        report.add(ERROR, head, f"order = {les.order} but the folder is numbered {folder.number:02d}")
    for op in les.ops:
        if lookup(op) is None:
            report.add(ERROR, head, f"ops: '{op}' is not an op hlolab knows (hlolab ops lists them)")
    if ids is not None:
        for p in les.prerequisites:
            if p not in ids:
                report.add(ERROR, head, f"prerequisites: no lesson has the id '{p}'")
    if not les.exercises:
        report.add(ERROR, head, "a lesson needs at least one exercise")
    runner = chk.Runner(les)
    for b in les.blocks:
        if isinstance(b, Program):
            _lint_program(runner, les, b, report)
        elif isinstance(b, View):
            _lint_view(runner, les, b, None, report, ui_keys)
        elif isinstance(b, Exercise):
            _lint_exercise(runner, les, b, report, ui_keys)
    _lint_giveaways(runner, les, report)


def _lint_giveaways(runner: chk.Runner, les: Lesson, report: Report) -> None:
    """An answer shown before its exercise. Printed results and views that show it are held
    back by the front ends until the exercise is answered (counted); a constant's value is in
    the program text, which nothing can hide (an error)."""
    from hlolab.lessons.views import giveaways, hidden_views, literal_giveaways

    report.count("hidden", sum(len(v) for v in giveaways(runner).values()) + len(hidden_views(runner)))
    for ex in literal_giveaways(runner):
        report.add(ERROR, les.where(_key_line(les, ex.line, "value")), f"exercise '{ex.id}' asks for "
                   f"{chk.value_ref(ex.value)}, a stablehlo.constant: the program text shows its value, "
                   "so the answer is given away; ask about a value computed from it")


def _key_line(les: Lesson, block_line: int, key: str) -> int:
    """The line of ``key = …`` in the block starting at ``block_line`` (else that line)."""
    import re

    try:
        lines = les.path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return block_line
    pat = re.compile(rf"^\s*\[?{re.escape(key)}\]?\s*(=|$)")
    for i in range(block_line, len(lines)):
        if lines[i].lstrip().startswith(("```", "~~~")):
            break
        if pat.match(lines[i]):
            return i + 1
    return block_line


def _err(e: BaseException) -> str:
    return e.short() if isinstance(e, HloLabError) else f"{type(e).__name__}: {e}"


def _lint_program(runner: chk.Runner, les: Lesson, p: Program, report: Report) -> None:
    where = les.where(p.line)
    try:
        run = runner.program(p.name)
    except HloLabError as e:
        report.add(ERROR, where, f"program '{p.name}' does not run: {_err(e)}")
        return
    report.count("programs")
    for name in p.results or []:
        try:
            run.value(name)
        except HloLabError as e:
            report.add(ERROR, where, f"results: {name}: {_err(e)}")


def _lint_view(runner: chk.Runner, les: Lesson, v: View, ex: Exercise | None, report: Report,
               ui_keys: set[str]) -> None:
    where = les.where(v.line)
    what = "show" if ex is not None else "view"
    try:
        check_view(runner, v, ex)
        ui_keys.update(view_messages(runner, v, ex))
    except HloLabError as e:
        report.add(ERROR, where, f"{what} of {v.value} in program '{v.program}': {_err(e)}")
        return
    report.count("views")


def _lint_exercise(runner: chk.Runner, les: Lesson, ex: Exercise, report: Report, ui_keys: set[str]) -> None:
    where = les.where(ex.line)
    report.count("exercises")
    if not ex.prompt.strip():
        report.add(ERROR, where, f"exercise '{ex.id}': no prompt")
    if not ex.hints:
        report.add(ERROR, where, f"exercise '{ex.id}': no hints (give at least one, gentle first)")
    if ex.kind == "fix-program":
        err = chk.broken_error(runner, ex)
        if err is None:
            report.add(ERROR, where, f"exercise '{ex.id}': the broken program runs; it must fail "
                       f"with '{ex.expect_error}'")
        elif ex.expect_error not in str(err):
            report.add(ERROR, where, f"exercise '{ex.id}': the broken program fails with '{err.short()}', "
                       f"which does not contain expect_error = '{ex.expect_error}'")
    try:
        v = chk.check(runner, ex, ex.answer)
    except HloLabError as e:
        report.add(ERROR, where, f"exercise '{ex.id}': checking the reference answer failed: {_err(e)}")
        return
    if v.ok:
        report.count("answers")
    else:
        why = v.error.short() if v.error is not None else _text(v.message)
        report.add(ERROR, les.where(_key_line(les, ex.line, "answer")),
                   f"exercise '{ex.id}': the reference answer {_answer_text(ex.answer)} is "
                   f"rejected: {why}" + (f" ({_text(v.reveal)})" if v.reveal is not None else ""))
    for w in ex.wrong:
        try:
            vw = chk.check(runner, ex, w)
        except HloLabError as e:
            report.add(ERROR, where, f"exercise '{ex.id}': checking wrong answer {_answer_text(w)} failed: "
                       f"{_err(e)}")
            continue
        if vw.ok:
            report.add(ERROR, les.where(_key_line(les, ex.line, "wrong")),
                       f"exercise '{ex.id}': the wrong answer {_answer_text(w)} is accepted")
        else:
            report.count("wrong")
    _lint_view(runner, les, ex.show, ex, report, ui_keys)


def _text(msg: Any) -> str:
    from hlolab.messages import text

    return text(msg, "en")


def _answer_text(a: Any) -> str:
    return repr(a) if isinstance(a, str) else str(a)


def _checked(table: Any) -> Any:
    """A block table without its translatable keys (recursively): what must be equal."""
    if isinstance(table, dict):
        return {k: _checked(v) for k, v in table.items() if k not in TRANSLATABLE}
    if isinstance(table, list):
        return [_checked(v) for v in table]
    return table


def _diff(a: Any, b: Any, path: str = "") -> str | None:
    """The first difference between two checked tables, as 'key: en … vs …'."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                return f"'{path}{k}' is missing"
            if k not in a:
                return f"'{path}{k}' is not in the English original"
            d = _diff(a[k], b[k], f"{path}{k}.")
            if d:
                return d
        return None
    if a != b:
        key = path.rstrip(".") or "value"
        return f"'{key}' differs: English has {a!r}, this file {b!r}"
    return None


def compare_translation(en: Lesson, other: Lesson, report: Report) -> None:
    """The structural checks of a translation against the English original."""
    d = _diff(_checked(en.front), _checked(other.front))
    if d:
        report.add(ERROR, f"{other.path}:1", f"front matter: {d}")
    if not str(other.front.get("title", "")).strip():
        report.add(ERROR, f"{other.path}:1", "front matter: empty title")
    n = max(len(en.raw_blocks), len(other.raw_blocks))
    for i in range(n):
        if i >= len(other.raw_blocks):
            kind, line, _ = en.raw_blocks[i]
            report.add(ERROR, f"{other.path}", f"block {i + 1} (hlolab-{kind}, {en.path.name} line {line}) "
                       f"is missing: the translation has {len(other.raw_blocks)} blocks, "
                       f"English {len(en.raw_blocks)}")
            break
        kind_o, line_o, t_o = other.raw_blocks[i]
        if i >= len(en.raw_blocks):
            report.add(ERROR, other.where(line_o), f"block {i + 1} (hlolab-{kind_o}) is not in the English "
                       "original")
            break
        kind_e, line_e, t_e = en.raw_blocks[i]
        if kind_e != kind_o:
            report.add(ERROR, other.where(line_o), f"block {i + 1} is hlolab-{kind_o}; the English original "
                       f"has hlolab-{kind_e} there ({en.path.name} line {line_e})")
            break
        d = _diff(_checked(t_e), _checked(t_o))
        if d:
            key = d.split("'")[1].split(".")[0]
            report.add(ERROR, other.where(_key_line(other, line_o, key)), f"block {i + 1} (hlolab-{kind_e}) "
                       f"differs from {en.path.name} line {_key_line(en, line_e, key)}: {d}")
        hints_e, hints_o = t_e.get("hints"), t_o.get("hints")
        if isinstance(hints_e, list) and (not isinstance(hints_o, list) or len(hints_o) != len(hints_e)):
            report.add(ERROR, other.where(line_o), f"block {i + 1}: {len(hints_e)} hint(s) in English, "
                       f"{len(hints_o) if isinstance(hints_o, list) else 0} here "
                       "(hints are steps: same number)")
        for key in ("prompt", "explanation", "caption"):
            if str(t_e.get(key, "")).strip() and not str(t_o.get(key, "")).strip():
                report.add(ERROR, other.where(line_o), f"block {i + 1}: '{key}' is not translated (empty)")
