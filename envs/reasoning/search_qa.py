"""SearchQA: answer a multi-hop question by searching and reading a fictional encyclopedia.

``reasoning/SearchQA-v0``. Every person, city, company, invention, river and mountain in the
encyclopedia is invented (:mod:`agentgym.envs.reasoning.search_corpus` generates it from a
seed), so no model can answer from memory: the agent has to find the pages and read them.
Train, dev and test each have their own world of 2,964 pages. See ``docs/reasoning-search.md``.

**What the agent sees.** The question, then after each action its result and the pages read so
far (task ``dev/medium/1``, after ``search[Thuserneport]``)::

    Search results for 'Thuserneport' (11 matching pages, best 5):
    1. Thuserneport [D0657]: Thuserneport is a city in Zodesar, on the Segrou River.
    2. Hagax Industries [D0404]: Hagax Industries is a shipbuilding company headquartered in ...
    ...
    Open a page with read[TITLE], read[ID] or read[RANK].

    Question: How long is the river on which Thuserneport lies, in kilometres?
    Pages read: none yet

**What it may do.** One action per turn (when a reply holds several, the last one counts):

* ``search[QUERY]`` — BM25 keyword search over the pages; shows the 5 best pages, each with its
  title, id and the sentence that best matches the query, and how many pages match at all.
* ``read[PAGE]`` — shows a page (a title and two short paragraphs, under 400 characters), by
  its title (case, punctuation and a leading *the* do not matter), its id (``read[D0657]``) or
  its rank in the last search's results (``read[1]``).
* ``answer[TEXT]`` — the final answer, as short as possible (a name, a year, a number); it ends
  the episode.

An unknown page (the observation offers the closest titles), a rank the last search did not
show, an empty query or answer, a query of stopwords only and anything that is not one of the
three actions are invalid actions: the observation says what was wrong and what would work, and
the episode goes on. ``admissible_actions`` are not listed (queries are free text).

**Tools.** The action space declares the same three actions as JSON-schema functions (a
``ToolCall`` space), so function-calling agents get them natively: ``search(query)``,
``read(page)``, ``answer(answer)``; their calls arrive as ``{"name", "arguments"}``. A tool call
written as JSON text, ``{"name": "search", "arguments": {"query": "Thuserneport"}}`` (arguments
as an object or as a JSON string, as OpenAI-style APIs return them), is the same action as
``search[Thuserneport]``; a wrong tool or argument is an invalid action naming the problem.

**Scoring.** When the agent answers, the answer is compared with the gold answers (the name
and its short forms: ``Segrou`` for the ``Segrou River``; ``2704``, ``2704 km`` and
``2,704 kilometres`` for a length) after SQuAD normalisation (lower case; punctuation, the
articles a/an/the and extra spaces removed). ``passed`` is exact match; the score (the
episode's return) is SQuAD's token-level F1, so ``Shim`` for ``Dofos Shim`` scores 0.67.
Components: ``exact_match``, ``f1`` and ``retrieved_support``, the share of the question's
supporting pages the agent has read (for analysis; not part of the score). An episode that
never answers scores 0. See :mod:`agentgym.verifiers.text`.

**Levels.** easy: one hop (``On which mountain does the Lostix River rise?``; 1 supporting
page). medium: two hops (``Who first climbed the mountain on which the Taopus River rises?``;
2 pages) or, three times in ten, a comparison of two named entities (``Who was born first, Dofos
Shim or Muman Grahi?``; 2 pages). hard: three hops (``In which city is the university where the
inventor of the Drairaire condenser studied?``; 3 pages) or, three times in ten, a comparison of
two entities each named through another (``Who was born first, the inventor of the Valtra
engine or the founder of Brencairn Optics?``; 4 pages). Names have near-duplicates
(``Thuserneport`` and ``Theserne``, ``Lukol Motors`` and ``Lukol Optics``) and pages carry
distractor facts of the same shape as the asked ones (the city someone moved to, who later led
a company, who patented an improved version), so the agent has to read, not match words.

**Oracle.** Knows the question's supporting pages (privileged) and acts like an agent: for each
supporting page not read yet it searches for the page's title, then reads the page; then it
answers with the first gold answer. 3, 5, 7 or 9 steps; the step limit is 20. A random agent
(random text) scores 0.

**Version history.** v0: first release (corpus ``v0``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.reasoning.search_corpus import (
    LEVELS,
    Corpus,
    Question,
    corpus_for_split,
    make_question,
)
from agentgym.spaces import ToolCall, tool
from agentgym.task_env import InvalidAction, TaskEnv, parse_tool_call
from agentgym.verifiers.text import em_score, f1_score, normalize_answer

__all__ = ["TOOLS", "SearchQAEnv", "SearchQATask", "SearchWorld", "parse_action", "question_for"]

RESULTS_SHOWN = 5

TOOLS: tuple[dict[str, Any], ...] = (
    tool(
        "search",
        "Keyword search (BM25) over the encyclopedia. Returns the 5 best pages with their "
        "title, id and best-matching sentence.",
        {"query": {"type": "string", "description": "words to look for"}},
    ),
    tool(
        "read",
        "Show a page of the encyclopedia.",
        {
            "page": {
                "type": "string",
                "description": "the page's title, its id (D0042), or its rank in the last "
                "search's results (2)",
            }
        },
    ),
    tool(
        "answer",
        "Give the final answer (as short as possible); this ends the episode.",
        {"answer": {"type": "string", "description": "the answer"}},
    ),
)
"""The actions as JSON-schema function declarations (the env's ``tools``)."""

_TOOL_SPACE = ToolCall(TOOLS)
_ARGUMENT = {"search": "query", "read": "page", "answer": "answer"}
_COMMAND = re.compile(r"\b(search|read|answer)\s*\[", re.IGNORECASE)
_JSON_CALL = re.compile(r"(?:```\w*\s*)?\{")
_LOOSE = re.compile(r"^(?:action\s*:\s*)?(search|read|answer)\s*:\s*(.+)$", re.IGNORECASE)

SYNTAX = (
    "Actions (one per turn; if you write several, the last one counts):\n"
    "  search[QUERY]  keyword search; shows the 5 best pages with a snippet each\n"
    "  read[PAGE]     show a page, by its title, its id (read[D0042]) or its rank in the last "
    "results (read[2])\n"
    "  answer[TEXT]   your final answer, as short as possible (a name, a year, a number); "
    "this ends the episode\n"
    'Function-calling agents may write the same as JSON: {"name": "search", "arguments": '
    '{"query": "..."}}.'
)


@dataclass
class SearchWorld:
    """One episode: the question and what the agent has done that matters now.

    Attributes:
        split: whose corpus the episode searches (the corpus itself is shared, not copied).
        question: the question, its gold answers and its supporting pages.
        read: the pages read (indexes), in the order first read.
        results: the pages the last search showed, best first.
        query: the last search's query.
        answer: the agent's answer, once given.
    """

    split: str
    question: Question
    read: list[int] = field(default_factory=list)
    results: tuple[int, ...] = ()
    query: str = ""
    answer: str | None = None


@functools.lru_cache(maxsize=4096)
def question_for(split: str, difficulty: str, seed: int) -> Question:
    """The question of a task: drawn from the split's corpus with the task's seed."""
    return make_question(corpus_for_split(split), difficulty, np.random.default_rng(seed))


class SearchQATask(Task[SearchWorld]):
    """A question on the split's corpus, generated from the task's seed."""

    def setup(self, rng: np.random.Generator) -> tuple[SearchWorld, str]:
        question = question_for(self.split, self.difficulty, self.seed)
        pages = len(corpus_for_split(self.split))
        goal = (
            f"Answer a question from a fictional encyclopedia of {pages:,} pages. Its people, "
            f"places and things are invented, so find the answer in the pages, not in your "
            f"memory: search, read, then answer.\n\nQuestion: {question.text}"
        )
        return SearchWorld(self.split, question), goal

    def validate(self, world: SearchWorld) -> Verdict:
        support = set(world.question.support)
        found = len(support.intersection(world.read))
        share = found / len(support)
        pages = f"read {found} of {len(support)} supporting pages"
        if world.answer is None:
            components = {"exact_match": 0.0, "f1": 0.0, "retrieved_support": share}
            return Verdict(0.0, False, components, f"no answer yet; {pages}")
        golds = world.question.golds
        em, f1 = em_score(world.answer, golds), f1_score(world.answer, golds)
        return Verdict(
            score=f1,
            passed=em == 1.0,
            components={"exact_match": em, "f1": f1, "retrieved_support": share},
            details=(
                f"answered {world.answer!r}, gold {golds[0]!r}: exact match {em:.0f}, "
                f"F1 {f1:.2f}; {pages}"
            ),
        )

    def solve(self, world: SearchWorld) -> str | None:
        """Search for each supporting page not read yet, read it; then answer."""
        if world.answer is not None:
            return None
        documents = corpus_for_split(world.split).documents
        for index in world.question.support:
            if index in world.read:
                continue
            title = documents[index].title
            return f"read[{title}]" if world.query == title else f"search[{title}]"
        return f"answer[{world.question.golds[0]}]"


class SearchQAEnv(TaskEnv[SearchWorld]):
    __doc__ = __doc__
    metadata = {**TaskEnv.metadata, "action_style": "raw"}  # it reads the last action itself
    tools = TOOLS

    def __init__(self, **options: Any) -> None:
        """``options``: as for :class:`~agentgym.task_env.TaskEnv`."""
        self.tasks = GeneratedTaskSet("search-qa", SearchQATask, LEVELS)
        super().__init__(**options)

    def action_syntax(self) -> str:
        return SYNTAX

    def act(self, world: SearchWorld, action: str) -> str:
        corpus = corpus_for_split(world.split)
        command, argument = parse_action(action, _example(world, corpus))
        if command == "search":
            return _search(world, corpus, argument)
        if command == "read":
            return _read(world, corpus, argument)
        return _answer(world, argument)

    def observe(self, world: SearchWorld) -> str:
        documents = corpus_for_split(world.split).documents
        read = ", ".join(documents[i].title for i in world.read) or "none yet"
        return f"Question: {world.question.text}\nPages read: {read}"

    def state_key(self, world: SearchWorld) -> str:
        read = ",".join(f"D{i:04d}" for i in sorted(world.read))
        results = ",".join(f"D{i:04d}" for i in world.results)
        key = f"{world.question.text} | read: {read or '-'} | results: {results or '-'}"
        if world.answer is not None:
            key += f" | answer: {normalize_answer(world.answer)}"
        return key

    def is_over(self, world: SearchWorld) -> bool:
        return world.answer is not None


# --------------------------------------------------------------------------- actions


def parse_action(text: str, example: str = "NAME") -> tuple[str, str]:
    """``(command, argument)`` of an action; InvalidAction, saying what would work, otherwise.

    Reads ``search[QUERY]``, ``read[PAGE]`` and ``answer[TEXT]`` anywhere in the text (the
    last one wins), ``search: QUERY`` on the last line, and JSON tool calls. ``example`` is a
    query the error messages suggest.

    >>> parse_action("I should look it up first.\\nsearch[Velmar Works]")
    ('search', 'Velmar Works')
    >>> parse_action('{"name": "answer", "arguments": {"answer": "Brask"}}')
    ('answer', 'Brask')
    """
    stripped = text.strip()
    if _JSON_CALL.match(stripped):  # a JSON tool call, fenced or not
        return _tool_call(stripped)
    matches = list(_COMMAND.finditer(text))
    if matches:
        last = matches[-1]
        argument = _bracketed(text[last.end() :])
        if argument is None:
            raise InvalidAction(
                f"{last.group(1).lower()}[ has no closing ']' in {_shown(text)}; write e.g. "
                f"{last.group(1).lower()}[...] on one line"
            )
        return last.group(1).lower(), _unquoted(argument)
    lines = [re.sub(r"[*`]", "", ln).strip() for ln in stripped.splitlines()]
    lines = [ln for ln in lines if ln]
    loose = _LOOSE.match(lines[-1]) if lines else None
    if loose:
        return loose.group(1).lower(), _unquoted(loose.group(2))
    raise InvalidAction(
        f"could not read an action in {_shown(text)}: write search[QUERY], read[PAGE] or "
        f"answer[TEXT], e.g. search[{example}]"
    )


def _tool_call(text: str) -> tuple[str, str]:
    name, arguments = parse_tool_call(text, _TOOL_SPACE)
    return name, _unquoted(arguments[_ARGUMENT[name]])


def _search(world: SearchWorld, corpus: Corpus, query: str) -> str:
    terms = corpus.index.terms(query)
    if not terms:
        what = f"the query {query!r} has no searchable words" if query else "the query is empty"
        raise InvalidAction(
            f"{what}: search for words of two or more letters other than stopwords such as "
            f"'the' or 'of', e.g. search[{_example(world, corpus)}]"
        )
    hits, matching = corpus.index.rank(terms, RESULTS_SHOWN)
    world.results, world.query = tuple(hit.doc.entity for hit in hits), query
    if not hits:
        return f"No page matches {query!r}. Try other words, such as a name from the question."
    lines = [f"Search results for {query!r} ({matching:,} matching pages, best {len(hits)}):"]
    lines += [
        f"{rank}. {hit.doc.title} [{hit.doc.doc_id}]: {hit.snippet}"
        for rank, hit in enumerate(hits, 1)
    ]
    lines.append("Open a page with read[TITLE], read[ID] or read[RANK].")
    return "\n".join(lines)


def _read(world: SearchWorld, corpus: Corpus, page: str) -> str:
    if not page:
        raise InvalidAction(
            "read[] needs a page: its title, its id (e.g. D0042) or its rank in the last "
            "search's results (1 to 5)"
        )
    if page.isdigit() and len(page) <= 2:
        rank, shown = int(page), len(world.results)
        if not world.query:
            raise InvalidAction(
                f"read[{page}] opens result {page} of the last search, and there has been no "
                f"search yet; search first, or read a page by its title"
            )
        if not 1 <= rank <= shown:
            which = f"read[1] to read[{shown}] open them" if shown else "search again"
            raise InvalidAction(
                f"the last search ({world.query!r}) showed {shown} results; {which}, or read a "
                f"page by its title"
            )
        doc = corpus.documents[world.results[rank - 1]]
    else:
        found = corpus.find(page)
        if found is None:
            close = corpus.closest_titles(page)
            hint = f"; closest titles: {', '.join(close)}" if close else ""
            raise InvalidAction(
                f"no page is titled {page[:80]!r}{hint}. Read a page by its exact title or its "
                f"id, as search results show them"
            )
        doc = found
    if doc.entity not in world.read:
        world.read.append(doc.entity)
    return f"Page {doc.doc_id}:\n{doc.text}"


def _answer(world: SearchWorld, answer: str) -> str:
    if not normalize_answer(answer):
        raise InvalidAction(
            f"the answer {answer!r} is empty once punctuation and articles are removed; write "
            f"the answer itself, e.g. answer[1887] or answer[Orlen Vask]"
        )
    world.answer = answer
    return f"You answered {answer!r}."


def _bracketed(rest: str) -> str | None:
    """The text up to the ``]`` that closes an already opened ``[`` (brackets may nest)."""
    depth = 1
    for at, ch in enumerate(rest):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth == 0:
            return rest[:at]
    return None


def _unquoted(argument: str) -> str:
    return " ".join(argument.split()).strip("`'\"").strip()


def _example(world: SearchWorld, corpus: Corpus) -> str:
    """A query worth trying: the first page the question names."""
    return corpus.documents[world.question.support[0]].title


def _shown(text: str) -> str:
    return repr(text.strip()[:80])
