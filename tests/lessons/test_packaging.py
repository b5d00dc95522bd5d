"""The lessons ship with the package: a non-editable ``pip install .`` holds a copy of
``lessons/`` (the checkout's ``hlolab/lessons/content`` is a symlink to it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from hlolab.lessons.loader import folders, lessons_dir

REPO = Path(__file__).resolve().parents[2]


def test_checkout_reads_the_repository_lessons(monkeypatch) -> None:
    monkeypatch.delenv("HLOLAB_LESSONS", raising=False)
    assert (REPO / "hlolab" / "lessons" / "content").is_symlink()
    assert lessons_dir() == (REPO / "lessons").resolve()
    monkeypatch.setenv("HLOLAB_LESSONS", "/somewhere/else")
    assert lessons_dir() == Path("/somewhere/else")


def test_non_editable_install_ships_the_lessons(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    shutil.copytree(REPO / "lessons", src / "lessons")
    shutil.copytree(REPO / "hlolab", src / "hlolab", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                        "."], cwd=src, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    content = site / "hlolab" / "lessons" / "content"
    assert content.is_dir() and not content.is_symlink()
    # compared with the copy that was installed: translators may add files to lessons/ meanwhile
    for pattern in ("*.md", "*.mlir"):  # programs read from files (file = "mlp.mlir") ship too
        shipped = sorted(p.relative_to(content).as_posix() for p in content.rglob(pattern))
        want = sorted(p.relative_to(src / "lessons").as_posix() for p in (src / "lessons").rglob(pattern))
        assert shipped == want
    assert (content / "06-gather" / "en.md").is_file() and (content / "18-jax-mlp" / "mlp.mlir").is_file()
    code = ("import hlolab, sys; from hlolab.lessons.loader import lessons_dir, load; "
            "print(hlolab.__file__); print(lessons_dir()); print(load(6).title); "
            "print(sum(len(p.text) for p in load(18).programs.values()))")
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("HLOLAB_LESSONS", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    file, where, title, n_chars = out.stdout.splitlines()
    assert int(n_chars) > 0  # lesson 18's programs (one read from mlp.mlir) load from the wheel
    assert file.startswith(str(site)) and where == str(content.resolve())
    assert title.startswith("Gather")
    assert [f.path.name for f in folders(content)] == [f.path.name for f in folders()]
