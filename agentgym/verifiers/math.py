"""Math verifiers: find the final answer in a reply, and decide if it equals the gold one.

**Extraction** (:func:`extract_answer`) takes the first of these that the reply has:

1. its last ``\\boxed{...}`` (or ``\\fbox{...}``, braces nested); boxed answers earlier on the
   same line join it, as a list (``\\boxed{1}, \\boxed{2}`` is ``1, 2``);
2. GSM8K's ``#### 42``;
3. the last "final answer is ...", "the answer is ...", "answer: ..." (a ``$...$`` formula
   right after it, else the rest of its sentence);
4. the whole reply, when it is an answer alone (``$\\frac13$``, ``1 000``, ``12 dollars``):
   no two words in a row outside ``\\text{}``, at most ``MAX_ANSWER_CHARS`` characters;
5. the closing formula: the last sentence's ``$...$`` (``\\(...\\)``, ``\\[...\\]``) when it is
   the only formula there or ends the sentence ("so the pair is $(7, 6)$.").

Anything else has no clear final answer and scores 0: the verifier does not guess, and in
particular never takes "the last number" of prose (which read an unboxed ``\\frac{1}{3}`` as
3). A reply cut off inside its ``\\boxed{`` has no answer. :func:`stated_answer` is steps 1-3,
the answers a reply marks as final. Text after a chat-template token (``<|im_start|>``) is not
part of the reply.

**Equivalence** (:func:`math_equal`): two plain numbers (``1,000``, ``1 000``, ``1e3``, ``$12``,
``0.5``, ``7/2``, ``12 dollars``, ``3.2 \\times 10^{4}``, ``25\\%``) are compared here,
exactly: integers must be equal, other values agree within a relative ``tolerance``
(``1/3`` and ``0.3333333``). A percentage equals its number and its value, as math-verify
reads it (``25\\%`` is ``25`` and ``0.25``). Everything else goes to HuggingFace's
``math-verify``, which parses both sides (LaTeX or plain: fractions, sets, tuples and
intervals as structures, matrices, equations) into SymPy and compares them; a side in
scientific notation goes to it as the decimal it stands for (math-verify reads the ``e`` of
``3.2e4`` as Euler's number). A statement (``7 = 5``, ``1 = 1``, ``5 \\lor 6``) never equals
a value by one of its sides; only a whole assignment such as ``x = 5`` does.

**Time and faults.** math-verify and SymPy run in a long-lived worker process
(:mod:`agentgym.verifiers._math_worker`), one call at a time. An answer whose exact value
would be too large to compute (``9^{9^{9}}``, ``(10^{10})!``, a sum of ``10^7`` terms) is
refused there before SymPy evaluates it, in milliseconds. Every call also has a deadline
(``TIME_LIMIT_S``); a call past it kills the worker, which restarts on the next call. So an
answer costs its own episode 0 and holds no thread of the evaluator, and the verdict's
details say why it was not judged on its merits. Whatever an answer causes (a refusal, a
timeout, an exception, a crash of the worker) is a wrong answer;
:class:`~agentgym.errors.VerifierError` is kept for what the answer cannot cause: a worker
that cannot start (math-verify missing), or a gold answer that does not parse in time.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentgym.core import Verdict
from agentgym.errors import MissingExtraError, VerifierError

__all__ = [
    "MAX_ANSWER_CHARS",
    "TIME_LIMIT_S",
    "extract_answer",
    "math_equal",
    "stated_answer",
    "verify_math",
]

MAX_ANSWER_CHARS = 400
TIME_LIMIT_S = 10.0  # per parse-and-compare call in the worker (SymPy is slow on a busy machine)
STARTUP_LIMIT_S = 120.0  # importing SymPy on a loaded machine

# ---------------------------------------------------------------- extraction

TAIL_CHARS = 20_000  # extraction reads the end of a reply: where its answer is

_CHAT_TOKEN = re.compile(r"<\|[a-z_]+\|>")
_HASHES = re.compile(r"####[ \t]*([^\n]+)")
_CUE = re.compile(r"\b(?:final answer|the answer|answer)\b\s*(?:is\s*:?|:|=)?\s*", re.IGNORECASE)
_FORMULA = re.compile(
    r"\$\$(.{1,1000}?)\$\$|(?<!\\)\$(.{1,1000}?)(?<!\\)\$|\\\((.{1,1000}?)\\\)|\\\[(.{1,1000}?)\\\]",
    re.DOTALL,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n|\s+(?=(?:Therefore|Thus|Hence|So),?\s)")
_NAME = re.compile(r"(?:[A-Za-z]|[A-Z]+)(?:_\{?\w+\}?)?(?:\([^()]*\))?")  # $n$, $f(x)$, $ABCD$
_LOOSE_NUMBER = re.compile(r"-?(?:\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?%?|\.\d+)")
_WORDS_IN_A_ROW = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}[\s,;:]+[A-Za-z]{2,}")
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|mathrm|mbox|operatorname)\s*\{[^{}]*\}")


def _boxed_spans(text: str) -> list[tuple[int, int, str | None]]:
    """The last few ``\\boxed{...}``/``\\fbox{...}``: (start, end, contents), None if unclosed."""
    spans: list[tuple[int, int, str | None]] = []
    for match in list(re.finditer(r"\\(?:boxed|fbox)\s*\{", text))[-20:]:
        depth = 0
        for index in range(match.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                spans.append((match.start(), index + 1, text[match.end() : index].strip()))
                break
        else:
            spans.append((match.start(), len(text), None))
    return spans


def _last_boxed(text: str) -> str | None:
    """The contents of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced."""
    spans = _boxed_spans(text)
    return spans[-1][2] if spans else None


def _boxed_answer(spans: list[tuple[int, int, str | None]], text: str) -> str | None:
    """The last boxed answer, joined by the boxed answers before it in its sentence."""
    joined = [spans[-1]]
    for earlier in reversed(spans[:-1]):
        if not earlier[2] or _SENTENCE_END.search(text[earlier[1] : joined[0][0]]):
            break
        joined.insert(0, earlier)
    return ", ".join(str(contents) for _, _, contents in joined) or None


def _reply(text: str) -> str:
    """The reply proper (what comes before a chat-template token), its last ``TAIL_CHARS``."""
    match = _CHAT_TOKEN.search(text)
    if match and text[: match.start()].strip():
        text = text[: match.start()]
    return text[-TAIL_CHARS:].replace("\0", "")


def _formula_text(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group is not None).strip()


def _one_value(sentence: str) -> str | None:
    """A sentence's one value: the sentence itself if it is no prose, else its only formula or
    number (a formula that only names something, like ``$n$``, is not a value); None when it
    holds several, or none."""
    if not _WORDS_IN_A_ROW.search(_TEXT_COMMAND.sub(" ", sentence)):
        return sentence.strip().rstrip(".").strip().strip("$").strip() or None
    values = [
        _formula_text(formula)
        for formula in _FORMULA.finditer(sentence)
        if not _NAME.fullmatch(_formula_text(formula))  # "the largest $n$ is 34"
    ]
    values += _LOOSE_NUMBER.findall(_FORMULA.sub(" ", sentence))
    return values[0] if len(values) == 1 else None


def _after_cue(text: str) -> tuple[int, str | None] | None:
    """Where the last "the answer is" is, and what it states: a formula right after it, else
    the one value of the rest of its sentence."""
    cues = list(_CUE.finditer(text))
    if not cues:
        return None
    rest = text[cues[-1].end() :].lstrip("\"'*: ")
    formula = _FORMULA.match(rest)
    answer = _formula_text(formula) if formula else _one_value(_SENTENCE_END.split(rest, 1)[0])
    return cues[-1].start(), answer or None


def stated_answer(text: str) -> str | None:
    """The answer ``text`` marks as final, or None: the last of its boxed answer, ``#### N``
    and "the answer is ..." (a cut-off ``\\boxed{`` at the end marks no answer)."""
    text = _reply(text)
    spans = _boxed_spans(text)
    if spans and spans[-1][2] is None:
        return None  # cut off inside its \boxed{: no answer, and no guess from before it
    marked = []  # (where, answer)
    if spans:
        marked.append((spans[-1][0], _boxed_answer(spans, text)))
    hashes = list(_HASHES.finditer(text))
    if hashes:
        marked.append((hashes[-1].start(), hashes[-1].group(1).strip() or None))
    cue = _after_cue(text)
    if cue is not None:
        marked.append(cue)
    answers = [answer for _, answer in sorted(marked, key=lambda item: item[0]) if answer]
    return answers[-1] if answers else None


def _bare_answer(text: str) -> str | None:
    """The whole reply, when it is only an answer (no prose: no two words in a row)."""
    answer = text.strip().rstrip(".").strip()
    if not answer or len(answer) > MAX_ANSWER_CHARS or "\n" in answer.strip("$").strip():
        return None
    return None if _WORDS_IN_A_ROW.search(_TEXT_COMMAND.sub(" ", answer)) else answer


def _closing_answer(text: str) -> str | None:
    """The one value of the last sentence that has a formula or a number in it."""
    masked = _FORMULA.sub(lambda match: "$" + "x" * (len(match[0]) - 2) + "$", text)
    starts = [0] + [boundary.end() for boundary in _SENTENCE_END.finditer(masked)]
    for begin, end in reversed(list(zip(starts, [*starts[1:], len(text)], strict=True))):
        sentence = text[begin:end]
        formulas = list(_FORMULA.finditer(sentence))
        if formulas:
            closes = sentence.rstrip(" .!?,;:\t\n").endswith(formulas[-1][0])
            return _formula_text(formulas[-1]) if len(formulas) == 1 or closes else None
        if _LOOSE_NUMBER.search(sentence):
            return _one_value(sentence)
    return None


def extract_answer(text: str) -> str | None:
    """The final answer ``text`` states, or None when it states none (module docstring)."""
    stated = stated_answer(text)
    reply = _reply(text)
    if stated is not None or _boxed_spans(reply):
        return stated
    return _bare_answer(reply) or _closing_answer(reply)


# ---------------------------------------------------------------- plain numbers

_NUMBER = re.compile(
    r"""(?P<sign>[-+]?)(?:
        (?P<thousands>[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d{0,2}(?:[ \u00a0]\d{3})+)(?P<tail>\.\d+)?
      | (?P<decimal_comma>\d+,\d{1,2}|\d+,\d{4,}|0,\d+)
      | (?P<plain>\d+(?:\.\d*)?|\.\d+)(?:
            [eE](?P<exponent>[-+]?\d{1,3})
          | \s*(?:\\times|\\cdot|\*|\u00d7|\u00b7)\s*10\s*\^\s*
            (?:\{\s*(?P<braced_power>[-+]?\d{1,3})\s*\}|(?P<power>\d))
        )?
      | (?P<numerator>\d+)/(?P<denominator>\d+)
    )""",
    re.VERBOSE,
)
_UNIT = re.compile(r"(?:\s*\\(?:text|mbox|mathrm)\s*\{\s*[A-Za-z ]+\}|\s+[A-Za-z]{2,}){1,2}$")
_PERCENT = re.compile(
    r"\s*(?:\\?%|\\(?:text|mbox|mathrm)\s*\{\s*(?:percent|pct)\s*\}|\s(?:percent(?:age)?|pct))$"
)


@dataclass(frozen=True)
class _Plain:
    """A plain number: its exact value, and how it was written."""

    value: Fraction
    percent: bool = False  # "25%": both 25 and 0.25, as math-verify reads it
    scientific: bool = False  # "3.2e4", "3.2 \\times 10^{4}"

    def text(self) -> str:
        """How the worker is given it: scientific notation as the decimal it stands for
        (math-verify reads the ``e`` of ``3.2e4`` as Euler's number)."""
        with localcontext() as context:
            context.prec = 2 * MAX_ANSWER_CHARS + 1100  # exact: the value is a short decimal
            return format(Decimal(self.value.numerator) / self.value.denominator, "f")


def _plain_number(text: str) -> _Plain | None:
    """``text`` as an exact number when it is one plain number (maybe with a unit or a percent
    sign, maybe in scientific notation), else None."""
    cleaned = re.sub(r"\\[!,;]|\{,\}|\\?\$|€|^\\\(|\\\)$", "", text.strip().rstrip(".").strip())
    percent = _PERCENT.search(cleaned)
    if percent:
        cleaned = cleaned[: percent.start()]
    match = _NUMBER.fullmatch(_UNIT.sub("", cleaned.strip()).strip())
    if match is None:
        return None
    sign = -1 if match["sign"] == "-" else 1
    power = match["exponent"] or match["braced_power"] or match["power"]
    if match["numerator"] is not None:
        denominator = int(match["denominator"])
        value = None if denominator == 0 else Fraction(int(match["numerator"]), denominator)
    elif match["thousands"] is not None:
        value = Fraction(re.sub(r"\D", "", match["thousands"]) + (match["tail"] or ""))
    elif match["decimal_comma"] is not None:
        value = Fraction(match["decimal_comma"].replace(",", "."))
    else:
        value = Fraction(match["plain"].rstrip(".") or "0") * Fraction(10) ** int(power or 0)
    if value is None:
        return None
    return _Plain(sign * value, percent=bool(percent), scientific=power is not None)


def _bare_text(answer: str) -> str:
    return re.sub(r"\s+|\$", "", answer)


def _numbers_equal(a: Fraction, b: Fraction, tolerance: float) -> bool:
    if a.denominator == 1 or b.denominator == 1:
        return a == b  # integers are exact: 1234567 is not 1234568
    return abs(a - b) <= Fraction(tolerance) * max(abs(a), abs(b))


def _plains_equal(a: _Plain, b: _Plain, tolerance: float) -> bool:
    """Equal numbers; a percentage against a number is equal by its number or its value."""
    if _numbers_equal(a.value, b.value, tolerance):
        return True
    if a.percent == b.percent:
        return False
    return _numbers_equal(
        a.value / (100 if a.percent else 1), b.value / (100 if b.percent else 1), tolerance
    )


# ---------------------------------------------------------------- the worker


class _NoReply(Exception):
    """The worker gave no reply to a request: why (past the deadline, or it died on it)."""


class _Worker:
    """The long-lived worker process, one call at a time, each under a deadline."""

    script = Path(__file__).with_name("_math_worker.py")

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._buffer = b""

    def call(self, request: dict[str, Any], deadline_s: float) -> dict[str, Any]:
        """The worker's reply; :class:`_NoReply` saying why when it passed the deadline or
        died on the request (it restarts on the next call).

        A worker found dead when the request arrives (it died since its last call) gets the
        request again, once, from a fresh start."""
        with self._lock:
            for attempt in (1, 2):
                fresh = self._process is None or self._process.poll() is not None
                process = self._running()
                started = time.monotonic()
                try:
                    assert process.stdin is not None
                    process.stdin.write(json.dumps(request).encode() + b"\n")
                    process.stdin.flush()
                    line = self._read_line(deadline_s)
                except OSError:
                    line = None
                if line is not None:
                    reply: dict[str, Any] = json.loads(line)
                    return reply
                quick = time.monotonic() - started < deadline_s
                self.stop()
                if not quick:
                    raise _NoReply(f"it ran past the deadline of {deadline_s:g} s")
                if fresh or attempt == 2:
                    raise _NoReply("the worker process died on it")
            raise AssertionError("unreachable: the second attempt returns or raises")

    def _running(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self.stop()
        boot = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", boot, str(self.script)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, "PYTHONHASHSEED": "0"},
            )
        except OSError as error:
            raise VerifierError(f"the math verifier's worker did not start: {error}") from error
        ready = self._read_line(STARTUP_LIMIT_S)
        reply = json.loads(ready) if ready else {}
        if reply.get("ready"):
            return self._process
        self.stop()
        if "missing" in reply:
            raise MissingExtraError(
                "the math verifier needs math-verify: pip install 'agentgym[reasoning]' "
                f"({reply['missing']})"
            )
        raise VerifierError(
            f"the math verifier's worker did not start within {STARTUP_LIMIT_S:.0f} s"
        )

    def _read_line(self, deadline_s: float) -> bytes | None:
        assert self._process is not None and self._process.stdout is not None
        stream = self._process.stdout.fileno()
        until = time.monotonic() + deadline_s
        while b"\n" not in self._buffer:
            left = until - time.monotonic()
            if left <= 0 or not select.select([stream], [], [], left)[0]:
                return None
            chunk = os.read(stream, 1 << 16)
            if not chunk:
                return None  # the worker died
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                if stream is not None:
                    stream.close()
        self._process, self._buffer = None, b""


_WORKER = _Worker()
atexit.register(_WORKER.stop)


@lru_cache(maxsize=4096)
def _check_gold(gold: str, time_limit: float) -> None:
    try:
        reply = _WORKER.call({"op": "gold", "gold": gold}, time_limit)
    except _NoReply as why:
        raise VerifierError(f"the gold answer {gold!r} did not parse: {why}") from None
    if not reply.get("ok"):
        raise VerifierError(f"the gold answer {gold!r} cannot be parsed as math")


# ---------------------------------------------------------------- comparison


def math_equal(
    prediction: str,
    gold: str,
    *,
    tolerance: float = 1e-6,
    time_limit: float = TIME_LIMIT_S,
) -> bool:
    """Whether the answer ``prediction`` equals ``gold`` (see the module docstring).

    Raises :class:`VerifierError` only for what the prediction cannot cause: a gold answer
    that does not parse, a worker that does not start."""
    return _compare(prediction, gold, tolerance, time_limit)[0]


def _compare(prediction: str, gold: str, tolerance: float, time_limit: float) -> tuple[bool, str]:
    """Whether ``prediction`` equals ``gold``, and why it was not judged on its merits when it
    was not (too long, too large to evaluate, past the deadline): "" when it was."""
    if not prediction.strip():
        return False, "it is empty"
    if len(prediction) > MAX_ANSWER_CHARS:
        return False, f"it is over {MAX_ANSWER_CHARS} characters"
    if _bare_text(prediction) == _bare_text(gold):
        return True, ""  # the same text, even when math-verify cannot read it
    a, b = _plain_number(prediction), _plain_number(gold)
    if a is not None and b is not None:
        return _plains_equal(a, b, tolerance), ""
    prediction, gold = (
        plain.text() if plain is not None and plain.scientific else text
        for plain, text in ((a, prediction), (b, gold))
    )
    _check_gold(gold, time_limit)
    try:
        reply = _WORKER.call({"op": "equal", "answer": prediction, "gold": gold}, time_limit)
    except _NoReply as why:
        return False, f"not compared: {why}"
    return bool(reply.get("equal")), str(reply.get("why", ""))


def verify_math(
    response: str, gold: str, *, tolerance: float = 1e-6, time_limit: float = TIME_LIMIT_S
) -> Verdict:
    """Extract the answer from ``response`` and compare it with ``gold``; the details say why
    an answer was not judged on its merits (too large to evaluate, past the deadline)."""
    answer = extract_answer(response)
    if answer is None:
        return Verdict(
            0.0, False, {"extracted": 0.0, "correct": 0.0}, "no clear final answer found"
        )
    right, why = _compare(answer, gold, tolerance, time_limit)
    return Verdict(
        float(right),
        right,
        {"extracted": 1.0, "correct": float(right)},
        f"answer {answer!r} {'equals' if right else 'does not equal'} {gold!r}"
        + (f" ({why})" if why else ""),
    )
