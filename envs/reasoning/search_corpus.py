"""A fictional encyclopedia generated from a seed, its BM25 index, and multi-hop questions on it.

``reasoning/SearchQA-v0`` asks questions about a world no model has read about: every person,
city, company and invention here is invented, so an answer has to come from the pages.

**The knowledge graph.** :func:`build_corpus` draws, from one seed, 2,964 entities of
eight kinds — countries, mountains, rivers, cities, universities, people, companies and
inventions — with attributes (years, lengths, heights, professions, currencies) and
*functional* relations between them (each subject has exactly one object): a person is born in
a city and studied at a university; a company was founded by a person and is headquartered in
a city; an invention was invented by a person and first manufactured by a company; a city lies
in a country and on a river; a river rises on a mountain; a mountain was first climbed by a
person; and so on (:data:`RELATIONS`). Years are consistent (founders are adults when they
found, universities exist before their students).

**Names.** Names are coined from syllables and unique even after answer normalisation, so a
title names one page. About a fifth of the names are *near-duplicates* of another of the same
kind (``Thuserneport`` and ``Theserne``, ``Lukol Motors`` and ``Lukol Optics``), and people
share surnames, so a search for a name returns look-alikes.

**Pages.** Each entity has one page, ``D0000`` to ``D2963`` in a shuffled order: a title and
two paragraphs that state every *forward* fact of the entity (its own relations and
attributes) and distractor facts of the same shape that no question asks about (a year the
person moved to another city, the university where they later taught, who later led a
company, who patented an improved version of an invention, a charter year of a city). A page
never states a fact whose subject is another entity, so a two-hop question cannot be answered
from one page.

**Questions.** :func:`make_question` composes relations into a question with gold answers
and the pages that support it, in the order a solver needs them: one hop (easy), a chain of
two hops or a comparison of two named entities (medium), a chain of three hops or a comparison
of two entities each reached by one hop (hard). Chains never revisit an entity and never
contain their answer; compared values always differ, so every answer is unique.

**Search.** :class:`SearchIndex` is BM25 (Lucene variant, ``k1=1.5``, ``b=0.75``) from the
``bm25s`` package over title and text, tokenised as ``bm25s`` does by default, built once per
corpus. Ties are broken by page order, so results are deterministic.

:func:`corpus_for_split` builds one corpus and index per split (train, dev and test have
different worlds) once per process; see ``docs/reasoning-search.md`` for timings.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import bm25s
import bm25s.stopwords
import numpy as np

from agentgym.verifiers.text import normalize_answer

__all__ = [
    "COMPARISONS",
    "CORPUS_VERSION",
    "COUNTS",
    "LEVELS",
    "RELATIONS",
    "Corpus",
    "Document",
    "Entity",
    "Hit",
    "Question",
    "Relation",
    "SearchIndex",
    "build_corpus",
    "corpus_for_split",
    "make_question",
    "split_seed",
]

T = TypeVar("T")

CORPUS_VERSION = "v0"
"""Part of every split's corpus seed: a new version is a new world."""

COUNTS = {
    "country": 14,
    "mountain": 80,
    "river": 60,
    "city": 320,
    "university": 90,
    "person": 1400,
    "company": 500,
    "invention": 500,
}
"""Entities (and pages) of each kind in one corpus: 2,964 in all."""

NEAR_DUPLICATE_SHARE = 0.2

OCCUPATIONS = (
    "architect",
    "astronomer",
    "banker",
    "botanist",
    "cartographer",
    "chemist",
    "composer",
    "engineer",
    "geologist",
    "mathematician",
    "merchant",
    "painter",
    "physician",
    "physicist",
    "surveyor",
)
INDUSTRIES = (
    "brewing",
    "chemical",
    "clock-making",
    "glass",
    "optical",
    "printing",
    "railway",
    "shipbuilding",
    "steel",
    "textile",
)
COMPANY_SUFFIXES = (
    "Works",
    "Mills",
    "Foundry",
    "Optics",
    "Motors",
    "Instruments",
    "Industries",
    "Chemicals",
    "Ironworks",
    "Brothers",
)
DEVICES = (
    "engine",
    "loom",
    "lamp",
    "regulator",
    "press",
    "valve",
    "telegraph",
    "condenser",
    "sextant",
    "furnace",
    "pump",
    "turbine",
    "battery",
    "camera",
    "microscope",
    "barometer",
    "lathe",
    "compass",
)
FACULTIES = ("law", "medicine", "music", "engineering", "theology", "astronomy")
TOPICS = (
    "tidal charts",
    "coal gas",
    "lens grinding",
    "bridge design",
    "folk songs",
    "fern classification",
    "comet orbits",
    "city drainage",
    "soil surveys",
    "cotton prices",
    "fever wards",
    "porcelain glazes",
    "railway finance",
    "signal codes",
    "star catalogues",
)
LANDMARKS = ("Bridge", "Tower", "Cathedral", "Market Hall", "Gate", "Abbey", "Lighthouse")

_ONSETS = (
    "b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p",
    "r", "s", "sh", "st", "t", "th", "tr", "v", "z",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ou")
_CODAS = ("", "", "", "", "n", "r", "l", "s", "m", "nd", "rn", "st", "k", "x")


# --------------------------------------------------------------------------- the graph


@dataclass
class Entity:
    """One thing the encyclopedia has a page about.

    Attributes:
        index: its position in :attr:`Corpus.entities` (and its page's: ``D{index:04d}``).
        kind: ``person``, ``city``, ``company``...
        name: the page title.
        attrs: attributes (``birth_year``, ``occupation``...) of the question relations.
        links: relations to other entities, by index (``born_in``, ``founder``...).
        extras: distractor facts and details the pages state but no question asks about.
    """

    index: int
    kind: str
    name: str
    attrs: dict[str, int | str] = field(default_factory=dict)
    links: dict[str, int] = field(default_factory=dict)
    extras: dict[str, int | str] = field(default_factory=dict)


@dataclass(frozen=True)
class Relation:
    """A relation questions ask about: ``(kind, fact)`` gives an entity or an attribute.

    ``question`` asks for the fact of ``{x}``; ``phrase`` names the object as a noun phrase so
    that relations chain (``"the founder of {x}"``); attributes (``target=None``) have none.
    """

    kind: str
    fact: str
    target: str | None
    question: str
    phrase: str = ""


RELATIONS: tuple[Relation, ...] = (
    Relation(
        "person", "born_in", "city", "In which city was {x} born?", "the city where {x} was born"
    ),
    Relation(
        "person",
        "studied_at",
        "university",
        "At which university did {x} study?",
        "the university where {x} studied",
    ),
    Relation("person", "birth_year", None, "In what year was {x} born?"),
    Relation("person", "occupation", None, "What was the profession of {x}?"),
    Relation("company", "founder", "person", "Who founded {x}?", "the founder of {x}"),
    Relation(
        "company",
        "headquarters",
        "city",
        "In which city is {x} headquartered?",
        "the city where {x} is headquartered",
    ),
    Relation("company", "founded", None, "In what year was {x} founded?"),
    Relation("invention", "inventor", "person", "Who invented {x}?", "the inventor of {x}"),
    Relation(
        "invention",
        "manufacturer",
        "company",
        "Which company first manufactured {x}?",
        "the company that first manufactured {x}",
    ),
    Relation("invention", "year", None, "In what year was {x} invented?"),
    Relation(
        "university", "located_in", "city", "In which city is {x}?", "the city where {x} is located"
    ),
    Relation("university", "founded", None, "In what year was {x} founded?"),
    Relation("city", "country", "country", "In which country is {x}?", "the country of {x}"),
    Relation(
        "city", "river", "river", "On which river does {x} lie?", "the river on which {x} lies"
    ),
    Relation("city", "founded", None, "In what year was {x} founded?"),
    Relation("country", "capital", "city", "What is the capital of {x}?", "the capital of {x}"),
    Relation("country", "currency", None, "What is the currency of {x}?"),
    Relation(
        "river",
        "source",
        "mountain",
        "On which mountain does {x} rise?",
        "the mountain on which {x} rises",
    ),
    Relation("river", "length", None, "How long is {x}, in kilometres?"),
    Relation("mountain", "country", "country", "In which country is {x}?", "the country of {x}"),
    Relation(
        "mountain",
        "first_ascent",
        "person",
        "Who first climbed {x}?",
        "the first person to climb {x}",
    ),
    Relation("mountain", "height", None, "How high is {x}, in metres?"),
)

COMPARISONS: dict[tuple[str, str], tuple[str, str]] = {
    ("person", "birth_year"): ("Who was born first, {a} or {b}?", "min"),
    ("company", "founded"): ("Which was founded first, {a} or {b}?", "min"),
    ("university", "founded"): ("Which was founded first, {a} or {b}?", "min"),
    ("city", "founded"): ("Which was founded first, {a} or {b}?", "min"),
    ("invention", "year"): ("Which was invented first, {a} or {b}?", "min"),
    ("river", "length"): ("Which is longer, {a} or {b}?", "max"),
    ("mountain", "height"): ("Which is higher, {a} or {b}?", "max"),
}
"""Attributes two entities can be compared on: the question and which value wins."""

_BY_KIND: dict[str, list[Relation]] = {}
for _relation in RELATIONS:
    _BY_KIND.setdefault(_relation.kind, []).append(_relation)


@dataclass(frozen=True)
class Document:
    """A page: ``doc_id`` (``D0042``), title and text; ``entity`` is the entity's index."""

    doc_id: str
    title: str
    text: str
    entity: int


class Corpus:
    """The entities, their pages and the BM25 index of one generated world.

    Attributes:
        seed: the seed it was generated from.
        entities: the knowledge graph; ``entities[i]`` has the page ``documents[i]``.
        documents: the pages, ``D0000`` onwards.
        index: the BM25 index over the pages.
        build_seconds: how long generating, rendering and indexing took.
    """

    def __init__(self, seed: int, entities: list[Entity]) -> None:
        self.seed = seed
        self.entities = entities
        self.documents = [render(entity, entities) for entity in entities]
        self._by_title = {page_key(doc.title): doc.entity for doc in self.documents}
        self._by_key = {**self._by_title}
        self._by_key.update({page_key(doc.doc_id): doc.entity for doc in self.documents})
        self.index = SearchIndex(self.documents)
        self.build_seconds = 0.0  # set by build_corpus, which also times the generation

    def __len__(self) -> int:
        return len(self.documents)

    def find(self, ref: str) -> Document | None:
        """The page with this title (case, articles and punctuation aside) or id, if any."""
        found = self._by_key.get(page_key(ref))
        return None if found is None else self.documents[found]

    def closest_titles(self, ref: str, count: int = 3) -> list[str]:
        """Titles like ``ref``: very near spellings, then BM25's best, then near spellings."""
        key = page_key(ref)
        similar = difflib.get_close_matches(key, list(self._by_title), count, 0.75)
        near = [k for k in similar if difflib.SequenceMatcher(None, key, k).ratio() >= 0.85]
        found = [self.documents[self._by_title[k]].title for k in near]
        found += [hit.doc.title for hit in self.index.search(ref, count)[0]]
        found += [self.documents[self._by_title[k]].title for k in similar]
        return list(dict.fromkeys(found))[:count]

    def digest(self) -> str:
        """A sha256 of every page: equal digests mean equal corpora."""
        h = hashlib.sha256()
        for doc in self.documents:
            h.update(f"{doc.doc_id}\x1f{doc.title}\x1f{doc.text}\x1e".encode())
        return h.hexdigest()

    def value_text(self, entity: Entity, fact: str) -> str:
        """How a fact of ``entity`` is written on its page (a name or a number)."""
        if fact in entity.links:
            return self.entities[entity.links[fact]].name
        return _written(fact, entity.attrs[fact])


def page_key(ref: str) -> str:
    """How titles are looked up: the answer normalisation (case, punctuation, articles)."""
    return normalize_answer(ref)


# --------------------------------------------------------------------------- generation


class _Names:
    """Coined names, unique after normalisation across the whole corpus."""

    def __init__(self, rng: np.random.Generator, reserved: frozenset[str]) -> None:
        self.rng = rng
        self.taken: set[str] = set()
        self.reserved = reserved

    def coin(self, syllables: tuple[int, int] = (2, 2)) -> str:
        """A fresh pronounceable word, capitalised, not taken by any name yet."""
        while True:
            count = int(self.rng.integers(syllables[0], syllables[1] + 1))
            parts = []
            for i in range(count):
                coda = self._pick(_CODAS) if i == count - 1 or self.rng.random() < 0.15 else ""
                parts.append(self._pick(_ONSETS) + self._pick(_VOWELS) + coda)
            word = "".join(parts)
            if 4 <= len(word) <= 9 and self.free(word):
                return word.capitalize()

    def mutate(self, word: str) -> str:
        """A near-duplicate of ``word``: a letter or two added, or a vowel changed."""
        lower = word.lower()
        vowels = [i for i, ch in enumerate(lower) if ch in "aeiou"]
        for _ in range(50):
            if not vowels or self.rng.random() < 0.5:
                candidate = lower + self._pick(("a", "e", "o", "s", "en"))
            else:
                at = self._pick(vowels)
                candidate = lower[:at] + self._pick(tuple("aeiou")) + lower[at + 1 :]
            if candidate != lower and self.free(candidate):
                return candidate.capitalize()
        return self.coin()

    def free(self, name: str) -> bool:
        key = normalize_answer(name)
        if not key or key in self.taken or key in self.reserved:
            return False
        return not any(bad in key for bad in _OFFENSIVE)

    def claim(self, name: str) -> str:
        key = normalize_answer(name)
        if not self.free(name):
            raise ValueError(f"name {name!r} is taken")
        self.taken.add(key)
        return name

    def _pick(self, options: Sequence[T]) -> T:
        return options[int(self.rng.integers(len(options)))]


class _Builder:
    """Draws the graph kind by kind (later kinds refer to earlier ones), then shuffles pages."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        reserved = {normalize_answer(w) for w in (*bm25s.stopwords.STOPWORDS_EN, *_TEMPLATE_WORDS)}
        self.names = _Names(self.rng, frozenset(reserved))
        self.entities: list[Entity] = []
        self.of_kind: dict[str, list[int]] = {kind: [] for kind in COUNTS}
        self.stems: dict[str, list[tuple[str, int]]] = {kind: [] for kind in COUNTS}

    def build(self) -> list[Entity]:
        for kind, count in COUNTS.items():
            for _ in range(count):
                entity = Entity(len(self.entities), kind, "")
                getattr(self, f"_{kind}")(entity)
                self.entities.append(entity)
                self.of_kind[kind].append(entity.index)
        for country in self.of_kind["country"]:
            self._capital(self.entities[country])
        for mountain in self.of_kind["mountain"]:  # climbed by people drawn after mountains
            self._ascent(self.entities[mountain])
        return self._shuffled()

    # ------------------------------------------------------------- names

    def _named(
        self, e: Entity, make: Callable[[str], str], syllables: tuple[int, int] = (2, 2)
    ) -> None:
        """Name ``e`` with ``make(stem)``; the stem is fresh or copies an earlier entity's."""
        earlier = self.stems[e.kind]
        while True:
            e.extras.pop("look_alike", None)
            if earlier and self.rng.random() < NEAR_DUPLICATE_SHARE:
                stem, other = earlier[int(self.rng.integers(len(earlier)))]
                keep = e.kind in ("person", "company", "invention") and self.rng.random() < 0.5
                stem = stem if keep else self.names.mutate(stem)
                e.extras["look_alike"] = other
            else:
                stem = self.names.coin(syllables)
            name = make(stem)
            if self.names.free(name):
                e.name = self.names.claim(name)
                earlier.append((stem, e.index))
                if "look_alike" in e.extras:
                    self.entities[int(e.extras["look_alike"])].extras.setdefault(
                        "look_alike", e.index
                    )
                return

    # ------------------------------------------------------------- kinds

    def _country(self, e: Entity) -> None:
        self._named(e, lambda stem: stem + self._pick(("ia", "and", "os", "ar", "")))
        e.attrs["currency"] = self.names.claim(self.names.coin((2, 2)).lower())
        e.extras["independence"] = self._int(1600, 1950)
        e.extras["region"] = self._pick(("north", "south", "east", "west", "centre"))
        e.extras["millions"] = self._int(1, 60)

    def _mountain(self, e: Entity) -> None:
        self._named(e, lambda stem: self._pick(("Mount {}", "{} Peak")).format(stem))
        e.links["country"] = self._any("country")
        e.attrs["height"] = self._int(1200, 8400)
        e.extras["snow_months"] = self._int(2, 12)

    def _river(self, e: Entity) -> None:
        self._named(e, lambda stem: f"{stem} River")
        e.links["source"] = self._any("mountain")
        e.attrs["length"] = self._int(80, 3200)
        e.extras["sea"] = f"{self.names.claim(self.names.coin((2, 2)))} Sea"
        e.extras["navigable"] = self._int(10, 70)

    def _city(self, e: Entity) -> None:
        suffixes = ("", "", "", "holm", "ford", "vik", "burg", "port", "mere")
        self._named(e, lambda stem: stem + self._pick(suffixes), (1, 2))
        countries = self.of_kind["country"]
        made = len(self.of_kind["city"])  # every country gets a city before any gets two
        e.links["country"] = countries[made] if made < len(countries) else self._any("country")
        if self.rng.random() < 0.75:
            e.links["river"] = self._any("river")
        e.attrs["founded"] = self._int(800, 1700)
        e.extras["charter"] = int(e.attrs["founded"]) + self._int(20, 300)
        e.extras["population"] = self._int(8, 2400) * 1000
        landmark = f"{self.names.claim(self.names.coin())} {self._pick(LANDMARKS)}"
        e.extras["landmark"] = landmark

    def _university(self, e: Entity) -> None:
        forms = ("{} University", "University of {}", "{} Institute", "{} College")
        self._named(e, lambda stem: self._pick(forms).format(stem))
        e.links["located_in"] = self._any("city")
        e.attrs["founded"] = self._int(1150, 1850)
        e.extras["faculty"] = self._pick(FACULTIES)
        e.extras["faculty_year"] = int(e.attrs["founded"]) + self._int(15, 150)
        e.extras["volumes"] = self._int(20, 3000) * 1000

    def _person(self, e: Entity) -> None:
        self._named(e, lambda stem: f"{self.names.coin()} {stem}", (1, 3))
        birth = self._int(1750, 1930)
        e.attrs["birth_year"] = birth
        e.attrs["occupation"] = self._pick(OCCUPATIONS)
        e.links["born_in"] = self._any("city")
        universities = self.of_kind["university"]
        open_then = [
            u for u in universities if int(self.entities[u].attrs["founded"]) <= birth + 17
        ]
        e.links["studied_at"] = self._pick(open_then)
        e.extras["death_year"] = birth + self._int(40, 95)
        e.extras["pronoun"] = self._pick(("he", "she"))
        e.extras["topic"] = self._pick(TOPICS)
        if self.rng.random() < 0.6:
            e.extras["moved_to"] = self._other("city", e.links["born_in"])
            e.extras["moved_year"] = birth + self._int(18, 40)
        if self.rng.random() < 0.4:
            e.extras["taught_at"] = self._other("university", e.links["studied_at"])

    def _company(self, e: Entity) -> None:
        self._named(e, lambda stem: f"{stem} {self._pick(COMPANY_SUFFIXES)}")
        founder = self._any("person")
        e.links["founder"] = founder
        e.links["headquarters"] = self._any("city")
        born = int(self.entities[founder].attrs["birth_year"])
        e.attrs["founded"] = min(1990, born + self._int(25, 60))
        e.extras["industry"] = self._pick(INDUSTRIES)
        e.extras["employees"] = self._int(2, 400) * 25
        if self.rng.random() < 0.5:
            e.extras["branch"] = self._other("city", e.links["headquarters"])
            e.extras["branch_year"] = int(e.attrs["founded"]) + self._int(5, 40)
        if self.rng.random() < 0.5:
            e.extras["led_by"] = self._other("person", founder)
            e.extras["led_year"] = int(e.attrs["founded"]) + self._int(10, 50)

    def _invention(self, e: Entity) -> None:
        self._named(e, lambda stem: f"{stem} {self._pick(DEVICES)}")
        inventor = self._any("person")
        e.links["inventor"] = inventor
        year = min(1995, int(self.entities[inventor].attrs["birth_year"]) + self._int(22, 65))
        e.attrs["year"] = year
        companies = self.of_kind["company"]
        makers = [c for c in companies if int(self.entities[c].attrs["founded"]) <= year]
        if makers:
            e.links["manufacturer"] = self._pick(makers)
        e.extras["weight"] = self._int(2, 900)
        if self.rng.random() < 0.5:
            e.extras["improved_by"] = self._other("person", inventor)
            e.extras["improved_year"] = year + self._int(3, 30)

    def _capital(self, e: Entity) -> None:
        cities = [c for c in self.of_kind["city"] if self.entities[c].links["country"] == e.index]
        e.links["capital"] = max(cities, key=lambda c: (self.entities[c].extras["population"], -c))
        e.extras["borders"] = self._other("country", e.index)

    def _ascent(self, e: Entity) -> None:
        climber = self._any("person")
        e.links["first_ascent"] = climber
        e.extras["ascent_year"] = int(self.entities[climber].attrs["birth_year"]) + self._int(
            19, 45
        )
        if self.rng.random() < 0.5:
            e.extras["route_by"] = self._other("person", climber)
            e.extras["route_year"] = int(e.extras["ascent_year"]) + self._int(2, 60)

    # ------------------------------------------------------------- helpers

    def _int(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high + 1))

    def _any(self, kind: str) -> int:
        return self._pick(self.of_kind[kind])

    def _other(self, kind: str, besides: int) -> int:
        while True:
            choice = self._any(kind)
            if choice != besides:
                return choice

    def _pick(self, options: Sequence[T]) -> T:
        return options[int(self.rng.integers(len(options)))]

    def _shuffled(self) -> list[Entity]:
        """Renumber the entities in a random order, so page ids say nothing about kinds."""
        order = [int(old) for old in self.rng.permutation(len(self.entities))]
        new_index = {old: new for new, old in enumerate(order)}
        shuffled = []
        for new, old in enumerate(order):
            entity = self.entities[old]
            entity.index = new
            entity.links = {k: new_index[v] for k, v in entity.links.items()}
            for key in _EXTRA_LINKS:
                if key in entity.extras:
                    entity.extras[key] = new_index[int(entity.extras[key])]
            shuffled.append(entity)
        return shuffled


_EXTRA_LINKS = (
    "moved_to",
    "taught_at",
    "branch",
    "led_by",
    "improved_by",
    "route_by",
    "borders",
    "look_alike",
)
"""Extras that hold entity indexes (renumbered with the links)."""


def build_corpus(seed: int) -> Corpus:
    """Generate the world of ``seed``: entities, pages and BM25 index (about a second)."""
    started = time.perf_counter()
    corpus = Corpus(seed, _Builder(seed).build())
    corpus.build_seconds = time.perf_counter() - started
    return corpus


def split_seed(split: str) -> int:
    """The corpus seed of a split: a stable hash of the split and :data:`CORPUS_VERSION`."""
    digest = hashlib.blake2b(f"search-qa:{CORPUS_VERSION}:{split}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big") >> 1


def corpus_for_split(split: str) -> Corpus:
    """The corpus of a split (its own world), built on first use and kept for the process.

    Thread-safe: episodes stepped in worker threads that start together build it once.
    """
    with _BUILDING:
        if split not in _CORPORA:
            _CORPORA[split] = build_corpus(split_seed(split))
        return _CORPORA[split]


_CORPORA: dict[str, Corpus] = {}
_BUILDING = threading.Lock()


# --------------------------------------------------------------------------- pages


def render(e: Entity, entities: Sequence[Entity]) -> Document:
    """The page of ``e``: its forward facts and its distractors, never another entity's facts."""

    def name(i: int | str) -> str:
        return entities[int(i)].name

    def mention(i: int | str) -> str:
        return _mention(entities[int(i)])

    x, a, links = e.extras, e.attrs, e.links
    if e.kind == "person":
        he = str(x["pronoun"])
        his = "his" if he == "he" else "her"
        first = [
            f"{e.name} ({a['birth_year']}\u2013{x['death_year']}) was {_a(str(a['occupation']))}.",
            f"{he.capitalize()} was born in {name(links['born_in'])} in {a['birth_year']} and "
            f"studied at {mention(links['studied_at'])}.",
        ]
        second = []
        if "moved_to" in x:
            second.append(
                f"In {x['moved_year']} {he} moved to {name(x['moved_to'])}, where {he} spent "
                f"most of {his} working life."
            )
        if "taught_at" in x:
            second.append(f"{he.capitalize()} later taught at {mention(x['taught_at'])}.")
        second.append(f"{he.capitalize()} is remembered for {his} work on {x['topic']}.")
        second.append(f"{e.name} died in {x['death_year']}.")
    elif e.kind == "company":
        first = [
            f"{e.name} is {_a(str(x['industry']))} company headquartered in "
            f"{name(links['headquarters'])}.",
            f"It was founded in {a['founded']} by {name(links['founder'])}.",
        ]
        second = []
        if "branch" in x:
            second.append(f"In {x['branch_year']} it opened a second works in {name(x['branch'])}.")
        if "led_by" in x:
            second.append(f"From {x['led_year']} the firm was led by {name(x['led_by'])}.")
        second.append(f"At its height the firm employed {x['employees']:,} people.")
    elif e.kind == "invention":
        first = [
            f"{_cap(_mention(e))} is a {e.name.split()[-1]} invented by {name(links['inventor'])} "
            f"in {a['year']}."
        ]
        if "manufacturer" in links:
            first.append(f"It was first manufactured by {name(links['manufacturer'])}.")
        else:
            first.append("No company manufactured it in the inventor's lifetime.")
        second = []
        if "improved_by" in x:
            second.append(
                f"An improved version was patented by {name(x['improved_by'])} in "
                f"{x['improved_year']}."
            )
        second.append(f"The first model weighed {x['weight']} kilograms.")
        second.append(f"Several examples of {_mention(e)} survive in museums.")
    elif e.kind == "university":
        first = [
            f"{_cap(_mention(e))} is a university located in {name(links['located_in'])}.",
            f"It was founded in {a['founded']}.",
        ]
        second = [
            f"Its faculty of {x['faculty']} was established in {x['faculty_year']}.",
            f"Its library holds {x['volumes']:,} volumes.",
        ]
    elif e.kind == "city":
        river = f", on {mention(links['river'])}" if "river" in links else ""
        first = [
            f"{e.name} is a city in {name(links['country'])}{river}.",
            f"It was founded in {a['founded']} and has about {x['population']:,} inhabitants.",
        ]
        second = [
            f"{e.name} was granted a town charter in {x['charter']}.",
            f"Its best-known landmark is the {x['landmark']}.",
        ]
    elif e.kind == "country":
        first = [
            f"{e.name} is a country in the {x['region']} of the continent.",
            f"Its capital is {name(links['capital'])}, and its currency is the {a['currency']}.",
        ]
        second = [
            f"{e.name} became independent in {x['independence']} and has about "
            f"{x['millions']} million inhabitants.",
            f"It borders {name(x['borders'])}.",
        ]
    elif e.kind == "river":
        first = [
            f"{_cap(_mention(e))} is a river {a['length']:,} kilometres long.",
            f"It rises on {name(links['source'])} and flows into the {x['sea']}.",
        ]
        second = [f"Boats can navigate its last {x['navigable']} kilometres."]
    else:  # mountain
        first = [
            f"{e.name} is a mountain in {name(links['country'])}, {a['height']:,} metres high.",
            f"It was first climbed in {x['ascent_year']} by {name(links['first_ascent'])}.",
        ]
        second = []
        if "route_by" in x:
            second.append(
                f"A second route to the summit was opened by {name(x['route_by'])} in "
                f"{x['route_year']}."
            )
        second += [f"Its summit is covered in snow for {x['snow_months']} months of the year."]
    if "look_alike" in x:
        second.append(f"Not to be confused with {mention(x['look_alike'])}.")
    text = f"{e.name}\n\n" + " ".join(first) + "\n\n" + " ".join(second)
    return Document(f"D{e.index:04d}", e.name, text, e.index)


def _mention(e: Entity) -> str:
    """The entity as a phrase in a sentence: 'the Sallow River', 'Orlen Vask'."""
    needs_article = e.kind in ("invention", "river") or e.name.startswith("University of ")
    return f"the {e.name}" if needs_article else e.name


def _a(word: str) -> str:
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _written(fact: str, value: int | str) -> str:
    """A value as pages write it: lengths and heights with thousands separators."""
    return f"{value:,}" if fact in ("length", "height") else str(value)


_OFFENSIVE = (
    "anal", "anus", "bitch", "boob", "butt", "cock", "crap", "cum", "cunt", "damn", "dick",
    "fag", "fuck", "gay", "hell", "homo", "jew", "kill", "nazi", "nig", "nude", "piss", "porn",
    "rape", "semen", "sex", "shit", "slut", "tits", "whore",
)  # fmt: skip
"""Substrings no coined name may contain."""

_TEMPLATE_WORDS = (
    "born", "studied", "moved", "where", "spent", "most", "working", "life", "later", "taught",
    "remembered", "work", "died", "company", "headquartered", "founded", "opened", "second",
    "works", "firm", "led", "height", "employed", "people", "invented", "first", "manufactured",
    "manufacture", "inventor", "lifetime", "improved", "version", "patented", "model", "weighed",
    "kilograms", "examples", "survive", "museums", "university", "located", "faculty",
    "established", "library", "holds", "volumes", "city", "inhabitants", "granted", "town",
    "charter", "best", "known", "landmark", "country", "continent", "capital", "currency",
    "independent", "million", "borders", "river", "kilometres", "long", "rises", "flows", "boats",
    "navigate", "mountain", "metres", "high", "climbed", "route", "summit", "snow", "covered",
    "months", "year", "confused", "north", "south", "east", "west", "centre", "sea", "peak",
    "mount",
)  # fmt: skip
"""Words of the page templates; no coined name may be one of them."""


# --------------------------------------------------------------------------- search


@dataclass(frozen=True)
class Hit:
    """One search result: the page, its BM25 score and the sentence that best matches."""

    doc: Document
    score: float
    snippet: str


class SearchIndex:
    """BM25 over the pages with ``bm25s``: built once, queried in well under a millisecond."""

    snippet_length = 200

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = list(documents)
        self.retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        self.retriever.index([self.terms(doc.text) for doc in documents], show_progress=False)
        self._sentences = [
            [(text, frozenset(self.terms(text))) for text in _SENTENCE.split(doc.text)[1:]]
            for doc in documents
        ]

    @staticmethod
    def terms(text: str) -> list[str]:
        """The indexed terms of a text: lower-cased words of 2+ characters, no stopwords.

        This is ``bm25s.tokenize``'s default (its token pattern and English stopwords) without
        the progress-bar machinery that costs it a tenth of a millisecond per query.
        """
        return [word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS]

    def scores(self, terms: list[str]) -> np.ndarray:
        """The BM25 score of every page for the query ``terms`` (zeros when there are none)."""
        if not terms:
            return np.zeros(len(self.documents), dtype=np.float32)
        scores: np.ndarray = self.retriever.get_scores(terms)  # bm25s has no annotations
        return scores

    def search(self, query: str, k: int = 5) -> tuple[list[Hit], int]:
        """The ``k`` best pages (score, then page order) and how many pages match at all."""
        return self.rank(self.terms(query), k)

    def rank(self, terms: list[str], k: int = 5) -> tuple[list[Hit], int]:
        """:meth:`search` for a query already split into :meth:`terms`."""
        scores = self.scores(terms)
        matching = np.flatnonzero(scores > 0)
        ranked = matching[np.lexsort((matching, -scores[matching]))][:k]
        words = set(terms)
        hits = [
            Hit(self.documents[i], float(scores[i]), self.snippet(int(i), words)) for i in ranked
        ]
        return hits, len(matching)

    def snippet(self, index: int, words: set[str]) -> str:
        """The sentence of page ``index`` holding the most query words (the first, on a tie)."""
        sentences = self._sentences[index]
        best = max(range(len(sentences)), key=lambda i: (len(words & sentences[i][1]), -i))
        text = sentences[best][0]
        if len(text) > self.snippet_length:
            text = text[: self.snippet_length - 1].rsplit(" ", 1)[0] + "…"
        return text


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n\n")  # the title ends at the first blank line
_WORD = re.compile(r"(?u)\b\w\w+\b")  # bm25s's default token pattern
_STOPWORDS = frozenset(bm25s.stopwords.STOPWORDS_EN)


# --------------------------------------------------------------------------- questions


@dataclass(frozen=True)
class Question:
    """A question on a corpus, with what answers it and where the answer comes from.

    Attributes:
        text: the question.
        golds: the acceptable answers, the canonical one first.
        support: the pages (entity indexes) the answer rests on, in the order a solver
            reads them.
        kind: ``1-hop``, ``2-hop``, ``3-hop``, ``comparison`` or ``bridge comparison``.
        facts: ``(entity index, fact)`` of every fact the answer rests on, in order.
    """

    text: str
    golds: tuple[str, ...]
    support: tuple[int, ...]
    kind: str
    facts: tuple[tuple[int, str], ...]


LEVELS = ("easy", "medium", "hard")
"""easy: one hop; medium: two hops or a comparison; hard: three hops or a bridged comparison."""

_START_WEIGHTS = np.sqrt(np.array(list(COUNTS.values()), dtype=float))
_START_WEIGHTS /= _START_WEIGHTS.sum()


def make_question(corpus: Corpus, difficulty: str, rng: np.random.Generator) -> Question:
    """A question of ``difficulty`` on ``corpus``, drawn with ``rng``."""
    if difficulty == "easy":
        return _chain(corpus, 1, rng)
    if difficulty not in LEVELS:
        raise ValueError(f"unknown difficulty {difficulty!r}; use one of {list(LEVELS)}")
    if rng.random() < 0.7:
        return _chain(corpus, 2 if difficulty == "medium" else 3, rng)
    return _comparison(corpus, rng, bridged=difficulty == "hard")


def _chain(corpus: Corpus, hops: int, rng: np.random.Generator) -> Question:
    """Follow ``hops`` relations from a random entity; ask for the last one's object."""
    entities, kinds = corpus.entities, list(COUNTS)
    of_kind = _of_kind(corpus)
    while True:
        kind = kinds[int(rng.choice(len(kinds), p=_START_WEIGHTS))]
        pool = of_kind[kind]
        current = entities[pool[int(rng.integers(len(pool)))]]
        visited, steps = {current.index}, []
        for step in range(hops):
            options = [
                r
                for r in _BY_KIND[current.kind]
                if (r.fact in current.links and current.links[r.fact] not in visited)
                or (r.target is None and step == hops - 1)
            ]
            if not options:
                break
            relation = options[int(rng.integers(len(options)))]
            steps.append((current, relation))
            if relation.target is not None:
                current = entities[current.links[relation.fact]]
                visited.add(current.index)
        if len(steps) < hops:
            continue
        mention = _mention(steps[0][0])
        for _subject, relation in steps[:-1]:
            mention = relation.phrase.format(x=mention)
        subject, relation = steps[-1]
        text = relation.question.format(x=mention)
        golds = _golds(corpus, subject, relation.fact)
        if _contains(text, golds[0]):
            continue  # the answer would be in the question
        return Question(
            text=_cap(text),
            golds=golds,
            support=tuple(s.index for s, _ in steps),
            kind=f"{hops}-hop",
            facts=tuple((s.index, r.fact) for s, r in steps),
        )


def _comparison(corpus: Corpus, rng: np.random.Generator, bridged: bool) -> Question:
    """Which of two entities has the smaller (or larger) value of an attribute.

    Bridged: each of the two is named through one relation (``the founder of X``), so each
    side takes two pages.
    """
    entities, of_kind = corpus.entities, _of_kind(corpus)
    choices = [key for key in COMPARISONS if not bridged or _INTO[key[0]]]
    while True:
        kind, attr = choices[int(rng.integers(len(choices)))]
        template, wins = COMPARISONS[kind, attr]
        # (pages, mention, entity compared) of each side
        sides: list[tuple[tuple[tuple[int, str], ...], str, Entity]] = []
        for _ in range(2):
            if bridged:
                relation = _INTO[kind][int(rng.integers(len(_INTO[kind])))]
                pool = of_kind[relation.kind]
                start = entities[pool[int(rng.integers(len(pool)))]]
                if relation.fact not in start.links:
                    break
                target = entities[start.links[relation.fact]]
                pages = ((start.index, relation.fact), (target.index, attr))
                sides.append((pages, relation.phrase.format(x=_mention(start)), target))
            else:
                pool = of_kind[kind]
                target = entities[pool[int(rng.integers(len(pool)))]]
                sides.append((((target.index, attr),), _mention(target), target))
        if len(sides) < 2:
            continue
        (pages_a, mention_a, a), (pages_b, mention_b, b) = sides
        distinct = {index for index, _ in pages_a + pages_b}
        if len(distinct) < 2 * len(pages_a) or a.attrs[attr] == b.attrs[attr]:
            continue  # an entity twice, or a tie
        earlier = int(a.attrs[attr]) < int(b.attrs[attr])
        winner = a if earlier == (wins == "min") else b
        text = template.format(a=mention_a, b=mention_b)
        golds = _aliases(winner)
        if bridged and _contains(text, golds[0]):
            continue
        return Question(
            text=_cap(text),
            golds=golds,
            support=tuple(index for index, _ in pages_a + pages_b),
            kind="bridge comparison" if bridged else "comparison",
            facts=pages_a + pages_b,
        )


_INTO: dict[str, list[Relation]] = {
    kind: [r for r in RELATIONS if r.target == kind] for kind in COUNTS
}
"""The relations that lead to each kind (to name an entity through another)."""


def _golds(corpus: Corpus, subject: Entity, fact: str) -> tuple[str, ...]:
    if fact in subject.links:
        return _aliases(corpus.entities[subject.links[fact]])
    value = subject.attrs[fact]
    if fact == "length":
        return (str(value), f"{value} km", f"{value} kilometres")
    if fact == "height":
        return (str(value), f"{value} m", f"{value} metres")
    return (str(value),)


def _aliases(entity: Entity) -> tuple[str, ...]:
    """An entity's name and the short forms that name it as well (``Sallow`` for a river)."""
    name = entity.name
    if entity.kind == "river":
        return (name, name.removesuffix(" River"))
    if entity.kind == "mountain":
        return (name, name.removeprefix("Mount ").removesuffix(" Peak"))
    return (name,)


def _contains(text: str, answer: str) -> bool:
    return f" {normalize_answer(answer)} " in f" {normalize_answer(text)} "


@functools.lru_cache(maxsize=8)
def _of_kind(corpus: Corpus) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {kind: [] for kind in COUNTS}
    for entity in corpus.entities:
        found[entity.kind].append(entity.index)
    return found
