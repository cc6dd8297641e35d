"""A small synthetic world for chapter 12a: people, cities and countries, a knowledge graph
(KG) of facts about them, and English-like text in which some of the facts occur.

The world has structure a knowledge-graph embedding can learn: every city lies in one country,
every country has one capital, every person was born in one city, and a person's citizenship
follows by composition (``citizen_of = located_in . born_in``). The text states most facts;
for a share of the people (``held_out``) the birthplace is in the KG only. A cloze probe on those
people ("X was born in [MASK] .") asks for a fact a language model cannot read in its corpus.

Everything is plain Python data and deterministic in the seed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

RELATIONS: tuple[str, ...] = ("born_in", "citizen_of", "located_in", "capital_of")
SPECIALS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
BORN = ("{p} was born in {c} .", "the birthplace of {p} is {c} .", "{p} comes from {c} .")
LIVES = ("{p} lives in {c} .", "{p} moved to {c} .")
CITIZEN = ("{p} is a citizen of {k} .",)
LOCATED = ("{c} is a city in {k} .", "{c} lies in {k} .")
CAPITAL = ("{c} is the capital of {k} .",)
JOBS = ("baker", "doctor", "farmer", "teacher", "painter", "pilot")
WORKS = ("{p} works as a {j} .",)
PROBE = "{p} was born in [MASK] ."
_C, _V = "bdfgklmnprstvz", "aeiou"


@dataclass(frozen=True)
class WorldConfig:
    """Sizes of the world.

    Attributes:
        n_countries, cities_per_country, n_people: how many entities of each kind.
        held_out: share of people whose birthplace is only in the KG, not in the text.
        citizen_in_text: share of people whose citizenship the text states.
        zipf: birthplaces are drawn with probability ~ 1 / rank**zipf (a frequency baseline can
            then beat chance).
        seed: the world's seed.
    """

    n_countries: int = 6
    cities_per_country: int = 4
    n_people: int = 300
    held_out: float = 0.3
    citizen_in_text: float = 0.5
    zipf: float = 0.7
    seed: int = 0

    def validate(self) -> None:
        for name in ("n_countries", "cities_per_country", "n_people"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"WorldConfig.{name} must be a positive int, got {v!r}")
        if self.n_people < 4:
            raise ValueError(f"WorldConfig.n_people must be at least 4, got {self.n_people}")
        for name in ("held_out", "citizen_in_text"):
            v = getattr(self, name)
            if not 0.0 <= v < 1.0:
                raise ValueError(f"WorldConfig.{name} must be in [0, 1), got {v!r}")
        if self.zipf < 0:
            raise ValueError(f"WorldConfig.zipf must be >= 0, got {self.zipf!r}")


@dataclass
class World:
    """Entities, facts, text and probes of one synthetic world.

    Attributes:
        entities: every entity name (people, then cities, then countries); the index is its id.
        kind: ``"person" | "city" | "country"`` per entity.
        triples: the KG, ``(head id, relation id, tail id)``.
        sentences: the text corpus, whitespace-tokenised.
        held_out: people (ids) whose birthplace is not in the text.
        seen: people whose birthplace is in the text.
        born: person id -> city id.
    """

    config: WorldConfig
    entities: list[str]
    kind: list[str]
    triples: list[tuple[int, int, int]]
    sentences: list[list[str]]
    held_out: list[int]
    seen: list[int]
    born: dict[int, int]
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self):
        self.index = {name: i for i, name in enumerate(self.entities)}

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    @property
    def cities(self) -> list[int]:
        return [i for i, k in enumerate(self.kind) if k == "city"]

    def probe(self, people: list[int]) -> tuple[list[list[str]], list[int]]:
        """Cloze sentences ``"X was born in [MASK] ."`` for ``people`` and their gold cities."""
        bad = [p for p in people if p not in self.born]
        if bad:
            raise ValueError(f"probe: {bad[:3]} are not people of this world")
        return ([PROBE.format(p=self.entities[p]).split() for p in people],
                [self.born[p] for p in people])


def _names(rng: np.random.Generator, n: int, syllables: int, suffix: str, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        name = "".join(rng.choice(list(_C)) + rng.choice(list(_V)) for _ in range(syllables)) + suffix
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


def make_world(config: WorldConfig | None = None) -> World:
    """Generate a world: names, the KG and the text (see the module docstring)."""
    c = config or WorldConfig()
    c.validate()
    rng = np.random.default_rng(c.seed)
    taken = set(SPECIALS) | {w for t in BORN + LIVES + CITIZEN + LOCATED + CAPITAL + WORKS + (PROBE,)
                             for w in t.split()} | set(JOBS) | set(RELATIONS)
    countries = _names(rng, c.n_countries, 2, "ia", taken)
    n_cities = c.n_countries * c.cities_per_country
    cities = _names(rng, n_cities, 2, "n", taken)
    people = _names(rng, c.n_people, 2, "", taken)
    entities = people + cities + countries
    kind = ["person"] * c.n_people + ["city"] * n_cities + ["country"] * c.n_countries
    p0, c0, k0 = 0, c.n_people, c.n_people + n_cities
    rel = {r: i for i, r in enumerate(RELATIONS)}
    country_of = {c0 + i: k0 + i // c.cities_per_country for i in range(n_cities)}
    triples: list[tuple[int, int, int]] = []
    text: list[list[str]] = []
    name = entities.__getitem__
    for city, country in country_of.items():
        triples.append((city, rel["located_in"], country))
        text.append(rng.choice(LOCATED).format(c=name(city), k=name(country)).split())
    for k in range(c.n_countries):
        capital = c0 + k * c.cities_per_country + int(rng.integers(c.cities_per_country))
        triples.append((capital, rel["capital_of"], k0 + k))
        text.append(CAPITAL[0].format(c=name(capital), k=name(k0 + k)).split())
    weights = 1.0 / np.arange(1, n_cities + 1) ** c.zipf
    order = rng.permutation(n_cities)
    prob = np.empty(n_cities)
    prob[order] = weights / weights.sum()
    n_held = int(round(c.held_out * c.n_people))
    held = set(rng.choice(c.n_people, size=n_held, replace=False).tolist())
    born: dict[int, int] = {}
    for p in range(p0, c.n_people):
        city = c0 + int(rng.choice(n_cities, p=prob))
        born[p] = city
        triples.append((p, rel["born_in"], city))
        triples.append((p, rel["citizen_of"], country_of[city]))
        if p not in held:
            text.append(rng.choice(BORN).format(p=name(p), c=name(city)).split())
        if rng.random() < c.citizen_in_text:
            text.append(CITIZEN[0].format(p=name(p), k=name(country_of[city])).split())
        lives = city if rng.random() < 0.3 else c0 + int(rng.integers(n_cities))
        text.append(rng.choice(LIVES).format(p=name(p), c=name(lives)).split())
        text.append(WORKS[0].format(p=name(p), j=rng.choice(JOBS)).split())
    order = rng.permutation(len(text))
    return World(c, entities, kind, triples, [text[i] for i in order], sorted(held),
                 sorted(set(range(c.n_people)) - held), born)


def vocabulary(world: World) -> dict[str, int]:
    """Word -> id: the specials first (ids 0-4, as :class:`~companion.transformer.bert.BertConfig`
    expects), then every word of the text, the entity names and the relation names."""
    words = Counter(w for s in world.sentences for w in s)
    extra = [w for w in list(world.entities) + list(RELATIONS) + PROBE.split() if w not in words]
    vocab = {w: i for i, w in enumerate(SPECIALS)}
    for w in sorted(words) + sorted(set(extra)):
        vocab.setdefault(w, len(vocab))
    return vocab


def birth_frequency(world: World) -> Counter:
    """How often each city is a birthplace *in the text* (the frequency baseline's counts)."""
    return Counter(world.born[p] for p in world.seen)
