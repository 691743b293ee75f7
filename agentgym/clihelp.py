"""How every ``agentgym`` command renders its help: plain text, one layout, every default shown.

The descriptions come from docstrings, which are written in reST for the API docs. A terminal
is no reST renderer, so :func:`plain` turns the markup into the text it stands for (a double
backquoted literal into the literal, a cross-reference into its name, strong emphasis into
its words, a literal block's double colon into one colon). :class:`HelpFormatter` is the one
formatter of every parser (the ``agentgym`` parser's subcommands inherit it; the parsers
built apart, such as ``agentgym train ALGO``'s, name it): it keeps a description's
paragraphs, examples and aligned lists as written and refills only its prose to the
terminal's width, and it ends each option's help with its default where one is set.

    >>> plain("Read ``episodes.jsonl`` (:func:`~agentgym.eval.report.read_run`)::")
    'Read episodes.jsonl (read_run):'
"""

from __future__ import annotations

import argparse
import re
import textwrap

__all__ = ["HelpFormatter", "describe_subcommands", "plain"]

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?)([^`<]*?)(?:\s*<([^`>]*)>)?`")
# An inline literal: a run of two or more backquotes, closed by the same run (````x```` holds
# a Markdown fence, ```bash, as one literal).
_LITERAL = re.compile(r"(`{2,})(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
# Strong emphasis as the env pages use it (**What the agent sees.**); not **kwargs.
_STRONG = re.compile(r"(?<![\w*])\*\*([A-Z][^*\n]*?[^\s*])\*\*(?![\w*])")
_DIRECTIVE = re.compile(r"^(\s*)\.\. ([a-z-]+)::\s*(.*)$")
_ADMONITIONS = {"note", "warning", "caution", "important", "tip", "seealso"}


def plain(text: str) -> str:
    """``text`` with its reST markup rendered as plain text (see the module's docstring)."""
    text = _ROLE.sub(_role_text, text)
    text = _LITERAL.sub(r"\2", text)
    text = _STRONG.sub(r"\1", text)
    lines = []
    for line in text.splitlines():
        directive = _DIRECTIVE.match(line)
        if directive:
            indent, name, rest = directive.groups()
            if name in _ADMONITIONS:
                lines.append(f"{indent}{name.capitalize()}: {rest}".rstrip())
            continue  # code-block, code, highlight...: the block below speaks for itself
        stripped = line.rstrip()
        if stripped.endswith("::"):
            body = stripped[:-2]
            if not body.strip():
                continue  # a lone "::" introduces the block and says nothing
            stripped = body.rstrip() if body.endswith(" ") else body + ":"
        lines.append(stripped)
    return "\n".join(lines)


def _role_text(match: re.Match[str]) -> str:
    """A cross-reference's text: its title if it has one, else its target (only the last
    dotted name where the target starts with ``~``, as Sphinx shows it)."""
    tilde, target, titled = match.groups()
    if titled is not None:
        return target.strip()
    return target.rsplit(".", 1)[-1] if tilde else target


class HelpFormatter(argparse.HelpFormatter):
    """The formatter of every ``agentgym`` parser (see the module's docstring)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = re.split(r"\n\s*\n", textwrap.dedent(plain(text)).strip("\n"))
        return "\n\n".join(_paragraph(block, width, indent) for block in paragraphs)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = plain(action.help or "")
        if _worth_showing(action) and "default" not in text:
            text += " (default: %(default)s)"
        return text


def _worth_showing(action: argparse.Action) -> bool:
    """Whether an option's default says something: a value, not "unset" (None, False, an
    empty list or text); positionals have no default to show."""
    default = action.default
    unset = default is None or default is False or default is argparse.SUPPRESS
    return bool(action.option_strings) and not unset and default not in ([], "")


def _paragraph(block: str, width: int, indent: str) -> str:
    """One paragraph of a description: prose refilled to ``width``; a paragraph that is laid
    out by hand (indented lines, aligned columns, a list) as written."""
    lines = block.splitlines()
    laid_out = any(
        line[:1].isspace() or re.search(r"\S {2,}\S", line) or re.match(r"\s*([-*]|\d+\.) ", line)
        for line in lines
    )
    if laid_out:
        return "\n".join(indent + line for line in lines)
    return textwrap.fill(
        " ".join(line.strip() for line in lines),
        width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_on_hyphens=False,
    )


def describe_subcommands(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand without a description its line from the command list, so that
    each ``--help`` has the same parts: usage, what the command does, its options."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for listed in action._choices_actions:
            sub = action.choices[listed.dest]
            if not sub.description and listed.help:
                sub.description = listed.help[0].upper() + listed.help[1:] + "."
            describe_subcommands(sub)
