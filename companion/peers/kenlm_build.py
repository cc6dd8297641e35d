"""Build KenLM's ``lmplz`` and ``query`` from the PyPI source package, and run them.

``python -m companion.peers.kenlm_build`` (or ``make kenlm``) does, once:

1. check for cmake, a C++ compiler and Debian's boost headers (install them with
   ``apt-get install -y libboost-program-options-dev libboost-system-dev libboost-thread-dev
   libboost-test-dev cmake zlib1g-dev libbz2-dev liblzma-dev``);
2. ``pip download --no-deps --no-binary kenlm kenlm==0.3.0`` (the source package; ``--no-binary
   :all:`` would also build pip's own build tools, cmake among them, from source: tens of
   minutes);
3. cmake + make the ``lmplz``, ``query`` and ``build_binary`` programs (about 1-3 minutes on 2
   cores) into the cache folder: ``$KENLM_DIR`` if set, else ``kenlm-build/`` at the top of the
   repository (git-ignored), else ``$BOOK_DATA_DIR/kenlm``.

A second run finds the programs and returns at once. Everything else here drives them:
:func:`lmplz` builds an ARPA file from sentences, :func:`query` scores sentences with KenLM's own
query tool (its perplexity counts ``</s>`` and OOVs, as ours does).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

KENLM_VERSION = "0.3.0"
PROGRAMS = ("lmplz", "query", "build_binary")
APT_HINT = ("apt-get install -y libboost-program-options-dev libboost-system-dev libboost-thread-dev "
            "libboost-test-dev cmake zlib1g-dev libbz2-dev liblzma-dev")
RESERVED = ("<s>", "</s>", "<unk>")


class KenLMUnavailable(RuntimeError):
    """KenLM's programs are not built here and cannot be built (the message says why and what to do)."""


def cache_dir() -> Path:
    """Where the programs live: ``$KENLM_DIR``, else ``<repo>/kenlm-build``, else ``$BOOK_DATA_DIR/kenlm``."""
    env = os.environ.get("KENLM_DIR")
    if env:
        return Path(env).expanduser()
    repo = Path(__file__).resolve().parents[2]
    if (repo / ".git").exists() and os.access(repo, os.W_OK):
        return repo / "kenlm-build"
    base = os.environ.get("BOOK_DATA_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "embeddings-book")
    return Path(base) / "kenlm"


def binary(name: str) -> Path:
    """Path of one built program (``lmplz``, ``query`` or ``build_binary``); may not exist yet."""
    if name not in PROGRAMS:
        raise ValueError(f"unknown KenLM program {name!r}; one of {PROGRAMS}")
    return cache_dir() / "bin" / name


def is_built() -> bool:
    """True if every program is present and executable."""
    return all(os.access(binary(p), os.X_OK) for p in PROGRAMS)


def _missing_tools() -> list[str]:
    missing = [t for t in ("cmake", "make") if shutil.which(t) is None]
    if not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        missing.append("a C++ compiler (g++)")
    headers = {"boost (libboost-*-dev)": "boost/program_options.hpp", "zlib1g-dev": "zlib.h"}
    for what, h in headers.items():
        if not any(Path(d, h).exists() for d in ("/usr/include", "/usr/local/include")):
            missing.append(what)
    return missing


@contextlib.contextmanager
def _lock(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # two test workers must not build at once
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: Sequence[str], cwd: Path | None, log: Path, what: str) -> None:
    with open(log, "a") as fh:
        fh.write(f"$ {' '.join(cmd)}\n")
        fh.flush()
        res = subprocess.run(list(cmd), cwd=cwd, stdout=fh, stderr=subprocess.STDOUT)
    if res.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise KenLMUnavailable(f"{what} failed (exit {res.returncode}); last lines of {log}:\n" + "\n".join(tail))


def build(force: bool = False, quiet: bool = False, jobs: int | None = None) -> Path:
    """Build KenLM's programs into :func:`cache_dir` (idempotent) and return their folder.

    Raises:
        KenLMUnavailable: when a tool is missing or a step fails (the message says which and how to fix it).
    """
    out = cache_dir()
    with _lock(out):
        if is_built() and not force:
            return out / "bin"
        missing = _missing_tools()
        if missing:
            raise KenLMUnavailable("cannot build KenLM: missing " + ", ".join(missing)
                                   + f". On Debian/Ubuntu: {APT_HINT}")
        say = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
        log = out / "build.log"
        log.write_text("")
        t0 = time.time()
        with tempfile.TemporaryDirectory(prefix="kenlm-src-", dir=out) as tmp:
            tmp_path = Path(tmp)
            say(f"[kenlm] downloading the kenlm=={KENLM_VERSION} source package from PyPI ...")
            _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "kenlm",
                  f"kenlm=={KENLM_VERSION}", "-d", str(tmp_path)], None, log,
                 "pip download of the kenlm source package (needs access to PyPI)")
            archives = sorted(tmp_path.glob("kenlm-*.tar.gz"))
            if not archives:
                raise KenLMUnavailable(f"pip download left no kenlm-*.tar.gz in {tmp_path}; see {log}")
            with tarfile.open(archives[0]) as tar:
                try:
                    tar.extractall(tmp_path, filter="data")
                except TypeError:  # Python without extraction filters
                    tar.extractall(tmp_path)
            src = next(p for p in tmp_path.iterdir() if p.is_dir() and (p / "CMakeLists.txt").exists())
            build_dir = src / "build"
            build_dir.mkdir()
            say("[kenlm] cmake ...")
            _run(["cmake", "..", "-DCMAKE_BUILD_TYPE=Release"], build_dir, log, "cmake (is boost installed?)")
            n = str(jobs or max(1, os.cpu_count() or 1))
            say(f"[kenlm] compiling lmplz, query, build_binary with {n} jobs (a few minutes) ...")
            _run(["make", f"-j{n}", *PROGRAMS], build_dir, log, "make")
            (out / "bin").mkdir(exist_ok=True)
            for p in PROGRAMS:
                shutil.copy2(build_dir / "bin" / p, out / "bin" / p)
        (out / "VERSION").write_text(f"kenlm {KENLM_VERSION} from PyPI source\n")
        say(f"[kenlm] built in {time.time() - t0:.0f} s: {out / 'bin'}")
        return out / "bin"


def ensure() -> Path:
    """The programs' folder, building them first if needed (see :func:`build`)."""
    return build(quiet=True) if not is_built() else cache_dir() / "bin"


def write_sentences(sentences: Sequence[Sequence[str]], path: str | os.PathLike) -> Path:
    """Write one sentence per line, tokens separated by spaces (KenLM's input format).

    Raises:
        ValueError: if a token is empty, contains whitespace, or is one of KenLM's reserved
            symbols ``<s>``, ``</s>``, ``<unk>`` (lmplz refuses them; rename e.g. ``<unk>`` first).
    """
    path = Path(path)
    reserved = set(RESERVED)
    with open(path, "w", encoding="utf-8") as fh:
        for i, s in enumerate(sentences):
            if isinstance(s, str):
                raise TypeError(f"sentence {i} is a string; give lists of tokens")
            for w in s:
                if w in reserved:
                    raise ValueError(f"sentence {i} contains {w!r}, which KenLM reserves; rename it "
                                     "(e.g. map '<unk>' to an ordinary token) in the text you give both models")
                if not w or any(c.isspace() for c in w):
                    raise ValueError(f"sentence {i} has a token KenLM would split or drop: {w!r}")
            fh.write(" ".join(s))
            fh.write("\n")
    return path


@dataclass
class LmplzRun:
    """One run of lmplz: the ARPA file, the wall time, and what it printed (its statistics)."""

    arpa: Path
    seconds: float
    log: str

    @property
    def discounts(self) -> dict[int, tuple[float, float, float]]:
        """The D1, D2, D3+ lmplz used, per order."""
        return discounts_from_log(self.log)


def _text_file(sentences: Sequence[Sequence[str]] | str | os.PathLike, scratch: Path) -> Path:
    """The one-sentence-per-line file of ``sentences``: a path is used as it is, token lists are
    written to ``scratch`` (:func:`write_sentences`)."""
    if isinstance(sentences, (str, os.PathLike)):
        return Path(sentences)
    return write_sentences(sentences, scratch)


def lmplz(sentences: Sequence[Sequence[str]] | str | os.PathLike, order: int, arpa: str | os.PathLike, *,
          memory: str = "1G", discount_fallback: bool = False, extra: Sequence[str] = ()) -> LmplzRun:
    """Run ``lmplz -o order`` (modified Kneser-Ney) on sentences or a text file.

    Args:
        sentences: token lists, or the path of a one-sentence-per-line file.
        order: n-gram order.
        arpa: where to write the ARPA file.
        memory: lmplz's ``-S`` (its default, 80 % of RAM, is rude on a shared machine).
        discount_fallback: pass ``--discount_fallback`` (needed on tiny corpora).
    """
    bindir = ensure()
    with tempfile.TemporaryDirectory(prefix="lmplz-") as tmp:
        text = _text_file(sentences, Path(tmp) / "train.txt")
        cmd = [str(bindir / "lmplz"), "-o", str(int(order)), "-S", memory, "-T", tmp, "--text", str(text),
               "--arpa", str(arpa), *(["--discount_fallback"] if discount_fallback else []), *extra]
        t0 = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"lmplz failed (exit {res.returncode}):\n{res.stderr[-2000:]}")
    return LmplzRun(Path(arpa), elapsed, res.stderr)


def discounts_from_log(stderr: str) -> dict[int, tuple[float, float, float]]:
    """Parse the ``D1= D2= D3+=`` lines of lmplz's statistics."""
    out = {}
    for m in re.finditer(r"^(\d+) \d+ D1=(\S+) D2=(\S+) D3\+=(\S+)", stderr, re.M):
        out[int(m.group(1))] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
    return out


@dataclass
class QueryResult:
    """What KenLM's ``query`` reported."""

    perplexity: float  # including OOVs
    perplexity_no_oov: float
    n_oov: int
    n_tokens: int  # words + one </s> per sentence
    log10_probs: list[float]  # one per token, in order
    seconds: float


def query(model: str | os.PathLike, sentences: Sequence[Sequence[str]] | str | os.PathLike) -> QueryResult:
    """Score sentences with KenLM's ``query`` (its default output: every word, then the totals) and parse it."""
    bindir = ensure()
    with tempfile.TemporaryDirectory(prefix="kenlm-query-") as tmp:
        text = _text_file(sentences, Path(tmp) / "test.txt")
        with open(text, "rb") as fh:
            t0 = time.perf_counter()
            res = subprocess.run([str(bindir / "query"), str(model)], stdin=fh,
                                 capture_output=True, text=True)
            elapsed = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"query failed (exit {res.returncode}):\n{res.stderr[-2000:]}")
    stats = dict(re.findall(r"^(Perplexity including OOVs|Perplexity excluding OOVs|OOVs|Tokens):\s*(\S+)",
                            res.stdout, re.M))
    logs = [float(x) for x in re.findall(r"=\d+ \d+ (\S+)", res.stdout)]
    return QueryResult(float(stats["Perplexity including OOVs"]), float(stats["Perplexity excluding OOVs"]),
                       int(stats["OOVs"]), int(stats["Tokens"]), logs, elapsed)


def main(argv: list[str] | None = None) -> int:
    """Command line: build (``--force`` to rebuild) and print the programs' folder."""
    ap = argparse.ArgumentParser(prog="python -m companion.peers.kenlm_build", description=__doc__.split("\n")[0])
    ap.add_argument("--force", action="store_true", help="rebuild even if the programs exist")
    ap.add_argument("--jobs", type=int, default=None, help="parallel compile jobs (default: all cores)")
    args = ap.parse_args(argv)
    try:
        path = build(force=args.force, jobs=args.jobs)
    except KenLMUnavailable as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
