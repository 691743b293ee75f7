"""The boards as plain HTML files that link to each other and work opened from disk: for a
static host (GitHub Pages, an object store) or an archive of the board as it stood.

::

    OUT/index.html           the benchmarks
    OUT/b/NAME.html          a board (re-scored and verified rows, ranked by success)
    OUT/b/NAME--FAMILY.html  its tab per family (ranked by that family's envs alone)
    OUT/s/ID.html            each ranked entry
    OUT/s/ID.bundle.tar.gz   its bundle (less the contact address)
    OUT/s/ID.episodes.json   its episodes as the board counts them, and as CSV (.csv)
    OUT/e/ID/N.html          its episodes (N: the episode's place in the plan)
    OUT/c/A--B.html          the paired comparison of each row with the next
    OUT/arena/index.html     the arena boards (when any arena run was accepted)
    OUT/arena/ENV.html       an env's arena board, as JSON (.json, the API's board), and
    OUT/arena/ENV.matches.json  its matches (the API's /api/v1/arena/matches)

The pages are the server's templates (:class:`~agentgym.leaderboard.pages.Site`) with
relative links, so they show the same numbers; what only a server can do (filters, other
comparisons) is left out. Like the served pages they hold no script.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentgym.errors import UsageError

from .arena import arena_board, arena_matches_json
from .bundle import public_bundle
from .downloads import episodes_csv, episodes_json
from .pages import BenchmarkView, BoardView, FileLinks, Site, file_name
from .store import NotFoundError, Store

__all__ = ["Exported", "export_site"]


@dataclass(frozen=True)
class Exported:
    """What :func:`export_site` wrote."""

    pages: int
    """HTML pages."""
    boards: int
    entries: int
    downloads: int = 0
    """Files to download: each entry's bundle and its episodes as JSON and CSV (and each
    arena board's JSON files)."""
    arena_boards: int = 0
    """Envs with an arena board."""


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
    return _Writer(site, Path(out), episodes).write_all(shown)


class _Writer:
    """Writes the pages of the boards asked for, counting them."""

    def __init__(self, site: Site, out: Path, episodes: bool) -> None:
        self.site, self.out, self.episodes = site, out, episodes
        self.pages = self.downloads = 0
        self.compared: set[tuple[str, str]] = set()

    def write(self, path: str, content: str | bytes) -> None:
        target = self.out / path
        data = content.encode("utf-8") if isinstance(content, str) else content
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError as error:
            raise UsageError(f"cannot write {target}: {error.strerror or error}") from None
        if path.endswith(".html"):
            self.pages += 1
        else:
            self.downloads += 1

    def write_all(self, shown: list[BenchmarkView]) -> Exported:
        arena = self._arena()
        home = FileLinks(0, arena_boards=bool(arena))
        self.write("index.html", self.site.render("index.html", home, benchmarks=shown))
        entries = 0
        for benchmark in shown:
            name, version = benchmark.record.name, benchmark.record.version
            board = self.site.board(name, version=version)
            self.write(f"b/{file_name(name)}.html", self._board_page(board))
            for family in board.families:
                tab = self.site.board(name, version=version, family=family)
                self.write(f"b/{file_name(name)}--{file_name(family)}.html", self._board_page(tab))
                self._comparisons(tab)
            for row in board.board.rows:
                entries += 1
                self._entry(row.id)
            self._comparisons(board)
        return Exported(self.pages, len(shown), entries, self.downloads, arena)

    def _arena(self) -> int:
        """Every env's arena board: its page, its board and matches as the API gives them,
        and the list of them; nothing when no arena run was accepted."""
        store, links = self.site.store, FileLinks(1, arena_boards=True)
        envs = store.arena_envs()
        if not envs:
            return 0
        self.write("arena/index.html", self.site.render("arena.html", links, board=None, envs=envs))
        for env_id, _ in envs:
            board = arena_board(store, env_id, seed=self.site.seed)
            stem = f"arena/{file_name(env_id)}"
            page = self.site.render("arena.html", links, board=board, envs=[])
            self.write(f"{stem}.html", page)
            self.write(f"{stem}.json", json.dumps(board.to_dict(), indent=2))
            self.write(f"{stem}.matches.json", json.dumps(arena_matches_json(store, env_id)))
        return len(envs)

    def _board_page(self, view: BoardView) -> str:
        return self.site.render("board.html", FileLinks(1), view=view)

    def _entry(self, submission_id: str) -> None:
        """The entry's page, its downloads and (unless left out) its episodes' pages."""
        site, stem = self.site, f"s/{file_name(submission_id)}"
        entry = site.entry(submission_id)
        self.write(
            f"{stem}.html", site.render("entry.html", FileLinks(1), view=entry, check_error=None)
        )
        checked = entry.latest is not None
        self.write(
            f"{stem}.episodes.json", episodes_json(submission_id, entry.episodes, checked=checked)
        )
        self.write(f"{stem}.episodes.csv", episodes_csv(entry.episodes, checked=checked))
        stored = site.store.get_blob(entry.submission.bundle_sha)
        self.write(f"{stem}.bundle.tar.gz", public_bundle(stored, site.bundle_limits))
        if not self.episodes:
            return
        for position, scored in enumerate(entry.episodes):
            view = site.episode(submission_id, scored.episode_id)
            html = site.render("episode.html", FileLinks(2), view=view)
            self.write(f"e/{file_name(submission_id)}/{position}.html", html)

    def _comparisons(self, view: BoardView) -> None:
        """The comparison of each row with the next (each pair once, whatever its tabs)."""
        for comparison in view.board.comparisons:
            a, b = comparison.a or "", comparison.b or ""
            if (a, b) in self.compared:
                continue
            self.compared.add((a, b))
            page = self.site.render("compare.html", FileLinks(1), view=self.site.compare(a, b))
            self.write(f"c/{file_name(a)}--{file_name(b)}.html", page)
