"""Byte-level BPE as GPT-2 does it (Radford et al. 2019), able to read GPT-2's own files.

Three ideas on top of Sennrich's BPE (:mod:`.bpe`):

1. **Bytes, not characters.** Text is UTF-8 encoded and BPE runs on the 256 byte values, so every
   string can be encoded (no ``<unk>``) and decoding is exact. To keep the merge file printable,
   each byte is shown as a visible unicode character (:func:`bytes_to_unicode`): printable Latin-1
   bytes stand for themselves, the others (space, control bytes, ...) are shifted to U+0100 and
   up, which is why GPT-2's tokens start with ``Ġ`` (U+0120, the space byte 0x20).
2. **Pre-tokenisation by a regex** (:data:`GPT2_PATTERN`): contractions, runs of letters, of digits,
   of other symbols (each optionally preceded by one space), and whitespace; merges never cross a
   piece, so ``dog.`` / ``dog!`` / ``dog?`` share the token ``dog``.
3. **Rank-based merging**: within a piece, repeatedly merge the adjacent pair with the lowest rank
   in ``vocab.bpe``. Pieces repeat (Zipf), so the ids of a piece are cached: encoding a corpus is
   one regex pass plus a dictionary look-up per piece.

Special tokens (``<|endoftext|>``) are matched in the text only when allowed, as tiktoken does.

Example: ``ByteLevelBPE.gpt2().encode("Hello world")`` -> ``[15496, 995]``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal

import regex

from ...checks import id_list
from .bpe import MergeStep, Pair, apply_merges, learn_merges, merge_steps

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
ENDOFTEXT = "<|endoftext|>"


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte (0..255) to a printable unicode character.

    The 188 bytes that are printable Latin-1 characters (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``)
    map to themselves; the other 68 map to U+0100, U+0101, ... in byte order. The dict's order
    (printable ones first) is the order of GPT-2's first 256 token ids.
    """
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(
        range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def _read_encoder(path: Path) -> dict[str, int]:
    try:
        encoder = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON ({err}); expected GPT-2's encoder.json") from None
    if not isinstance(encoder, dict) or not all(isinstance(k, str) and isinstance(v, int)
                                                for k, v in encoder.items()):
        raise ValueError(f"{path} must be a JSON object mapping token strings to int ids")
    return encoder


def read_merges(path: str | os.PathLike) -> list[Pair]:
    """The merges of a ``vocab.bpe`` file: an optional ``#version`` line, then one ``left right``
    pair per line, rank 0 first. A malformed line raises ``ValueError`` naming it."""
    merges = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if (lineno == 1 and line.startswith("#version")) or not line:
                continue
            parts = line.split(" ")
            if len(parts) != 2 or not all(parts):
                raise ValueError(f"{path}, line {lineno}: expected two symbols separated by one space "
                                 f"(a merge such as 'Ġ t'), got {line!r}")
            merges.append((parts[0], parts[1]))
    return merges


class ByteLevelBPE:
    """GPT-2's tokenizer: byte→unicode map, regex pre-tokenisation, rank-based merges, a cache.

    Args:
        encoder: token string (in the byte→unicode alphabet) -> id, as in ``encoder.json``.
        merges: the merges in rank order, as in ``vocab.bpe``.
        special_tokens: special token -> id (default: ``<|endoftext|>`` with its id in ``encoder``).
        pattern: the pre-tokenisation regex (``regex`` module syntax).
        cache_size: how many distinct pieces to remember (the cache is emptied when full).
    """

    def __init__(self, encoder: Mapping[str, int], merges: Sequence[Pair], *,
                 special_tokens: Mapping[str, int] | None = None, pattern: str = GPT2_PATTERN,
                 cache_size: int = 500_000) -> None:
        self.encoder = dict(encoder)
        self.merges = [tuple(m) for m in merges]
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {c: b for b, c in self.byte_encoder.items()}
        self._check(self.encoder, self.merges)
        if special_tokens is None:
            special_tokens = {ENDOFTEXT: self.encoder[ENDOFTEXT]} if ENDOFTEXT in self.encoder else {}
        self.special_tokens = dict(special_tokens)
        self.decoder = {i: t for t, i in self.encoder.items()}
        self.decoder_bytes = {i: bytes(self.byte_decoder[c] for c in t) for t, i in self.encoder.items()
                              if t not in self.special_tokens}
        self.decoder_bytes.update({i: t.encode("utf-8") for t, i in self.special_tokens.items()})
        self.ranks = {m: i for i, m in enumerate(self.merges)}
        self.pattern = pattern
        self._pat = regex.compile(pattern)
        self._cache: dict[str, list[int]] = {}
        self.cache_size = cache_size

    def _check(self, encoder: dict[str, int], merges: list[Pair]) -> None:
        ids = list(encoder.values())
        if len(set(ids)) != len(ids):
            raise ValueError("the encoder maps two tokens to the same id")
        known = set(self.byte_encoder.values())
        missing = known - encoder.keys()
        if missing:
            raise ValueError(f"the encoder lacks {len(missing)} of the 256 byte tokens, e.g. {sorted(missing)[:3]}")
        for rank, (a, b) in enumerate(merges):
            for part in (a, b):
                if part not in known:
                    raise ValueError(
                        f"merge {rank} ({a!r}, {b!r}) uses {part!r} before any earlier merge made it: the "
                        f"merges are out of order (each merge may only use bytes and results of earlier merges)")
            if a + b not in encoder:
                raise ValueError(f"merge {rank} ({a!r}, {b!r}) makes {a + b!r}, which the encoder lacks")
            known.add(a + b)

    # --- construction ---------------------------------------------------------------------------

    @classmethod
    def from_files(cls, encoder_json: str | os.PathLike, vocab_bpe: str | os.PathLike, **kwargs) -> ByteLevelBPE:
        """Read GPT-2-format files (``encoder.json``, ``vocab.bpe``)."""
        return cls(_read_encoder(Path(encoder_json)), read_merges(vocab_bpe), **kwargs)

    @classmethod
    def gpt2(cls) -> ByteLevelBPE:
        """GPT-2's tokenizer from the real files (50,257 tokens)."""
        from ._files import gpt2_files

        return cls.from_files(*gpt2_files())

    @classmethod
    def train(cls, text: str | Iterable[str], vocab_size: int, *, special_tokens: Sequence[str] = (ENDOFTEXT,),
              pattern: str = GPT2_PATTERN, min_frequency: int = 2, incremental: bool = True) -> ByteLevelBPE:
        """Learn merges on ``text`` the GPT-2 way (pre-tokenise, bytes, merge; no end-of-word marker:
        the leading space of a piece plays that role). Ids: the 256 bytes in GPT-2's order, the
        merges in the order learned, then ``special_tokens``; ``vocab_size`` counts all of them."""
        floor = 256 + len(special_tokens)
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < floor:
            raise ValueError(f"vocab_size must be an int >= {floor} (256 bytes + special tokens), got {vocab_size!r}")
        pat, enc = regex.compile(pattern), bytes_to_unicode()
        pieces: Counter[str] = Counter()
        for line in [text] if isinstance(text, str) else text:
            pieces.update(pat.findall(line))
        table: Counter[tuple[str, ...]] = Counter()
        for piece, c in pieces.items():
            table[tuple(enc[b] for b in piece.encode("utf-8"))] += c
        learned = learn_merges(table, vocab_size=vocab_size - len(special_tokens), alphabet=enc.values(),
                               min_frequency=min_frequency, incremental=incremental)
        tokens = list(enc.values()) + [a + b for a, b in learned.merges]
        encoder = {}
        for t in tokens:
            encoder.setdefault(t, len(encoder))
        special = {s: len(encoder) + i for i, s in enumerate(special_tokens)}
        encoder.update(special)
        return cls(encoder, learned.merges, special_tokens=special, pattern=pattern)

    def save(self, directory: str | os.PathLike) -> tuple[Path, Path]:
        """Write ``encoder.json`` and ``vocab.bpe`` (GPT-2's formats) into ``directory``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        enc, bpe = d / "encoder.json", d / "vocab.bpe"
        enc.write_text(json.dumps(self.encoder, ensure_ascii=False), encoding="utf-8")
        bpe.write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in self.merges), encoding="utf-8")
        return enc, bpe

    def __len__(self) -> int:
        return len(self.encoder)

    # --- encoding -------------------------------------------------------------------------------

    def to_symbols(self, piece: str) -> list[str]:
        """The initial symbols of a piece: one byte→unicode character per UTF-8 byte."""
        enc = self.byte_encoder
        return [enc[b] for b in piece.encode("utf-8")]

    def bpe(self, piece: str) -> list[str]:
        """The tokens (as strings in the byte alphabet) of one pre-tokenised piece."""
        return apply_merges(self.to_symbols(piece), self.ranks)

    def steps(self, word: str) -> list[MergeStep]:
        """The segmentations of ``word`` merge by merge (for the merge-stepper widget)."""
        pieces = self._pat.findall(word) if isinstance(word, str) else None
        if not pieces or len(pieces) != 1:
            raise ValueError(f"{word!r} is {len(pieces or [])} pre-tokenised pieces ({pieces}); merges never "
                             f"cross pieces, so step through one piece, e.g. {(pieces or [' word'])[0]!r}")
        return merge_steps(self.to_symbols(word), self.ranks)

    def show(self, token: str) -> str:
        """A token in the byte alphabet as readable text (a space shown as ``␣``; a token holding
        part of a multi-byte character shows U+FFFD for it)."""
        raw = bytes(self.byte_decoder[c] for c in token)
        return raw.decode("utf-8", errors="replace").replace(" ", "␣")

    def pieces(self, text: str) -> list[str]:
        """The pre-tokenisation of ``text`` by the regex (no merges yet)."""
        return self._pat.findall(text)

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with special tokens treated as plain text. Text that UTF-8 cannot encode
        (a lone surrogate, e.g. half of an emoji cut out of a UTF-16 string) is first repaired as
        tiktoken repairs it: surrogate pairs are joined, a lone one becomes U+FFFD."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        try:
            return self._encode_ordinary(text)
        except UnicodeEncodeError:
            return self._encode_ordinary(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))

    def _encode_ordinary(self, text: str) -> list[int]:
        cache, ids = self._cache, []
        for piece in self._pat.findall(text):
            got = cache.get(piece)
            if got is None:
                encoder = self.encoder
                got = [encoder[t] for t in self.bpe(piece)]
                if len(cache) >= self.cache_size:
                    cache.clear()
                cache[piece] = got
            ids.extend(got)
        return ids

    def _specials(self, which: Collection[str] | Literal["all"], what: str) -> set[str]:
        if which == "all":
            return set(self.special_tokens)
        if isinstance(which, str):
            raise TypeError(f"{what} must be 'all' or a set of special tokens, got the string {which!r}")
        unknown = set(which) - self.special_tokens.keys()
        if unknown:
            raise ValueError(f"unknown special token(s) {sorted(unknown)} in {what}; this tokenizer's "
                             f"special tokens are {sorted(self.special_tokens)}")
        return set(which)

    def encode(self, text: str, *, allowed_special: Collection[str] | Literal["all"] = (),
               disallowed_special: Collection[str] | Literal["all"] = "all") -> list[int]:
        """Ids of ``text``, as ``tiktoken``'s ``encode``: a special token in ``allowed_special`` is
        encoded as its one id; one in ``disallowed_special`` (all others, by default) raises, so
        that user text cannot smuggle in ``<|endoftext|>``; the rest is :meth:`encode_ordinary`."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        allowed = self._specials(allowed_special, "allowed_special")
        disallowed = self._specials(disallowed_special, "disallowed_special") - allowed
        for tok in disallowed:
            if tok in text:
                raise ValueError(
                    f"the text contains the special token {tok!r}. To encode it as a special token pass "
                    f"allowed_special={{{tok!r}}}; to encode it as plain text pass disallowed_special=() "
                    f"(or call encode_ordinary)")
        if not allowed:
            return self.encode_ordinary(text)
        split = regex.compile("(" + "|".join(regex.escape(t) for t in sorted(allowed, key=len, reverse=True)) + ")")
        ids: list[int] = []
        for i, part in enumerate(split.split(text)):
            if i % 2:
                ids.append(self.special_tokens[part])
            elif part:
                ids.extend(self.encode_ordinary(part))
        return ids

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text`` as readable strings (each decoded on its own; a token that holds
        part of a multi-byte character shows the replacement character)."""
        return [self.decoder_bytes[i].decode("utf-8", errors="replace") for i in self.encode_ordinary(text)]

    # --- decoding -------------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes the ids stand for."""
        try:
            return b"".join(self.decoder_bytes[i] for i in id_list(ids))
        except KeyError as err:
            raise ValueError(f"id {err.args[0]} is not in the vocabulary (0..{len(self.encoder) - 1})") from None

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text the ids stand for (invalid UTF-8 from a cut-off sequence -> U+FFFD, as tiktoken)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)
