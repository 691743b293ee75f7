"""Benchmark: building SearchQA's corpus and BM25 index, querying it, and the env's search step.

Not a test (these machines are noisy): it prints what one process measures.

* **build** — generating the knowledge graph, rendering the pages and building the ``bm25s``
  index of one split's corpus (what the first ``reset`` of a split pays, once per process);
* **BM25** — ``bm25s`` alone on pre-tokenised queries: ``retrieve`` in one batch (queries/s)
  and ``get_scores`` one query at a time (ms/query);
* **search** — :meth:`SearchIndex.search`, what the env calls: tokenising, scoring, a
  deterministic top 5 and a snippet per hit (ms/query);
* **step** — ``env.step("search[...]")`` and ``env.step("read[...]")`` through the wrappers
  ``agentgym.make`` adds (ms/step).

Queries are page titles, question texts and pairs of random vocabulary words, drawn with a
fixed seed.

    python tests/perf/bench_search.py [--split dev] [--queries 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import agentgym
from agentgym.envs.reasoning.search_corpus import (
    Corpus,
    SearchIndex,
    build_corpus,
    make_question,
    split_seed,
)


def timed(function, *args):
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def build(split: str) -> Corpus:
    corpus = build_corpus(split_seed(split))
    index, bm25_build = timed(SearchIndex, corpus.documents)
    characters = sum(len(d.text) for d in corpus.documents)
    print(
        f"corpus {split!r}: {len(corpus):,} pages, {characters:,} characters, "
        f"{len(index.retriever.vocab_dict):,} terms"
    )
    print(
        f"  build: {corpus.build_seconds:.2f} s in all; the bm25s index (tokenising and "
        f"indexing) {bm25_build:.2f} s of it, the graph and pages the rest"
    )
    return corpus


def queries(corpus: Corpus, count: int) -> list[str]:
    rng = np.random.default_rng(0)
    vocabulary = sorted(corpus.index.retriever.vocab_dict)
    found = []
    for i in range(count):
        kind = i % 3
        if kind == 0:
            found.append(corpus.documents[int(rng.integers(len(corpus)))].title)
        elif kind == 1:
            found.append(make_question(corpus, ("easy", "medium", "hard")[i % 9 // 3], rng).text)
        else:
            picks = rng.integers(len(vocabulary), size=2)
            found.append(" ".join(vocabulary[int(p)] for p in picks))
    return found


def bench_bm25(corpus: Corpus, texts: list[str]) -> None:
    retriever = corpus.index.retriever
    tokens = [corpus.index.terms(text) or [""] for text in texts]
    _, batch = timed(lambda: retriever.retrieve(tokens, k=5, show_progress=False))
    started = time.perf_counter()
    for terms in tokens:
        retriever.get_scores(terms)
    single = time.perf_counter() - started
    print(f"bm25s over {len(texts):,} queries (pre-tokenised):")
    print(f"  retrieve(k=5), one batch: {len(texts) / batch:,.0f} queries/s")
    print(f"  get_scores, one at a time: {1000 * single / len(texts):.3f} ms/query")
    timings = []
    for text in texts:
        _, spent = timed(corpus.index.search, text, 5)
        timings.append(spent)
    print(
        f"SearchIndex.search (tokenise, score, top 5, snippets): mean "
        f"{1000 * statistics.mean(timings):.3f} ms/query, median "
        f"{1000 * statistics.median(timings):.3f} ms, p99 "
        f"{1000 * float(np.quantile(timings, 0.99)):.3f} ms"
    )


def bench_steps(split: str, texts: list[str]) -> None:
    env = agentgym.make("reasoning/SearchQA-v0", split=split)
    titles = texts[::3]  # every third query is a page title
    search, read = [], []
    for index, text in enumerate(texts):
        if index % 9 == 0:  # 18 steps an episode, within the step limit of 20
            env.reset(seed=index)
        _, spent = timed(env.step, f"search[{text}]")
        search.append(spent)
        _, spent = timed(env.step, f"read[{titles[index % len(titles)]}]")
        read.append(spent)
    env.close()
    for name, timings in (("search", search), ("read", read)):
        print(
            f"env.step('{name}[...]') through make()'s wrappers: mean "
            f"{1000 * statistics.mean(timings):.3f} ms/step, median "
            f"{1000 * statistics.median(timings):.3f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", help="whose corpus (train, dev, test)")
    parser.add_argument("--queries", type=int, default=2000, help="queries to time")
    args = parser.parse_args()
    corpus = build(args.split)
    texts = queries(corpus, args.queries)
    bench_bm25(corpus, texts)
    bench_steps(args.split, texts)


if __name__ == "__main__":
    main()
