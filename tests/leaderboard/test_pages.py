"""The leaderboard's pages in a real Chromium (Debian's, through Playwright): the board with its
interval bars and tie groups, its ratings chart, dates, downloads, model facts and costs, its
family tabs re-ranking, an entry, the episode viewer and the paired comparison, reached by
clicking as a reader would; what a submitter wrote shown as inert text; the static export
browsed from disk.

The pictures in docs/leaderboard.md are these tests' screenshots: they are written to
``docs/img/`` when ``AGENTGYM_DOCS_IMAGES=1`` (otherwise to the test's folder only, so a test
run leaves the checkout as it was).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from hostile_text import ATTRIBUTE, HOSTILE, SCRIPT, SQL  # tests/: script and SQL in every field
from PIL import Image

from agentgym.agents import AgentReply, OracleAgent
from agentgym.envs.web.browser import LAUNCH_ARGS, find_chromium
from agentgym.eval import Benchmark, BenchmarkEnv, evaluate
from agentgym.leaderboard.bundle import pack_bundle, read_bundle
from agentgym.leaderboard.downloads import COLUMNS
from agentgym.leaderboard.export import export_site
from agentgym.leaderboard.results import Rescore, ScoredEpisode
from agentgym.leaderboard.server import create_app
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import SubmissionInfo
from agentgym.ledger import read_episodes

HOSTILE_FACTS = replace(HOSTILE, organisation=f"{SCRIPT}{ATTRIBUTE}{SQL}")
"""The hostile description with markup in the model's organisation too."""
DASH = "\u2013"
"""What a cell shows where nothing is known."""

pytestmark = pytest.mark.browser

IMAGES = Path(__file__).parents[2] / "docs" / "img"
ENTRIES = {
    "oracle": SubmissionInfo(agent="oracle", model="(the tasks' solvers)", notes="The ceiling."),
    "half-oracle": SubmissionInfo(
        agent="half-oracle", model="(solver or random)", method="custom",
        notes="The oracle on tasks with an even seed, a random valid action on the others.",
    ),
    "first-listed": SubmissionInfo(
        agent="first-listed", model="(no model)", organisation="agentgym", open_weights=True,
        link="https://example.org/first-listed", price_prompt=0.15, price_completion=0.6,
    ),
    "random": SubmissionInfo(agent="random", model="(no model)", notes="The floor."),
}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=find_chromium(), headless=True, args=list(LAUNCH_ARGS)
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh page that records every dialog a script might open."""
    context = browser.new_context(viewport={"width": 1280, "height": 760})
    opened = context.new_page()
    opened.dialogs = []
    opened.on("dialog", lambda dialog: (opened.dialogs.append(dialog.message), dialog.dismiss()))
    yield opened
    context.close()


def board_server(folder: Path, tiny, live_server_type, bundles: list[bytes]):
    """A store, its server, and ``bundles`` submitted and checked, one at a time."""
    store = Store(folder / "leaderboard.db")
    store.migrate()
    store.add_benchmark(tiny.name, tiny.version, tiny.digest(), tiny.to_dict())
    token = store.create_token("pages", ["submit"])
    app = create_app(store)
    server = live_server_type(app)
    import httpx

    for data in bundles:
        answer = httpx.post(
            f"{server.url}/api/v1/submissions",
            files={"bundle": ("bundle.tar.gz", data)},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 202, answer.text
        assert app.state.checker.wait(60)
    return store, server


@pytest.fixture(scope="module")
def board(tmp_path_factory, tiny, tiny_runs, live_server_type):
    """The tiny benchmark's board with four real entries."""
    folder = tmp_path_factory.mktemp("pages")
    bundles = [
        pack_bundle(tiny_runs[name], info, folder / f"{name}.tar.gz").read_bytes()
        for name, info in ENTRIES.items()
    ]
    store, server = board_server(folder, tiny, live_server_type, bundles)
    yield server.url, store
    server.close()
    store.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, tiny, tiny_runs, live_server_type):
    """A board with a submission whose every text field holds markup, and one whose first
    action does (that bundle does not replay: rejected, its episodes shown as recorded)."""
    folder = tmp_path_factory.mktemp("hostile")
    run = folder / "run"
    shutil.copytree(tiny_runs["random"], run)
    lines = (run / "episodes.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["steps"][0]["action"] = f"{SCRIPT}{ATTRIBUTE}"
    lines[0] = json.dumps(first)
    (run / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    bundles = [
        pack_bundle(tiny_runs["random"], HOSTILE_FACTS, folder / "info.tar.gz").read_bytes(),
        pack_bundle(run, HOSTILE, folder / "action.tar.gz").read_bytes(),
    ]
    store, server = board_server(folder, tiny, live_server_type, bundles)
    yield server.url, store, first["episode_id"]
    server.close()
    store.close()


MIXED = {
    "name": "mixed",
    "version": 1,
    "description": "Two families: games and reasoning (synthetic re-scores, no env run).",
    "envs": [{"id": "games/Wordle-v0"}, {"id": "games/Sokoban-v0"}, {"id": "reasoning/Math-v0"}],
}
"""A board of two families whose entries' order flips between the families' tabs."""
MIXED_ENTRIES = {
    # agent: (success rate per env in MIXED's order, what it says about its model)
    "gamer": ((0.9, 0.8, 0.1), dict(organisation="Gamers", open_weights=True,
              parameters=7_000_000_000, price_prompt=0.2, price_completion=0.6)),
    "thinker": ((0.2, 0.1, 1.0), dict(organisation="Reasoners", open_weights=False,
                price_prompt=3.0, price_completion=15.0, link="https://example.org/thinker")),
    "middling": ((0.5, 0.4, 0.5), {}),
}  # fmt: skip


def mixed_episodes(rates: tuple[float, ...]) -> list[ScoredEpisode]:
    """20 tasks per env, the first ``rate`` share of them passed; 900 + 100 tokens each."""
    episodes = []
    for env, rate in zip((e["id"] for e in MIXED["envs"]), rates, strict=True):
        for task in range(20):
            passed = task < rate * 20
            episodes.append(
                ScoredEpisode(
                    episode_id=f"{env}|test/easy/{task}|0", env_id=env, task_id=f"test/easy/{task}",
                    repeat=0, seed=task, outcome="ok", passed=passed, score=float(passed),
                    steps=3, prompt_tokens=900, completion_tokens=100,
                )
            )  # fmt: skip
    return episodes


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, live_server_type):
    """A board of :data:`MIXED` with :data:`MIXED_ENTRIES`, re-scores stored directly."""
    folder = tmp_path_factory.mktemp("mixed")
    store = Store(folder / "leaderboard.db")
    store.migrate()
    digest = "d" * 64
    benchmark = store.add_benchmark(MIXED["name"], 1, digest, MIXED)
    for agent, (rates, facts) in MIXED_ENTRIES.items():
        sha = store.put_blob(agent.encode())
        info = SubmissionInfo(agent=agent, model=f"{agent}-model", **facts)
        sub, _ = store.add_submission(benchmark, sha, info, {}, None)
        rescore = Rescore("mixed", 1, digest, "re-scored", mixed_episodes(rates), "test")
        store.add_rescore(sub.id, rescore)
        store.set_status(sub.id, "scored")
    # replay=False: the server queues no re-score of these synthetic rows at its start
    server = live_server_type(create_app(store, replay=False))
    yield server.url, store
    server.close()
    store.close()


def agents_in_order(page) -> list[str]:
    return page.locator("#board a.agent").all_inner_texts()


def keep_picture(page, tmp_path: Path, name: str) -> None:
    """A screenshot, as a small palette PNG; into docs/img/ when AGENTGYM_DOCS_IMAGES=1."""
    shot = Image.open(io.BytesIO(page.screenshot(full_page=False))).convert("RGB")
    out = io.BytesIO()
    shot.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(out, "PNG", optimize=True)
    (tmp_path / name).write_bytes(out.getvalue())
    if os.environ.get("AGENTGYM_DOCS_IMAGES") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        (IMAGES / name).write_bytes(out.getvalue())


def nothing_ran(page) -> None:
    """No dialog opened, no script of the page's set its flag, no element came from text."""
    assert page.dialogs == []
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("script").count() == 0
    assert page.locator("img").count() == 0


# ---------------------------------------------------------------------------------------------
# The pages


def test_the_board_ranks_with_interval_bars_and_shades_tie_groups(page, board, tmp_path):
    url, _ = board
    page.goto(f"{url}/")
    page.get_by_role("link", name="tiny-games").click()
    rows = page.locator("#board tbody tr")
    assert rows.count() == 4
    first = rows.nth(0)
    assert first.get_attribute("data-rank") == "1"
    assert first.locator("a.agent").inner_text() == "oracle"
    assert first.locator("td.success").inner_text().startswith("100.0%")
    assert page.locator("#board svg.ci rect.band").count() == 8  # success and score per row
    assert "points" in page.locator("#floor").inner_text()

    groups = [rows.nth(i).get_attribute("data-tie-group") for i in range(4)]
    ranks = [rows.nth(i).get_attribute("data-rank") for i in range(4)]
    assert all(
        (g1 == g2) == (r1 == r2)
        for g1, r1, g2, r2 in zip(groups, ranks, groups[1:], ranks[1:], strict=False)
    )
    shade = "el => getComputedStyle(el.querySelector('td')).backgroundColor"
    colours = {g: rows.nth(i).evaluate(shade) for i, g in enumerate(groups)}
    for g in colours:  # neighbouring groups are told apart by their shading
        if str(int(g) + 1) in colours:
            assert colours[g] != colours[str(int(g) + 1)]
    assert "separable" in first.locator("a.vs-next").inner_text()
    nothing_ran(page)
    page.set_viewport_size({"width": 1280, "height": 1060})  # the chart too
    keep_picture(page, tmp_path, "leaderboard-board.png")


def test_the_board_draws_a_mark_per_entry_dates_and_downloads_per_row(page, board):
    url, store = board
    page.goto(f"{url}/b/tiny-games")
    rows = page.locator("#board tbody tr")
    ranked = [rows.nth(i).get_attribute("data-id") for i in range(4)]
    marks = page.locator("#chart g.mark")
    assert marks.count() == 4 and page.locator("#chart circle.estimate").count() == 4
    assert [marks.nth(i).get_attribute("data-id") for i in range(4)] == ranked
    for i in range(4):  # each mark sits in its row's tie group, drawn as a band
        group = marks.nth(i).get_attribute("data-tie-group")
        assert group == rows.nth(i).get_attribute("data-tie-group")
        assert page.locator(f"#chart rect.band[data-tie-group='{group}']").count() == 1
    oracle = page.locator("#chart g.mark").first  # 100% [100, 100]: all at the axis's end
    ends = {oracle.locator("line.interval").get_attribute(a) for a in ("x1",)}
    assert ends == {oracle.locator("circle").get_attribute("cx")} == {"710.0"}

    submitted = {s.id: s.created_at.strftime("%Y-%m-%d") for s in store.submissions()}
    for i, key in enumerate(ranked):
        dates = rows.nth(i).locator("td.dates")
        assert dates.locator(".submitted").inner_text() == submitted[key]
        rescored = store.rescore_history(key)[-1].computed_at.strftime("%Y-%m-%d")
        assert dates.locator(".rescored").inner_text() == rescored
    assert "mean of env means" in page.locator("#headline").inner_text()
    assert page.locator("#tabs").inner_text().split() == ["All", "games"]

    listed = rows.filter(has_text="first-listed")
    facts = listed.locator(".model-facts")
    assert facts.inner_text() == "agentgym · open weights · link"  # no size given
    assert facts.locator("a.model-link").get_attribute("href") == "https://example.org/first-listed"
    assert listed.locator("td.cost").inner_text() == "$0"  # priced; the agent uses no tokens
    unpriced = rows.filter(has_text="half-oracle")
    assert unpriced.locator("td.cost").inner_text() == DASH
    assert unpriced.locator(".model-facts").inner_text() == DASH  # nothing said of the model
    assert unpriced.locator("small.method").inner_text() == "custom"

    # The downloads, as a reader's browser fetches them from the row's links
    oracle_row = rows.nth(0)
    key = ranked[0]
    bundle = page.request.get(url + oracle_row.locator("a.dl-bundle").get_attribute("href"))
    assert bundle.headers["content-type"] == "application/gzip"
    assert bundle.body() == store.get_blob(store.submission(key).bundle_sha)  # no contact: as sent
    episodes = page.request.get(url + oracle_row.locator("a.dl-json").get_attribute("href")).json()
    latest = store.latest_rescore(key)
    assert episodes["submission"] == key and episodes["checked"] is True
    assert [e["episode_id"] for e in episodes["episodes"]] == [
        e.episode_id for e in latest.episodes
    ]
    assert all(e["passed"] is True and e["score"] == 1.0 for e in episodes["episodes"])
    table = page.request.get(url + oracle_row.locator("a.dl-csv").get_attribute("href"))
    assert table.headers["content-type"].startswith("text/csv")
    assert "attachment" in table.headers["content-disposition"]
    lines = list(csv.DictReader(io.StringIO(table.text())))
    assert list(lines[0]) == list(COLUMNS) and len(lines) == 8
    assert {(r["env_id"], r["outcome"], r["passed"]) for r in lines} == {
        ("games/Wordle-v0", "ok", "true"), ("games/TowerOfHanoi-v0", "ok", "true")
    }  # fmt: skip
    nothing_ran(page)


def test_a_bundle_downloaded_leaves_out_the_contact_address(hostile):
    url, store, _ = hostile
    scored = next(s for s in store.submissions() if s.status == "scored")
    sent = store.get_blob(scored.bundle_sha)
    assert read_bundle(sent).info.contact  # the bundle as sent names it
    answer = httpx.get(f"{url}/s/{scored.id}/bundle.tar.gz")
    assert answer.status_code == 200
    downloaded = read_bundle(answer.content)
    assert downloaded.info.contact == "" and "example.org" not in json.dumps(
        downloaded.info.to_dict()
    )
    assert downloaded.info.agent == HOSTILE.agent
    assert [r.to_dict() for r in downloaded.episodes] == [
        r.to_dict() for r in read_bundle(sent).episodes
    ]
    assert httpx.get(f"{url}/s/no-such-id/episodes.csv").status_code == 404


def test_the_family_tabs_rerank_by_the_family_number(page, mixed, tmp_path):
    url, _ = mixed
    page.goto(f"{url}/b/mixed")
    assert page.locator("#tabs").inner_text().split() == ["All", "games", "reasoning"]
    assert agents_in_order(page) == ["gamer", "middling", "thinker"]  # (.6, .47, .43)
    header = page.locator("#board thead th.family")
    assert [header.nth(i).get_attribute("data-family") for i in range(2)] == ["games", "reasoning"]
    gamer = page.locator("#board tbody tr").filter(has_text="gamer")
    games = gamer.locator("td.family[data-family='games']").inner_text()
    assert games.startswith("85.0%")  # the mean of its two games' means (.9, .8)
    assert gamer.locator("td.family[data-family='reasoning']").inner_text().startswith("10.0%")
    assert gamer.locator(".org").inner_text() == "Gamers"
    assert gamer.locator(".params").inner_text() == "7B"
    assert gamer.locator("td.tokens").inner_text().startswith("1,000")
    assert gamer.locator("td.cost").inner_text() == "$0.00024"  # 900 x 0.2 + 100 x 0.6 per 1e6
    thinker = page.locator("#board tbody tr").filter(has_text="thinker")
    assert thinker.locator(".open-weights").inner_text() == "closed weights"
    assert thinker.locator("a.model-link").get_attribute("href") == "https://example.org/thinker"

    page.locator("#tabs a", has_text="reasoning").click()
    assert page.url.endswith("/b/mixed?family=reasoning&version=1")
    assert agents_in_order(page) == ["thinker", "middling", "gamer"]
    assert page.locator("#tabs strong").inner_text() == "reasoning"
    assert "reasoning/ envs alone" in page.locator("#ranked-by").inner_text()
    first = page.locator("#board tbody tr").first
    assert first.locator("td.success").inner_text().startswith("100.0%")
    assert page.locator("#board thead th.family").count() == 1  # games; reasoning is Success
    assert first.get_attribute("data-rank") == "1"
    chart = page.locator("#chart g.mark text.label").all_text_contents()
    assert [label.split(". ", 1)[1] for label in chart] == ["thinker", "middling", "gamer"]
    nothing_ran(page)
    page.set_viewport_size({"width": 1280, "height": 1060})  # the chart too
    keep_picture(page, tmp_path, "leaderboard-board-family.png")

    page.locator("#tabs a", has_text="games").click()
    assert agents_in_order(page) == ["gamer", "middling", "thinker"]
    assert httpx.get(f"{url}/b/mixed?family=swe").status_code == 404


def test_an_entry_shows_its_numbers_per_env_its_episodes_and_its_checks(page, board, tmp_path):
    url, _ = board
    page.goto(f"{url}/b/tiny-games")
    page.locator("#board a.agent", has_text="half-oracle").click()
    assert page.locator("#agent").inner_text() == "half-oracle"
    assert page.locator("#status").inner_text() == "scored"
    assert page.locator("#numbers tbody tr").count() == 3  # all, then each env
    assert page.locator("#episodes tbody tr").count() == 8
    replay = page.locator("#episodes tbody tr td:nth-child(2)").all_inner_texts()
    assert set(replay) <= {"ok", "truncated"}
    assert page.locator("#history tbody tr").count() == 1
    assert "even seed" in page.locator("#notes").inner_text()
    assert page.locator("#organisation").inner_text() == DASH  # given nothing of its model
    assert page.locator("#rescored").inner_text().endswith("UTC")
    links = page.locator("#downloads a")
    assert links.all_inner_texts() == ["bundle", "json", "csv"]
    episodes = page.request.get(url + links.nth(1).get_attribute("href")).json()
    assert len(episodes["episodes"]) == 8 and episodes["checked"] is True
    nothing_ran(page)
    keep_picture(page, tmp_path, "leaderboard-entry.png")


def test_the_episode_viewer_shows_each_step_and_the_recomputed_verdict(page, board):
    url, _ = board
    page.goto(f"{url}/b/tiny-games")
    page.locator("#board a.agent", has_text="oracle").first.click()
    page.locator("#episodes tbody tr a").first.click()
    assert page.locator("h1").inner_text().startswith("games/Wordle-v0|")
    assert page.locator("#outcome").inner_text().startswith("ok")
    assert page.locator("#recomputed").inner_text().startswith("passed, score 1.000")
    assert page.locator("#transcript .tx-observation pre").inner_text().strip()
    steps = page.locator("#transcript .tx-step")
    assert steps.count() >= 1
    assert steps.first.locator("pre").first.inner_text().strip()  # the action
    assert "reward" in steps.first.locator("h4").inner_text()
    nothing_ran(page)


VIEWER = Benchmark(
    "viewer",
    (BenchmarkEnv("reasoning/ToolUse-v1", tasks=3),),
    episodes_per_task=1,
    description="Errands in a shop through tools: the episode viewer's board.",
)
WROTE = "I look it up first, then answer."


class Narrator(OracleAgent):
    """The oracle's tool calls, each after a sentence of its own, as a model writes them: the
    text the viewer must show beside the call that was extracted from it."""

    name = "narrator"

    async def act(self, observation, info):
        action = await super().act(observation, info)
        return AgentReply(action=action, text=f"{WROTE}\n\n```json\n{action}\n```")


@pytest.fixture(scope="module")
def narrated(tmp_path_factory, live_server_type):
    """A board of :data:`VIEWER` with the :class:`Narrator`'s run; its longest episode."""
    folder = tmp_path_factory.mktemp("viewer")
    with ThreadPoolExecutor(1) as pool:  # off the thread where Playwright's loop may run
        run = pool.submit(evaluate, VIEWER, Narrator, folder / "run").result().run_dir
    info = SubmissionInfo(agent="narrator", model="(the oracle, narrating)")
    bundle = pack_bundle(run, info, folder / "narrator.tar.gz").read_bytes()
    store, server = board_server(folder, VIEWER, live_server_type, [bundle])
    longest = max(read_episodes(run / "episodes.jsonl"), key=lambda record: len(record.steps))
    yield server.url, store.submissions()[0].id, longest
    server.close()
    store.close()


def test_the_episode_viewer_shows_the_models_text_beside_its_tool_call(page, narrated, tmp_path):
    url, submission, record = narrated
    assert len(record.steps) >= 2 and record.instructions
    page.goto(f"{url}/s/{submission}")
    page.locator("#episodes a", has_text=record.episode_id).click()
    assert page.locator("#recomputed").inner_text().startswith("passed")
    transcript = page.locator("#transcript")
    instructions = transcript.locator(".tx-instructions")
    assert instructions.count() == 1  # once per episode, not per step
    assert record.instructions.splitlines()[0] in instructions.inner_text()
    steps = transcript.locator(".tx-step")
    assert steps.count() == len(record.steps)
    wrote, sent = steps.first.locator(".tx-pair > div").all()
    assert wrote.locator(".tx-label").inner_text() == "model wrote"
    assert WROTE in wrote.locator("pre").inner_text()
    call = json.loads(record.steps[0].action)
    assert sent.locator(".tx-call-name").inner_text() == f"{call['name']}(…)"
    assert '"arguments"' not in sent.inner_text()  # the call's arguments, not its JSON
    assert transcript.locator(".tx-outcome").count() == 0  # the replay's verdict is above
    nothing_ran(page)
    page.set_viewport_size({"width": 1280, "height": 1180})  # down to the first steps
    keep_picture(page, tmp_path, "leaderboard-episode.png")


def test_the_comparison_pairs_two_entries_per_env_and_per_task(page, board, tmp_path):
    url, _ = board
    page.goto(f"{url}/b/tiny-games")
    page.locator("#board a.vs-next").first.click()
    assert page.locator("#b").inner_text() == "oracle"
    assert page.locator("#overall tbody tr").count() == 3
    assert page.locator("#tasks tbody tr").count() == 8
    assert "pts" in page.locator("#overall tbody tr").first.inner_text()
    nothing_ran(page)
    keep_picture(page, tmp_path, "leaderboard-compare.png")


def test_what_a_submitter_wrote_appears_literally_and_runs_nothing(page, hostile):
    url, store, forged_episode = hostile
    scored = next(s for s in store.submissions() if s.status == "scored")
    rejected = next(s for s in store.submissions() if s.status == "rejected")

    page.goto(f"{url}/b/tiny-games")
    assert page.locator("#board a.agent").inner_text() == HOSTILE.agent
    assert page.locator("#board .org").inner_text() == HOSTILE_FACTS.organisation
    nothing_ran(page)

    page.goto(f"{url}/s/{scored.id}")
    assert page.locator("#agent").inner_text() == HOSTILE.agent
    assert page.locator("#model").inner_text() == HOSTILE.model
    assert page.locator("#model-revision").inner_text() == HOSTILE.model_revision
    assert page.locator("#notes").inner_text() == HOSTILE.notes
    assert page.locator("#organisation").inner_text() == HOSTILE_FACTS.organisation
    assert "x@example.org" not in page.content()  # the contact is never shown
    nothing_ran(page)

    page.goto(f"{url}/s/{rejected.id}")
    assert "cannot be scored" in page.locator("#reason").inner_text()
    page.locator("#episodes a", has_text=forged_episode).click()
    action = page.locator("#transcript .tx-step").first.locator("pre").first
    assert action.inner_text() == f"{SCRIPT}{ATTRIBUTE}"
    nothing_ran(page)

    page.goto(f"{url}/compare?a={scored.id}&b={scored.id}")
    assert page.locator("#a").inner_text() == HOSTILE.agent
    nothing_ran(page)


def test_the_static_export_is_browsed_from_disk(page, board, tmp_path):
    _, store = board
    export_site(store, tmp_path / "site")
    page.goto((tmp_path / "site" / "index.html").as_uri())
    page.get_by_role("link", name="tiny-games").click()
    assert page.locator("#board tbody tr").count() == 4
    page.locator("#board a.agent", has_text="random").click()
    assert page.locator("#agent").inner_text() == "random"
    page.locator("#episodes tbody tr a").first.click()
    assert page.url.startswith("file://") and page.url.endswith("/0.html")
    assert page.locator("#transcript .tx-observation pre").inner_text().strip()
    page.go_back()
    page.get_by_role("link", name="tiny-games").click()
    page.locator("#tabs a", has_text="games").click()
    assert page.url.endswith("/b/tiny-games--games.html")
    assert page.locator("#board tbody tr").count() == 4
    page.locator("#board a.vs-next").first.click()
    assert page.locator("#tasks tbody tr").count() == 8
    nothing_ran(page)

    page.go_back()
    first = page.locator("#board tbody tr").first
    entry = first.get_attribute("data-id")
    for kind in ("bundle.tar.gz", "episodes.json", "episodes.csv"):
        link = first.locator(
            ".downloads a", has_text=kind.split(".")[-1] if kind != "bundle.tar.gz" else "bundle"
        )
        assert link.get_attribute("href") == f"../s/{entry}.{kind}"
        assert (tmp_path / "site" / "s" / f"{entry}.{kind}").is_file()
    written = json.loads((tmp_path / "site" / "s" / f"{entry}.episodes.json").read_text())
    assert len(written["episodes"]) == 8
