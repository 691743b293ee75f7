"""Tool use: a small shop's API, a calculator and Python, called natively or written as text.

The agent runs errands against a stateful shop (a catalogue with prices, stock and a
budget) through tools declared as JSON schemas (OpenAI's function format): its action space
is a :class:`~agentgym.spaces.ToolCall` space, so function-calling agents get the tools as
native ``tools`` and their calls arrive as ``{"name", "arguments"}``; text agents write the
same call as JSON or as a Python-style call, ``order(item="lamp", quantity=3)``, read with
``ast`` (literal arguments only, never evaluated). A wrong call (unknown tool, missing or
mistyped argument, an order over budget) comes back as the tool's error message, the way a
real API answers, and counts as an invalid action.
"""

from __future__ import annotations

import ast
import json
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from agentgym.core import GeneratedTaskSet, Task, Verdict
from agentgym.envs.reasoning.math_problems import format_number
from agentgym.envs.reasoning.python_tool import PythonTool
from agentgym.errors import UsageError
from agentgym.spaces import tool
from agentgym.task_env import InvalidAction, TaskEnv
from agentgym.verifiers import StateCheck, gate, math_equal, verify_state

__all__ = ["TOOLS", "ToolUseEnv"]


_STRING, _INTEGER = {"type": "string"}, {"type": "integer"}

TOOLS = [
    tool("search_items", "Items whose name or category contains the query.", {"query": _STRING}),
    tool("get_item", "An item's category, unit price and stock.", {"name": _STRING}),
    tool("get_balance", "The money left in the budget."),
    tool(
        "order",
        "Buy units of an item: adds to stock, pays from the budget.",
        {"name": _STRING, "quantity": _INTEGER},
    ),
    tool("calculator", "Evaluate arithmetic: + - * / ** and parentheses.", {"expression": _STRING}),
    tool("python", "Run a Python program in a sandbox; its output comes back.", {"code": _STRING}),
    tool("answer", "Give the final answer and end the task.", {"value": _STRING}),
]

CATEGORIES = {
    "lighting": ("lamp", "lantern", "bulb", "candle"),
    "kitchen": ("kettle", "pan", "whisk", "ladle"),
    "garden": ("rake", "hose", "trowel", "planter"),
    "office": ("stapler", "folder", "marker", "notebook"),
}


@dataclass
class Shop:
    """One episode's world: the catalogue, the budget, what was ordered and answered."""

    prices: dict[str, int]
    categories: dict[str, str]
    stock: dict[str, int]
    balance: int
    answer: str | None = None
    calls: list[str] = field(default_factory=list)  # tool names, in order
    python: PythonTool = field(default_factory=PythonTool)


class ErrandTask(Task[Shop]):
    """An errand in a generated shop; its goal, checks and oracle follow its level.

    * easy — "what would 3 lamps and 2 kettles cost?": look up, compute, answer;
    * medium — "restock the lamp to 12 units, then report the balance": order, answer;
    * hard — "the cheapest kitchen item: restock it to 10, report what that cost".
    """

    def _shop(self) -> tuple[Shop, np.random.Generator]:
        rng = np.random.default_rng(self.seed)
        prices, categories, stock = {}, {}, {}
        for category, names in CATEGORIES.items():
            for name in names:
                prices[name] = int(rng.integers(2, 40))
                categories[name] = category
                stock[name] = int(rng.integers(0, 8))
        return Shop(prices, categories, stock, balance=int(rng.integers(300, 600))), rng

    def plan(self) -> dict[str, Any]:
        """What the errand asks, derived from the seed (the shop is rebuilt the same way)."""
        shop, rng = self._shop()
        names = sorted(shop.prices)
        if self.difficulty == "easy":
            first, second = (str(n) for n in rng.choice(names, size=2, replace=False))
            a, b = int(rng.integers(2, 6)), int(rng.integers(2, 6))
            cost = a * shop.prices[first] + b * shop.prices[second]
            return {
                "goal": f"How much would {a} {first} and {b} {second} cost in total? Do not "
                f"order anything; answer with the amount.",
                "answer": str(cost),
                "target": None,
            }
        if self.difficulty == "medium":
            item = str(rng.choice(names))
            level = shop.stock[item] + int(rng.integers(3, 9))
            balance = shop.balance - (level - shop.stock[item]) * shop.prices[item]
            return {
                "goal": f"Restock the {item} so that exactly {level} units are in stock, then "
                f"answer with the balance left.",
                "answer": str(balance),
                "target": (item, level),
            }
        category = str(rng.choice(sorted(CATEGORIES)))
        item = min(CATEGORIES[category], key=lambda n: (shop.prices[n], n))
        level = shop.stock[item] + int(rng.integers(4, 10))
        cost = (level - shop.stock[item]) * shop.prices[item]
        return {
            "goal": f"Find the cheapest item in the {category} category, restock it so that "
            f"exactly {level} units are in stock, and answer with what the order cost.",
            "answer": str(cost),
            "target": (item, level),
        }

    def setup(self, rng: np.random.Generator) -> tuple[Shop, str]:
        shop, _ = self._shop()
        return shop, self.plan()["goal"]

    def validate(self, world: Shop) -> Verdict:
        plan = self.plan()
        if world.answer is None:
            return Verdict(0.0, False, {"answered": 0.0}, "no answer yet")
        start, _ = self._shop()
        checks = [StateCheck("budget_kept", lambda s: s.balance >= 0)]
        if plan["target"] is None:
            checks.append(StateCheck("no_orders", lambda s: s.stock == start.stock))
        else:
            item, level = plan["target"]
            checks.append(StateCheck("restocked", lambda s: s.stock[item] == level))
            others = {k: v for k, v in start.stock.items() if k != item}
            checks.append(
                StateCheck(
                    "nothing_else", lambda s: all(s.stock[k] == v for k, v in others.items())
                )
            )
        state = verify_state(world, checks)
        right = _numeric_equal(world.answer, plan["answer"])
        answer = Verdict(float(right), right, {}, f"answered {world.answer!r}")
        return gate(state, answer, name="state")

    def solve(self, world: Shop) -> str | None:
        if world.answer is not None:
            return None
        plan = self.plan()
        if plan["target"] is not None:
            item, level = plan["target"]
            if world.stock[item] < level:
                return json.dumps(
                    {
                        "name": "order",
                        "arguments": {"name": item, "quantity": level - world.stock[item]},
                    }
                )
        return json.dumps({"name": "answer", "arguments": {"value": plan["answer"]}})

    def teardown(self, world: Shop) -> None:
        world.python.close()


def _numeric_equal(given: str, gold: str) -> bool:
    """Whether the agent's answer is the gold number. An answer that is not a number is just
    wrong (``math_equal`` says so); a :class:`~agentgym.errors.VerifierError` (the checker
    could not run) propagates, so the episode is errored, not a silent 0."""
    return math_equal(given.strip().lstrip("$"), gold)


_OPERATORS: dict[type[ast.AST], Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


MAX_CALCULATOR_BITS = 10_000
"""The largest numerator or denominator the calculator makes (about 3,000 digits): a power
tower would otherwise take the step minutes and gigabytes, and print past ``str``'s limit."""


def calculate(expression: str) -> Fraction:
    """Exact arithmetic on numbers with + - * / ** and parentheses (nothing else runs)."""

    def value(node: ast.AST) -> Fraction:
        number = node.value if isinstance(node, ast.Constant) else None
        if isinstance(number, int | float) and not isinstance(number, bool):
            if isinstance(number, float) and not math.isfinite(number):
                raise InvalidAction(f"calculator: {number} is not a finite number")
            return _bounded(Fraction(number))
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Pow) and (right.denominator != 1 or abs(right) > 64):
                raise InvalidAction("calculator: powers must be whole numbers up to 64")
            if isinstance(node.op, ast.Pow) and _bits(left) * abs(right) > MAX_CALCULATOR_BITS:
                raise InvalidAction("calculator: the result would have over 3,000 digits")
            if (isinstance(node.op, ast.Div) and right == 0) or (
                isinstance(node.op, ast.Pow) and left == 0 and right < 0
            ):
                raise InvalidAction("calculator: division by zero")
            return _bounded(Fraction(_OPERATORS[type(node.op)](left, right)))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return Fraction(_OPERATORS[type(node.op)](value(node.operand)))
        raise InvalidAction(
            f"calculator: only numbers and + - * / ** ( ) are allowed: {expression!r}"
        )

    try:
        tree = ast.parse(expression, mode="eval")
        return value(tree.body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # too long, too deep
        raise InvalidAction(f"calculator: {expression!r} is not an arithmetic expression") from None


def _bits(number: Fraction) -> int:
    return max(number.numerator.bit_length(), number.denominator.bit_length())


def _bounded(number: Fraction) -> Fraction:
    if _bits(number) > MAX_CALCULATOR_BITS:
        raise InvalidAction("calculator: a number in the calculation has over 3,000 digits")
    return number


class ToolUseEnv(TaskEnv[Shop]):
    """Errands in a small shop through declared tools: look up, compute, order, answer.

    **What the agent sees.** The errand, then each tool's result. **What it may do.** Call
    the tools (``search_items``, ``get_item``, ``get_balance``, ``order``, ``calculator``,
    ``python``, ``answer``): natively as ``{"name", "arguments"}`` (the action space is a
    ``ToolCall`` space of their JSON schemas), or in text as JSON or
    ``order(name="lamp", quantity=3)``. Errors (unknown tool or item, bad arguments, over
    budget) come back as the tool's message. **Scoring.** The final state is checked first
    (budget kept; the ordered stock exactly right; nothing else bought), as a gate: then
    1 if the answer is the right amount, else 0. **Levels.** easy: price lookup and
    arithmetic; medium: restock one item and report the balance; hard: find the cheapest
    item of a category, restock it, report the cost. **Oracle.** Orders what is missing, then
    answers. **Version history.** v1: the answer is compared by the math verifier of
    ``reasoning/Math-v1`` (percentages, scientific notation); a broken checker errors the
    episode instead of scoring 0. v0: first release.
    """

    metadata = {
        **TaskEnv.metadata,
        "needs_sandbox": True,
        "supports_state_snapshot": False,  # the python tool's files
        "action_style": "raw",
    }
    max_invalid_default = 10

    tools = TOOLS

    def __init__(self, **kwargs: Any) -> None:
        self.tasks = GeneratedTaskSet("tool-use", ErrandTask, ("easy", "medium", "hard"))
        super().__init__(**kwargs)

    def act(self, world: Shop, action: str) -> str:
        name, arguments = self.parse_tool_call(action)
        world.calls.append(name)
        return f"{name} -> {getattr(self, f'_tool_{name}')(world, **arguments)}"

    def _tool_search_items(self, world: Shop, query: str) -> str:
        words = query.lower().split()
        hits = [
            n
            for n in sorted(world.prices)
            if any(w in n or w in world.categories[n] for w in words)
        ]
        return ", ".join(f"{n} ({world.categories[n]})" for n in hits) or "no items match"

    def _tool_get_item(self, world: Shop, name: str) -> str:
        item = self._item(world, name)
        return json.dumps(
            {
                "name": item,
                "category": world.categories[item],
                "price": world.prices[item],
                "stock": world.stock[item],
            }
        )

    def _tool_get_balance(self, world: Shop) -> str:
        return str(world.balance)

    def _tool_order(self, world: Shop, name: str, quantity: int) -> str:
        item = self._item(world, name)
        if quantity < 1:
            raise InvalidAction(f"order: quantity must be at least 1, got {quantity}")
        cost = quantity * world.prices[item]
        if cost > world.balance:
            raise InvalidAction(
                f"order: {quantity} {item} cost {cost}, the balance is {world.balance}"
            )
        world.stock[item] += quantity
        world.balance -= cost
        stock = world.stock[item]
        return f"ordered {quantity} {item} for {cost}; stock {stock}, balance {world.balance}"

    def _tool_calculator(self, world: Shop, expression: str) -> str:
        return format_number(calculate(expression))

    def _tool_python(self, world: Shop, code: str) -> str:
        status, output = world.python.run(code)
        return f"({status}) {output or '(nothing printed)'}"

    def _tool_answer(self, world: Shop, value: str) -> str:
        world.answer = str(value)
        return f"answer recorded: {value}"

    @staticmethod
    def _item(world: Shop, name: str) -> str:
        key = name.strip().lower()
        if key not in world.prices:
            raise InvalidAction(f"no item named {name!r}; search_items lists what the shop has")
        return key

    def observe(self, world: Shop) -> str:
        return "The task is done." if world.answer is not None else "Call a tool."

    def state_key(self, world: Shop) -> str:
        return json.dumps([world.stock, world.balance, world.answer], sort_keys=True)

    def is_over(self, world: Shop) -> bool:
        return world.answer is not None

    def action_syntax(self) -> str:
        lines = [
            f"- {t['name']}({', '.join(t['parameters']['properties'])}): {t['description']}"
            for t in TOOLS
        ]
        return (
            'Call one tool per reply, as JSON {"name": ..., "arguments": {...}} or as '
            "name(arg=value, ...). Tools:\n" + "\n".join(lines)
        )


def check_tools() -> None:
    """Raise unless every declared tool has a handler (a guard for editing the list)."""
    missing = [t["name"] for t in TOOLS if not hasattr(ToolUseEnv, f"_tool_{t['name']}")]
    if missing:
        raise UsageError(f"tools without a handler: {missing}")


check_tools()
