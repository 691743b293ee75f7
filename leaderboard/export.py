"""The boards as plain HTML files that link to each other and work opened from disk: for a
static host (GitHub Pages, an object store) or an archive of the board as it stood.

::

    OUT/index.html           the benchmarks
    OUT/b/NAME.html          a board (re-scored and verified rows, ranked by success)
    OUT/s/ID.html            each ranked entry
    OUT/e/ID/N.html          its episodes (N: the episode's place in the plan)
    OUT/c/A--B.html          the paired comparison of each row with the next

The pages are the server's templates (:class:`~agentgym.leaderboard.pages.Site`) with
relative links, so they show the same numbers; what only a server can do (filters, other
comparisons) is left out. Like the served pages they hold no script.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentgym.errors import UsageError

from .pages import FileLinks, Site, file_name
from .store import NotFoundError, Store

__all__ = ["Exported", "export_site"]


@dataclass(frozen=True)
class Exported:
    """What :func:`export_site` wrote."""

    pages: int
    boards: int
    entries: int


def export_site(
    store: Store,
    out: str | Path,
    *,
    benchmarks: Iterable[str] | None = None,
    episodes: bool = True,
) -> Exported:
    """Write the boards of ``benchmarks`` (default: every registered one, newest versions)
    and the pages they link to under ``out``; files already there are overwritten."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; the export writes a folder of pages")
    site = Site(store)
    views = site.benchmarks()
    wanted = set(benchmarks) if benchmarks is not None else {v.record.name for v in views}
    unknown = wanted - {v.record.name for v in views}
    if unknown:
        raise NotFoundError(f"no benchmark {', '.join(map(repr, sorted(unknown)))} is registered")
    newest = {v.record.name: v for v in views}  # ordered by version: the last one wins
    shown = [v for v in newest.values() if v.record.name in wanted]
    pages = 0

    def write(path: str, html: str) -> None:
        nonlocal pages
        target = out / path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(html, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"cannot write {target}: {error.strerror or error}") from None
        pages += 1

    write("index.html", site.render("index.html", FileLinks(0), benchmarks=shown))
    entries = 0
    for benchmark in shown:
        board = site.board(benchmark.record.name, version=benchmark.record.version)
        write(
            f"b/{file_name(benchmark.record.name)}.html",
            site.render("board.html", FileLinks(1), view=board),
        )
        for row in board.board.rows:
            entries += 1
            entry = site.entry(row.id)
            page = site.render("entry.html", FileLinks(1), view=entry, check_error=None)
            write(f"s/{file_name(row.id)}.html", page)
            if not episodes:
                continue
            for position, scored in enumerate(entry.episodes):
                view = site.episode(row.id, scored.episode_id)
                html = site.render("episode.html", FileLinks(2), view=view)
                write(f"e/{file_name(row.id)}/{position}.html", html)
        for comparison in board.board.comparisons:
            a, b = comparison.a or "", comparison.b or ""
            compared = site.compare(a, b)
            page = site.render("compare.html", FileLinks(1), view=compared)
            write(f"c/{file_name(a)}--{file_name(b)}.html", page)
    return Exported(pages, len(shown), entries)
