"""The book's running tables: rows stored in the repository, extended chapter by chapter.

A chapter computes its scores in its own cells and adds a row; the table it shows holds every
stored row of the earlier chapters plus its new ones. Tables (:data:`TABLES`): ``brown_ppl``
(perplexity on Brown, Bengio et al.'s split), ``word_similarity``, ``sentence`` (the SentEval-style
harness, :mod:`companion.evaluate.senteval`), ``glue_lite`` (:mod:`companion.evaluate.glue`) and
``tagging`` (:mod:`companion.evaluate.tagging`).

Rows live in ``companion/evaluate/rows/<table>.json`` (or ``$BOOK_TABLES_DIR/<table>.json``),
written atomically, in chapter order (within a chapter, the order the rows were first added), so a re-run that
measures the same numbers leaves the file unchanged. A row is identified by ``(model, scale)``:
adding it again replaces it. Rows measured at ``BOOK_SCALE=ci`` are smoke-test numbers: they are
kept in memory but not written, unless ``save=True`` is asked for.

Example::

    from companion.evaluate.tables import RunningTable
    table = RunningTable("sentence")
    table.add("mean GloVe 6B 50d", chapter="05", scores=report.scores(), params=0,
              train_time_s=0.0, source="notebooks/05_sentence.ipynb")
    table.frame()        # a DataFrame: one line per row, earlier chapters first
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..fileio import umask_mode
from ..scale import SCALES, get_scale

TABLES: dict[str, str] = {
    "brown_ppl": "Perplexity on Brown (Bengio et al. 2003's split; lower is better)",
    "word_similarity": "Word vectors on similarity and analogy benchmarks",
    "sentence": "Sentence vectors, SentEval-style probes (accuracy %, correlations x 100)",
    "glue_lite": "Fine-tuned models on GLUE-lite (SST-2, MRPC, STS-B, RTE, SICK-E)",
    "tagging": "Sequence labelling: token accuracy (POS) and span F1 (chunks, entities)",
    "transfer": "Adapting a pre-trained model: accuracy, trainable parameters and storage per task",
    "objectives": "Pre-training objectives at equal compute (chapter 8): losses, GLUE-lite average, cost",
    "probing": "Probes on frozen vectors: token accuracy %, selectivity, structural probe UUAS",
    "claims": "The claims ledger: each paper's claim, our effect with its interval, the verdict "
              "(companion.evaluate.claims)",
}
ROWS_DIR = Path(__file__).resolve().parent / "rows"
ENV_DIR = "BOOK_TABLES_DIR"


@dataclass
class Row:
    """One row of a running table.

    Attributes:
        model: the model's name as the table shows it (with its defining settings).
        chapter: the chapter that measured it, e.g. ``"01"``, ``"07a"``.
        scores: column -> number (``None``: not measured).
        scale: the ``BOOK_SCALE`` it was measured at (``ci``, ``laptop``, ``gpu``).
        params: trained parameters (``None``: not stated).
        train_time_s: training time in seconds on the machine it ran on (``None``: not stated).
        source: where the numbers come from (a notebook and cell, a benchmark command).
        meta: anything else JSON-friendly (settings, spread, machine).
    """

    model: str
    chapter: str
    scores: dict[str, float | None]
    scale: str
    params: int | None = None
    train_time_s: float | None = None
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.model, self.scale)


def _chapter(chapter: int | str) -> str:
    if isinstance(chapter, bool) or not isinstance(chapter, (int, str)):
        raise TypeError(f"chapter must be an int or a str like '05' or '07a', got {chapter!r}")
    text = f"{chapter:02d}" if isinstance(chapter, int) else chapter.strip()
    if not text or not text[:2].isdigit():
        raise ValueError(f"chapter must start with its two-digit number, like '05' or '07a'; got {chapter!r}")
    return text


def _scores(scores: Mapping[str, Any]) -> dict[str, float | None]:
    if not isinstance(scores, Mapping) or not scores:
        raise ValueError("scores must be a non-empty dict column -> number")
    out: dict[str, float | None] = {}
    for k, v in scores.items():
        if not isinstance(k, str) or not k:
            raise ValueError(f"score names must be non-empty strings, got {k!r}")
        if v is None:
            out[k] = None
            continue
        if isinstance(v, bool):
            raise TypeError(f"score {k!r} is a bool; give a number")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"score {k!r} is not a number: {v!r}") from None
        if not math.isfinite(f):
            raise ValueError(f"score {k!r} is {f}; store None for 'not measured' instead")
        out[k] = f
    return out


def _check_json(value: Any, what: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must be JSON-friendly (numbers, strings, lists, dicts): {err}") from None


def _row_from_dict(d: Mapping[str, Any], where: str) -> Row:
    try:
        return Row(model=d["model"], chapter=d["chapter"], scores=dict(d["scores"]), scale=d["scale"],
                   params=d.get("params"), train_time_s=d.get("train_time_s"), source=d.get("source", ""),
                   meta=dict(d.get("meta", {})))
    except (KeyError, TypeError) as err:
        raise ValueError(f"{where}: a malformed row ({err!r}): {dict(d)!r}") from None


class RunningTable:
    """A running table: stored rows plus the rows added through this object.

    Args:
        name: one of :data:`TABLES`.
        directory: where ``<name>.json`` lives (default ``$BOOK_TABLES_DIR`` or the package's
            ``rows/`` folder).
    """

    def __init__(self, name: str, *, directory: str | os.PathLike | None = None) -> None:
        if name not in TABLES:
            raise ValueError(f"unknown table {name!r}; the book's tables are {', '.join(TABLES)}")
        self.name = name
        base = directory if directory is not None else os.environ.get(ENV_DIR) or ROWS_DIR
        self.path = Path(base) / f"{name}.json"
        self._rows: dict[tuple[str, str], Row] = {r.key: r for r in self._read()}
        self._pending: dict[tuple[str, str], Row] = {}  # added with save=False

    # ---- storage
    def _read(self) -> list[Row]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{self.path} is not valid JSON ({err}); restore it from git") from None
        if not isinstance(data, dict) or data.get("table") != self.name or not isinstance(data.get("rows"), list):
            raise ValueError(f"{self.path} is not the stored table {self.name!r} "
                             "(expected {'table': name, 'rows': [...]})")
        return [_row_from_dict(d, str(self.path)) for d in data["rows"]]

    @staticmethod
    def _sorted(rows: list[Row]) -> list[Row]:
        """Chapter order; within a chapter, the order the rows were first added (a replaced row
        keeps its place), so a chapter's rows read as the chapter presents them."""
        return sorted(rows, key=lambda r: r.chapter)

    def _write(self, rows: dict[tuple[str, str], Row]) -> Path:
        payload = {"table": self.name, "description": TABLES[self.name],
                   "rows": [asdict(r) for r in self._sorted(list(rows.values()))]}
        text = json.dumps(payload, indent=1, ensure_ascii=False, allow_nan=False) + "\n"  # scores keep their order
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, umask_mode())  # mkstemp made it 0600: a table is plain data
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return self.path

    def _commit(self, put: Sequence[Row] = (), drop: Sequence[tuple[str, str]] = ()) -> Path:
        """Re-read the file (another notebook may have written it), apply the change, write."""
        stored = {r.key: r for r in self._read()}
        stored.update({r.key: r for r in put})
        for key in drop:
            stored.pop(key, None)
        return self._write(stored)

    def save(self) -> Path:
        """Write the rows added here with ``save=False`` (the others are written as
        they are added); rows other processes stored meanwhile are kept."""
        path = self._commit(put=list(self._pending.values()))
        self._pending.clear()
        return path

    # ---- rows
    def add(
        self,
        model: str,
        *,
        chapter: int | str,
        scores: Mapping[str, Any],
        scale: str | None = None,
        params: int | None = None,
        train_time_s: float | None = None,
        source: str = "",
        meta: Mapping[str, Any] | None = None,
        save: bool | None = None,
    ) -> Row:
        """Add (or replace: same ``model`` and ``scale``) a row.

        Args:
            model: the model's name in the table.
            chapter: the chapter measuring it (``5`` or ``"05"``, ``"07a"``).
            scores: column -> number (``None`` for not measured; NaN is refused).
            scale: the scale it was measured at (default: the current ``BOOK_SCALE``).
            params, train_time_s, source, meta: see :class:`Row`.
            save: write the file now; default: yes, unless the scale is ``ci``.

        Raises:
            ValueError / TypeError: for an empty model name, a bad chapter, scale or score, or
                ``meta`` that JSON cannot store.
        """
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty name, got {model!r}")
        scale = get_scale() if scale is None else scale
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
        if params is not None and (isinstance(params, bool) or not isinstance(params, int) or params < 0):
            raise ValueError(f"params must be a non-negative int or None, got {params!r}")
        if train_time_s is not None:
            train_time_s = float(train_time_s)
            if not (math.isfinite(train_time_s) and train_time_s >= 0):
                raise ValueError(f"train_time_s must be a non-negative number or None, got {train_time_s!r}")
        meta = dict(meta or {})
        _check_json(meta, "meta")
        row = Row(model.strip(), _chapter(chapter), _scores(scores), scale, params, train_time_s,
                  str(source), meta)
        self._rows[row.key] = row
        if save if save is not None else scale != "ci":
            self._commit(put=[row])
            self._pending.pop(row.key, None)
        else:
            self._pending[row.key] = row
        return row

    def remove(self, model: str, scale: str, *, save: bool = True) -> None:
        """Drop the row ``(model, scale)``.

        Raises:
            KeyError: if there is no such row.
        """
        if (model, scale) not in self._rows:
            raise KeyError(f"table {self.name!r} has no row ({model!r}, {scale!r}); rows: {sorted(self._rows)}")
        del self._rows[(model, scale)]
        self._pending.pop((model, scale), None)
        if save:
            self._commit(drop=[(model, scale)])

    def rows(self, scale: str | None = None) -> list[Row]:
        """The rows in table order (chapter, then as added), optionally only one scale's."""
        rows = self._sorted(list(self._rows.values()))
        return [r for r in rows if scale is None or r.scale == scale]

    def __len__(self) -> int:
        return len(self._rows)

    def frame(self, scale: str | None = None, *, columns: list[str] | None = None) -> pd.DataFrame:
        """The table as a DataFrame: one line per row (index: model), with ``chapter``, ``scale``,
        the score columns (in order of first appearance, or ``columns``), ``params`` and
        ``train_time_s``."""
        rows = self.rows(scale)
        score_cols: list[str] = []
        for r in rows:
            score_cols += [k for k in r.scores if k not in score_cols]
        if columns is not None:
            missing = [c for c in columns if c not in score_cols]
            if missing:
                raise KeyError(f"no row has the column(s) {missing}; columns: {score_cols}")
            score_cols = list(columns)
        records = [{"model": r.model, "chapter": r.chapter, "scale": r.scale,
                    **{c: r.scores.get(c) for c in score_cols},
                    "params": r.params, "train_time_s": r.train_time_s} for r in rows]
        cols = ["model", "chapter", "scale", *score_cols, "params", "train_time_s"]
        return pd.DataFrame.from_records(records, columns=cols).set_index("model")
