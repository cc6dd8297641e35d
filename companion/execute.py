"""Re-execute notebooks in place, storing the outputs the book shows.

Usage::

    python -m companion.execute notebooks/*.ipynb            # at $BOOK_SCALE (default laptop)
    python -m companion.execute --scale ci notebooks/01a_ngram_models.ipynb

Each notebook runs top to bottom in a fresh ``python3`` kernel of *this* Python environment
(whatever kernelspecs are installed elsewhere), with the notebook's own folder as working
directory. The result replaces the file atomically, and only when every cell succeeded, so a
failure never leaves a half-executed notebook behind. Cells tagged ``raises-exception`` or
``nbval-raises-exception`` may raise. The Makefile's ``execute`` target calls this module.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from .fileio import umask_mode
from .scale import ENV_VAR as SCALE_VAR
from .scale import SCALES, get_scale

DEFAULT_TIMEOUT = 3600  # seconds per cell: a laptop-scale training cell may take minutes
_RAISES_TAGS = ("raises-exception", "nbval-raises-exception")


class NotebookExecutionError(RuntimeError):
    """A cell failed; the message names the notebook, the cell and the error."""


def _kernel_manager_class(module: str = "ipykernel_launcher", display_name: str = "Python 3 (ipykernel)") -> type:
    """A kernel manager that always starts ``python -m module`` with this interpreter, ignoring
    other installed 'python3' specs (the grader passes its own launcher module)."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    class CurrentEnvKernelManager(AsyncKernelManager):
        @property
        def kernel_spec(self) -> KernelSpec:
            if self._kernel_spec is None:
                self._kernel_spec = KernelSpec(
                    argv=[sys.executable, "-m", module, "-f", "{connection_file}"],
                    display_name=display_name,
                    language="python",
                    resource_dir="",
                )
            return self._kernel_spec

    return CurrentEnvKernelManager


def _describe_cell(cell, index: int, n_cells: int) -> str:
    first = next((ln for ln in cell.source.splitlines() if ln.strip()), "").strip()
    if len(first) > 70:
        first = first[:67] + "..."
    cid = f", id {cell['id']}" if cell.get("id") else ""
    return f"cell {index + 1} of {n_cells} (index {index}{cid}, starting `{first}`)"


def execute_notebook(path: str | os.PathLike, *, timeout: int = DEFAULT_TIMEOUT) -> float:
    """Execute one notebook in place; return the wall time in seconds.

    Raises:
        FileNotFoundError: if the notebook does not exist.
        NotebookExecutionError: if a cell fails; the file is left unchanged.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no notebook at {path}")
    nb = nbformat.read(path, as_version=4)
    # let nbclient honour nbval's tag too; remember which cells we tagged, to untag them after
    added = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "nbval-raises-exception" in tags and "raises-exception" not in tags:
            cell.metadata["tags"] = [*tags, "raises-exception"]
            added.append(cell)
    current = {"index": -1}

    def on_start(cell, cell_index, **_):
        current["index"] = cell_index

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=_kernel_manager_class(),
        resources={"metadata": {"path": str(path.parent.resolve())}},
        record_timing=False,  # timings in the metadata would make every run a diff
        on_cell_start=on_start,
    )
    start = time.perf_counter()
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as err:
        idx = current["index"]
        where = _describe_cell(nb.cells[idx], idx, len(nb.cells)) if 0 <= idx < len(nb.cells) else "a cell"
        ename = getattr(err, "ename", type(err).__name__)
        evalue = getattr(err, "evalue", "") or str(err).strip().splitlines()[-1:]
        evalue = evalue if isinstance(evalue, str) else " ".join(evalue)
        raise NotebookExecutionError(f"{path}: {where} failed with {ename}: {evalue}") from err
    elapsed = time.perf_counter() - start
    for cell in added:
        cell.metadata["tags"] = [t for t in cell.metadata["tags"] if t != "raises-exception"]
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        nbformat.write(nb, tmp)
        os.chmod(tmp, umask_mode())  # mkstemp made it 0600: give it the mode of any new file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return elapsed


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: execute each notebook in turn, stop at the first failure."""
    parser = argparse.ArgumentParser(prog="python -m companion.execute", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", help="notebooks to execute in place")
    parser.add_argument("--scale", choices=SCALES, help=f"set ${SCALE_VAR} for the kernels (default: current, else laptop)")
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, help="seconds per cell (default %(default)s)")
    args = parser.parse_args(argv)
    if args.timeout < 1:
        parser.error("--timeout must be a positive number of seconds")
    if args.scale:
        os.environ[SCALE_VAR] = args.scale
    try:
        scale = get_scale()
    except ValueError as err:
        parser.error(str(err))
    os.environ[SCALE_VAR] = scale  # the kernels inherit it
    missing = [p for p in args.notebooks if not Path(p).is_file()]
    if missing:
        parser.error(f"no such notebook(s): {', '.join(missing)}")
    print(f"executing {len(args.notebooks)} notebook(s) at {SCALE_VAR}={scale} with {sys.executable}", flush=True)
    total = 0.0
    for nb_path in args.notebooks:
        print(f"  {nb_path} ...", end=" ", flush=True)
        try:
            seconds = execute_notebook(nb_path, timeout=args.timeout)
        except NotebookExecutionError as err:
            print("FAILED", flush=True)
            print(f"error: {err}\nThe notebook was left unchanged.", file=sys.stderr)
            return 1
        total += seconds
        print(f"{seconds:.1f} s", flush=True)
    print(f"done: {len(args.notebooks)} notebook(s) in {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
