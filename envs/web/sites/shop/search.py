"""The shop's search: BM25 over each product's title, type, attributes and description.

Written here in a few lines of pure Python rather than taken from a package, because the shop
must rank identically in the site server (which answers the agent's searches) and in the env
process (which checks, when it makes a task, where the target product ranks), and a catalogue
of a few hundred products needs no more.

**Ranking.** Okapi BM25 with ``k1 = 1.5`` and ``b = 0.75`` and the non-negative idf
``ln(1 + (N - df + 0.5) / (df + 0.5))``, each distinct query term counted once. A product's
document is its title twice (a title match outweighs a description match, as in shop search
engines), its type, its attributes and its description. Products that share no term with the
query are not results. Ties are broken by product id, so a ranking is deterministic.

**Tokens.** Lower case, apostrophes dropped, split on anything that is not a letter or digit
(a decimal such as ``5.0`` stays whole), a short stopword list removed, and a plural ``s``
stripped from words longer than three letters (``shirts`` -> ``shirt``, ``men's`` -> ``men``,
but ``dress`` stays), so ``shirts`` finds shirts.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from agentgym.envs.web.sites.shop.catalog import Product

__all__ = ["SearchIndex", "document_text", "tokenize"]

K1 = 1.5
B = 0.75
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "i", "in", "is", "it",
    "looking", "me", "my", "need", "of", "on", "or", "than", "that", "the", "this", "to",
    "want", "with",
})  # fmt: skip
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def tokenize(text: str) -> list[str]:
    """The terms of ``text`` as the index sees them (see the module docstring)."""
    words = _WORD.findall(text.lower().replace("'", ""))
    return [_singular(w) for w in words if w not in STOPWORDS]


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word.isalpha():
        return word[:-1]
    return word


def document_text(product: Product) -> str:
    """What the index reads of a product."""
    return " ".join(
        [product.title, product.title, product.type, *product.attributes, product.description]
    )


class SearchIndex:
    """BM25 over a fixed set of products; :meth:`search` returns product ids, best first."""

    def __init__(self, products: Iterable[Product]) -> None:
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._length: dict[int, int] = {}
        self._category: dict[int, str] = {}
        for product in products:
            terms = Counter(tokenize(document_text(product)))
            self._length[product.id] = sum(terms.values())
            self._category[product.id] = product.category
            for term, count in terms.items():
                self._postings.setdefault(term, []).append((product.id, count))
        self._average = sum(self._length.values()) / max(1, len(self._length))

    def __len__(self) -> int:
        return len(self._length)

    def scores(self, query: str) -> dict[int, float]:
        """BM25 score of every product that shares a term with ``query``."""
        total = len(self._length)
        scores: dict[int, float] = {}
        for term in dict.fromkeys(tokenize(query)):
            postings = self._postings.get(term, ())
            if not postings:
                continue
            idf = math.log(1 + (total - len(postings) + 0.5) / (len(postings) + 0.5))
            for product_id, count in postings:
                norm = K1 * (1 - B + B * self._length[product_id] / self._average)
                scores[product_id] = scores.get(product_id, 0.0) + idf * (
                    count * (K1 + 1) / (count + norm)
                )
        return scores

    def search(self, query: str, category: str | None = None) -> list[int]:
        """Ids of the products matching ``query`` (in ``category``, if given), best first.

        An empty query lists every product (of the category) in id order: browsing.
        """
        if not tokenize(query):
            ranked: Sequence[int] = sorted(self._length)
        else:
            scores = self.scores(query)
            ranked = sorted(scores, key=lambda pid: (-scores[pid], pid))
        if category is None:
            return list(ranked)
        return [pid for pid in ranked if self._category[pid] == category]
