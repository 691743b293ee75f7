"""An arena run's HTML page: who is stronger, how sure that is, who beat whom, and the games.

One self-contained file (``RUN_DIR/report.html``, the single-agent report's page and styles:
:func:`agentgym.eval.report.page`), built from the run's ``matches.jsonl`` alone: the
numbers are recomputed here, never copied from the run's ``ratings.json``.

* **ratings**, per env: the official table (:func:`~agentgym.arena.rate`: the batch fit, its
  bootstrap interval, rank and tie group, rows of one tie group banded together), each
  player's forfeits (matches lost by its agent failing), with openskill's provisional
  number beside it, labelled as such;
* **head to head**: for every ordered pair of players, wins-draws-losses and the score
  (a win 1, a draw half) of the row player against the column player, over every match both
  played (in a match of more than two seats, one placed above the other is a win);
* **games**: each match's moves turn by turn with the seats' players, and the start and final
  positions as the env shows them, the moves replayed (:func:`~agentgym.arena.replay.replay`),
  and which seat forfeited and why; a match that does not replay says why instead. The
  first :data:`VIEWER_MATCHES` matches by id are shown.
"""

from __future__ import annotations

import html
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agentgym.arena.provisional import PROVISIONAL, provisional_ratings
from agentgym.arena.ratings import rate
from agentgym.arena.records import MatchRecord
from agentgym.arena.replay import ReplayMismatch, replay
from agentgym.errors import AgentGymError, UsageError
from agentgym.eval.report import page
from agentgym.registry import make_multi

__all__ = [
    "MATCHES_FILE",
    "VIEWER_MATCHES",
    "read_matches",
    "write_report",
]

MATCHES_FILE = "matches.jsonl"
"""An arena run directory's match records, one :meth:`MatchRecord.to_dict` per line."""
VIEWER_MATCHES = 100
"""How many matches the game viewer shows (each is replayed to show its final position)."""


def read_matches(run_dir: Path) -> list[MatchRecord]:
    """The scored match records of an arena run directory; one clear line for a folder
    that is not one."""
    return read_run(run_dir)[0]


def read_run(run_dir: Path) -> tuple[list[MatchRecord], list[dict[str, Any]]]:
    """The scored match records and errored matches of an arena run directory
    (:func:`agentgym.arena.run.read_matches`); one clear line for a folder that is not one."""
    from agentgym.arena.run import read_matches as read_records

    if not (Path(run_dir) / MATCHES_FILE).is_file():
        raise UsageError(f"{run_dir} has no {MATCHES_FILE}: it is not an arena run directory")
    return read_records(Path(run_dir))


def write_report(run_dir: Path, path: Path | None = None) -> Path:
    """Write the arena run's report to ``path`` (default ``RUN_DIR/report.html``)."""
    records = read_matches(run_dir)
    if not records:
        raise UsageError(f"{Path(run_dir) / MATCHES_FILE} holds no match: nothing to report")
    parts: list[str] = [_run_table(Path(run_dir), records)]
    by_env: defaultdict[str, list[MatchRecord]] = defaultdict(list)
    for record in records:
        by_env[record.env_id].append(record)
    for env_id, matches in sorted(by_env.items()):
        parts += [
            f"<h2>Ratings: {_esc(env_id)}</h2>",
            ratings_table(matches),
            f"<h2>Head to head: {_esc(env_id)}</h2>",
            head_to_head(matches),
        ]
    parts += ["<h2>Games</h2>", games(records)]
    target = Path(path) if path is not None else Path(run_dir) / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    text = page("agentgym arena report", "\n".join(parts), css=_CSS)
    target.write_text(text, encoding="utf-8")
    return target


def _run_table(run_dir: Path, records: list[MatchRecord]) -> str:
    players = sorted({p for r in records for p in r.players})
    envs = sorted({r.env_id for r in records})
    rows = [
        ("directory", str(run_dir)),
        ("envs", ", ".join(envs)),
        ("players", ", ".join(players)),
        ("matches", str(len(records))),
        ("forfeited", str(sum(r.forfeit is not None for r in records))),
        ("groups", str(len({r.cluster for r in records}))),
    ]
    return _table(["", ""], [[name, value] for name, value in rows])


def ratings_table(records: list[MatchRecord]) -> str:
    """The official ratings with intervals and tie groups, openskill's provisional beside."""
    ratings = rate(records)
    try:
        provisional = {p.player: p for p in provisional_ratings(records)}
        note = f"openskill columns: {PROVISIONAL}."
    except AgentGymError as missing:  # openskill absent: the official table stands alone
        provisional, note = {}, f"No openskill column: {missing}"
    header = ["rank", "player", "rating", f"{ratings.confidence:.0%} interval", "tie group"]
    header += ["matches", "forfeits", "openskill mu", "sigma", "ordinal"]
    forfeits = Counter(r.seats[r.forfeit.seat] for r in records if r.forfeit is not None)
    rows = []
    for row in ratings.rows:
        live = provisional.get(row.player)
        rows.append(
            [
                str(row.rank),
                row.player,
                f"{row.rating:.1f}",
                f"[{row.low:.1f}, {row.high:.1f}]",
                str(row.tie_group),
                str(row.matches),
                str(forfeits[row.player]),
                *(
                    (f"{live.mu:.2f}", f"{live.sigma:.2f}", f"{live.ordinal:.2f}")
                    if live
                    else ("-", "-", "-")
                ),
            ]
        )
    bands = [row.tie_group % 2 for row in ratings.rows]
    convention = (
        f"{ratings.method}, Elo scale (400 points = odds of 10 to 1), prior {ratings.prior:g}; "
        f"intervals from {ratings.samples} bootstrap draws over {ratings.groups} match groups "
        f"(seed {ratings.seed}); players whose intervals overlap share a rank. Forfeits: "
        f"matches a player lost by its agent failing (raising, or over its time for a move). "
        f"{note}"
    )
    return _table(header, rows, bands) + f'<p class="convention">{_esc(convention)}</p>'


def head_to_head(records: Iterable[MatchRecord]) -> str:
    """Row player against column player: wins-draws-losses and the score (draws half)."""
    tally: defaultdict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for record in records:
        place = {p: i for i, block in enumerate(record.placings()) for p in block}
        for a, b in itertools.permutations(record.players, 2):
            outcome = 0 if place[a] < place[b] else 1 if place[a] == place[b] else 2
            tally[a, b][outcome] += 1
    players = sorted({a for a, _ in tally})
    rows = []
    for a in players:
        cells = [a]
        for b in players:
            wins, draws, losses = tally.get((a, b), (0, 0, 0))
            played = wins + draws + losses
            cells.append(
                f"{wins}-{draws}-{losses} ({(wins + draws / 2) / played:.2f})" if played else "-"
            )
        rows.append(cells)
    note = "Each cell: the row player's wins-draws-losses against the column player (score)."
    return _table(["", *players], rows) + f'<p class="note">{_esc(note)}</p>'


def games(records: list[MatchRecord]) -> str:
    """Each shown match's turns and final position, one collapsible box per match."""
    shown = sorted(records, key=lambda r: r.match_id)[:VIEWER_MATCHES]
    envs: dict[str, Any] = {}
    try:
        boxes = [_game(record, envs) for record in shown]
    finally:
        for env in envs.values():
            env.close()
    head = f"<p>{len(shown)} of {len(records)} matches, by match id.</p>"
    return head + "\n".join(boxes)


def _game(record: MatchRecord, envs: dict[str, Any]) -> str:
    seats = ", ".join(f"{seat}: {player}" for seat, player in record.seats.items())
    scores = ", ".join(f"{record.seats[s]} {score:g}" for s, score in record.scores.items())
    summary = f"{record.match_id} · {seats} · {scores}"
    turns = [f"<li>{_esc(_turn(record, move))}</li>" for move in record.moves]
    body = f'<ol class="turns">{"".join(turns)}</ol>' if turns else "<p>No moves recorded.</p>"
    if record.forfeit is not None:
        seat = record.forfeit.seat
        summary += f" · {record.seats[seat]} forfeited"
        body += (
            f'<p class="warning">{_esc(f"{seat} ({record.seats[seat]}) forfeited: ")}'
            f"{_esc(record.forfeit.reason)}</p>"
        )
    body += _positions(record, envs)
    return (
        f'<details class="episode"><summary>{_esc(summary)}</summary>'
        f'<div class="tx">{body}</div></details>'
    )


def _turn(record: MatchRecord, move: Mapping[str, str]) -> str:
    """``player_0 (alice): place 2 2``; every seat of a simultaneous round."""
    return ", ".join(
        f"{seat} ({record.seats.get(seat, '?')}): {text}" for seat, text in move.items()
    )


def _positions(record: MatchRecord, envs: dict[str, Any]) -> str:
    """The env's view at the start and after the moves are replayed, or why they do not
    replay."""
    if not record.moves:
        return ""
    try:
        if record.env_id not in envs:
            envs[record.env_id] = make_multi(record.env_id)
        env = envs[record.env_id]
        options = {"task_id": record.task_id} if record.task_id else None
        env.reset(seed=record.seed, options=options)
        start = env.unwrapped.render()
        replay(record, env=env)
        end = env.unwrapped.render()
        seat = env.possible_agents[0]  # whose view render() shows
    except ReplayMismatch as mismatch:
        return f'<p class="warning">{_esc(str(mismatch))}</p>'
    except AgentGymError as error:  # an env this machine cannot make (a missing extra)
        return f'<p class="note">No position shown: {_esc(str(error))}</p>'
    return "".join(
        f'<div class="tx-item tx-observation"><div class="tx-label">'
        f"{_esc(f'{when} position, as {record.env_id} shows it to {seat}')}</div>"
        f"<pre>{_esc(str(shown))}</pre></div>"
        for when, shown in (("start", start), ("final", end))
        if shown
    )


def _table(header: list[str], rows: list[list[str]], bands: list[int] | None = None) -> str:
    head = "".join(f"<th>{_esc(cell)}</th>" for cell in header)
    body = []
    for i, row in enumerate(rows):
        css = ' class="tie-band"' if bands and bands[i] else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{_esc(cell)}</td>" for cell in row) + "</tr>")
    return f'<div class="table"><table><tr>{head}</tr>{"".join(body)}</table></div>'


_CSS = """
tr.tie-band td { background: #f3f5f9; }
ol.turns { font-family: monospace; margin: 0.4em 0; }
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)
