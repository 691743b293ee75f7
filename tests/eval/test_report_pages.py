"""The HTML report in a real Chromium (Debian's, through Playwright), from two small real runs:
a transcript shows what the model wrote beside the action sent, the comparison section and the
ALL row are there, tasks come in numeric order, and no table cell wraps.

The pictures in docs/evaluation.md are this test's screenshots: written to ``docs/img/`` when
``AGENTGYM_DOCS_IMAGES=1`` (otherwise to the test's folder only, so a run leaves the checkout
as it was).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from PIL import Image

from agentgym.agents import AgentReply, OracleAgent
from agentgym.envs.web.browser import LAUNCH_ARGS, find_chromium
from agentgym.eval import evaluate
from agentgym.eval.plan import Benchmark, BenchmarkEnv
from agentgym.eval.report import read_run, write_html

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
pytestmark = pytest.mark.browser

IMAGES = Path(__file__).parents[2] / "docs" / "img"
SUITE = Benchmark(
    name="report-pages",
    episodes_per_task=1,
    envs=(
        BenchmarkEnv("reasoning-gym/chain_sum-v1", split="test", difficulty="easy", tasks=12),
        BenchmarkEnv("games/TowerOfHanoi-v0", split="test", difficulty="easy", tasks=3),
    ),
)


class ProseOracle(OracleAgent):
    """The oracle's moves, written as a model that does not use the answer tags would write
    them; the action sent is the oracle's (as flexible extraction would send it)."""

    name = "prose-oracle"

    async def act(self, observation, info):
        action = await super().act(observation, info)
        said = re.sub(r"</?answer>", "", action)
        return AgentReply(action=action, text=f"Adding them up step by step, I get {said}.")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    evaluate(SUITE, "random", folder / "random")
    evaluate(SUITE, ProseOracle, folder / "prose")
    runs = [read_run(folder / "random"), read_run(folder / "prose")]
    return write_html(runs, folder / "report.html")


@pytest.fixture(scope="module")
def page(report):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=find_chromium(), headless=True, args=list(LAUNCH_ARGS)
        )
        opened = browser.new_page(viewport={"width": 1280, "height": 1160})
        opened.goto(report.as_uri())
        yield opened
        browser.close()


def keep_picture(page, tmp_path: Path, name: str, element=None) -> None:
    """A screenshot, as a small palette PNG; into docs/img/ when AGENTGYM_DOCS_IMAGES=1."""
    shot = (element or page).screenshot()
    image = Image.open(io.BytesIO(shot)).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(out, "PNG", optimize=True)
    (tmp_path / name).write_bytes(out.getvalue())
    if os.environ.get("AGENTGYM_DOCS_IMAGES") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        (IMAGES / name).write_bytes(out.getvalue())


def test_the_report_answers_which_run_is_better(page, tmp_path):
    comparison = page.locator("#comparison + .pair")
    assert comparison.locator("p.sentence").inner_text().startswith("prose-oracle beats random by")
    assert comparison.locator("td", has_text="ALL (mean of env means)").count() == 1
    results = page.locator("#results ~ div.table").first
    assert results.locator("td", has_text="ALL (mean of env means)").count() == 2  # per run
    assert "mean of env means" in page.locator("#results + p.convention").inner_text()
    grid = page.locator("#per ~ div.table").first
    tasks = [t for t in grid.locator("th").all_inner_texts() if t.startswith("test/easy/")]
    hanoi, chain_sum = range(3), range(12)  # envs by id, then tasks in numeric order
    assert tasks == [f"test/easy/{n}" for n in (*hanoi, *chain_sum)]
    wrapped = page.evaluate(WRAPPED_CELLS)
    assert wrapped == []
    keep_picture(page, tmp_path, "report-overview.png")


def test_a_transcript_shows_the_model_text_beside_the_action(page, tmp_path):
    episode = page.locator("details.episode", has_text="prose-oracle · reasoning-gym").first
    episode.locator("summary").click()
    pair = episode.locator(".tx-pair").first
    said, sent = pair.locator("pre").all_inner_texts()
    assert said.startswith("Adding them up step by step, I get ") and "<answer>" not in said
    assert re.fullmatch(r"<answer>-?\d+</answer>", sent)
    assert episode.locator(".tx-instructions").count() == 1
    assert episode.locator(".tx-passed").inner_text().startswith("passed")
    episode.scroll_into_view_if_needed()
    keep_picture(page, tmp_path, "report-transcript.png", episode)


WRAPPED_CELLS = """() => {
  const wrapped = [];
  for (const cell of document.querySelectorAll("div.table td, div.table th")) {
    const range = document.createRange();
    range.selectNodeContents(cell);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    if (tops.size > 1) wrapped.push(cell.innerText);
  }
  return wrapped;
}"""
