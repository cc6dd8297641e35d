"""`make student`: the chapters as a student gets them (companion/student.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from companion.execute import execute_notebook
from companion.student import EXERCISE_TAG, StudentEditionError, build, student_notebook

ROOT = Path(__file__).resolve().parents[1]
CHAPTER0 = ROOT / "notebooks" / "00_how_to_use.ipynb"


def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return json.loads(nbformat.writes(nb))


def _cell(src, tags=(), output="out"):
    cell = nbformat.v4.new_code_cell(src)
    cell.metadata["tags"] = list(tags)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
    cell.execution_count = 3
    return cell


def test_exercise_cells_lose_their_outputs_and_keep_their_stubs():
    nb = _nb(_cell("x = 1"), _cell("def f():\n    raise NotImplementedError\ncheck('ch00.f', f)",
                                   tags=[EXERCISE_TAG, "nbval-ignore-output"]))
    out = student_notebook(nb)
    assert out["cells"][0]["outputs"] and out["cells"][0]["execution_count"] == 3
    assert out["cells"][1]["outputs"] == [] and out["cells"][1]["execution_count"] is None
    assert "NotImplementedError" in "".join(out["cells"][1]["source"])
    assert nb["cells"][1]["outputs"]  # the input is not changed


def test_a_notebook_importing_solutions_is_refused():
    with pytest.raises(StudentEditionError, match="cell 1 imports solutions"):
        student_notebook(_nb(_cell("x = 1"), _cell("from solutions.ch00 import f")), "x.ipynb")


def test_build_leaves_solutions_out(tmp_path):
    written = build(tmp_path / "student", [CHAPTER0])
    root = tmp_path / "student"
    assert [p.name for p in written] == [CHAPTER0.name]
    assert (root / "companion" / "exercises" / "__init__.py").is_file()
    assert not (root / "solutions").exists() and not (root / "tests").exists()
    assert not list(root.rglob("__pycache__"))
    nb = json.loads(written[0].read_text())
    tagged = [c for c in nb["cells"] if EXERCISE_TAG in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) >= 6, "chapter 0 tags its exercise cells"
    assert all(c["outputs"] == [] for c in tagged)


def test_command_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "companion.student", "--out", str(tmp_path / "s"),
                           str(CHAPTER0)], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "1 notebook(s)" in proc.stdout and (tmp_path / "s" / "notebooks" / CHAPTER0.name).is_file()
    proc = subprocess.run([sys.executable, "-m", "companion.student", "nope.ipynb"],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 2 and "no such notebook" in proc.stderr


@pytest.mark.slow
def test_chapter0_runs_to_its_first_exercise_without_solutions(tmp_path, monkeypatch):
    """The student edition of chapter 0, at ci scale, runs from the top through its first
    exercise cell, with the student copy of companion and no solutions package in reach."""
    root = tmp_path / "student"
    (path,) = build(root, [CHAPTER0])
    nb = nbformat.read(path, as_version=4)
    first = next(i for i, c in enumerate(nb.cells) if EXERCISE_TAG in c.metadata.get("tags", []))
    probe = nbformat.v4.new_code_cell(
        "import importlib.util, companion\n"
        "print(importlib.util.find_spec('solutions') is None, companion.__file__)")
    nb.cells = nb.cells[: first + 1] + [probe]
    nbformat.write(nb, path)
    monkeypatch.setenv("BOOK_SCALE", "ci")
    monkeypatch.setenv("PYTHONPATH", str(root))
    execute_notebook(path, timeout=300)
    ran = nbformat.read(path, as_version=4)
    assert ran.cells[first].outputs, "the first exercise cell ran"
    solutions_absent, companion_file = ran.cells[-1].outputs[0]["text"].split()
    assert solutions_absent == "True"
    assert Path(companion_file).is_relative_to(root)
    assert importlib.util.find_spec("solutions") is not None  # (it is there in the repository)


# --------------------------------------------------------------------------- make lab


def _lab_command() -> str:
    proc = subprocess.run(["make", "-n", "--no-print-directory", "lab"], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    lines = proc.stdout.replace("\\\n", " ").splitlines()
    (line,) = [ln for ln in lines if "jupyter lab" in ln]
    return line


def test_make_lab_puts_the_repository_on_the_kernels_path():
    import os

    cmd = _lab_command()
    assert f'PYTHONPATH="{ROOT}' in cmd and f'--ServerApp.root_dir="{ROOT}"' in cmd
    assert ("--allow-root" in cmd) == (os.getuid() == 0)
    # a kernel starts in notebooks/ with the server's environment: solutions must import there
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", "import solutions, companion; print(solutions.__file__)"],
                          cwd=ROOT / "notebooks", env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).is_relative_to(ROOT)


@pytest.mark.slow
def test_make_lab_command_is_accepted_by_jupyterlab():
    """The Makefile's command line, with --show-config: Jupyter parses every option (an unknown
    or misspelt one fails), loads jupyterlab_myst, and exits without starting a server."""
    jupyter = Path(sys.executable).parent / "jupyter"
    cmd = _lab_command().replace(".venv/bin/jupyter", str(jupyter)) + " --show-config"
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    assert f".root_dir = '{ROOT}'" in out
    assert "jupyterlab_myst | extension was successfully loaded" in out
