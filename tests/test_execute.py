"""Tests of companion.execute: in-place execution in the notebook's folder, at the chosen
scale, with a clear error (and an untouched file) when a cell fails."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from companion.execute import NotebookExecutionError, execute_notebook, main


def _notebook(path, *sources, tags=None):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    for i, t in (tags or {}).items():
        nb.cells[i].metadata["tags"] = t
    nbformat.write(nb, path)
    return path


def _text(cell):
    return "".join(o.get("text", "") for o in cell.outputs)


@pytest.mark.slow
def test_executes_in_place_in_the_notebook_folder(tmp_path, monkeypatch, capsys):
    sub = tmp_path / "notebooks"
    sub.mkdir()
    (sub / "data.txt").write_text("found it")
    path = _notebook(
        sub / "a.ipynb",
        "import os, sys\nprint(open('data.txt').read())",
        "print(os.environ['BOOK_SCALE'])",
        "print(sys.executable)",
        "raise ValueError('allowed')",
        tags={3: ["nbval-raises-exception"]},
    )
    monkeypatch.delenv("BOOK_SCALE", raising=False)
    assert main(["--scale", "ci", str(path)]) == 0
    out = capsys.readouterr().out
    assert "BOOK_SCALE=ci" in out and "a.ipynb" in out and " s" in out
    nb = nbformat.read(path, as_version=4)
    assert _text(nb.cells[0]).strip() == "found it"
    assert _text(nb.cells[1]).strip() == "ci"
    assert _text(nb.cells[2]).strip() == sys.executable  # this environment's interpreter
    assert nb.cells[3].outputs[0]["ename"] == "ValueError"
    assert nb.cells[3].metadata["tags"] == ["nbval-raises-exception"]  # our helper tag was removed
    assert "execution" not in nb.cells[0].metadata  # no timing noise
    assert not list(sub.glob(".*.tmp"))


@pytest.mark.slow
def test_failing_cell_is_named_and_file_untouched(tmp_path, capsys):
    path = _notebook(tmp_path / "bad.ipynb", "x = 1", "y = 2\n1 / 0", "print('never')")
    before = path.read_bytes()
    with pytest.raises(NotebookExecutionError, match=r"cell 2 of 3 \(index 1.*`y = 2`.*ZeroDivisionError"):
        execute_notebook(path, timeout=60)
    assert path.read_bytes() == before
    assert main([str(path)]) == 1
    assert "ZeroDivisionError" in capsys.readouterr().err


def test_cli_rejects_missing_notebooks_and_bad_options(tmp_path):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "nope.ipynb")])
    with pytest.raises(SystemExit):
        main(["--scale", "huge", str(tmp_path / "x.ipynb")])
    with pytest.raises(FileNotFoundError):
        execute_notebook(tmp_path / "nope.ipynb")


def test_module_runs_as_a_script():
    out = subprocess.run([sys.executable, "-m", "companion.execute", "--help"], capture_output=True, text=True,
                         check=True)
    assert "notebooks" in out.stdout
