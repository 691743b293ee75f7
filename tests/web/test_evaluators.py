"""WebArena's evaluator kinds: string match, URL match, programs over the final database,
and the infeasible-task convention."""

import sqlite3
from dataclasses import dataclass

import pytest

import agentgym
from agentgym.core import Verdict
from agentgym.envs.web.base import INFEASIBLE_HINT
from agentgym.envs.web.evaluators import (
    Infeasible,
    ProgramCheck,
    StringMatch,
    UrlMatch,
    all_of,
    canonical_url,
    numbers_in,
)
from agentgym.envs.web.sites.base import SiteState
from agentgym.envs.web.sites.forum import ForumSite
from agentgym.errors import UsageError, VerifierError


@dataclass
class Ending:
    """What an evaluator reads of a WebWorld: the agent's declarations, the final page, and
    the episode's databases (real ones, from a SiteState)."""

    answer: str | None = None
    infeasible: str | None = None
    path: str = "/forum/"
    state: SiteState | None = None
    episode: str = "ep1"

    def db(self, site):
        return self.state.connect(self.episode, site)


@pytest.fixture
def state(tmp_path):
    state = SiteState(tmp_path, {"forum": ForumSite()})
    state.prepare("ep1", {"forum": 1})
    return state


# ---------------------------------------------------------------------------- string match


def test_exact_match_ignores_case_punctuation_and_articles():
    assert StringMatch(exact="alice")(Ending(answer="Alice.")).passed
    assert StringMatch(exact="the hobbit")(Ending(answer="Hobbit")).passed


def test_exact_match_fails_on_another_answer():
    verdict = StringMatch(exact="alice")(Ending(answer="bob"))
    assert (verdict.score, verdict.passed) == (0.0, False)


def test_must_include_needs_every_phrase_as_whole_words():
    judge = StringMatch(must_include=["alice", "bob"])
    assert judge(Ending(answer="Alice and Bob")).passed
    assert not judge(Ending(answer="Alice and Bobby")).passed
    assert judge(Ending(answer="only alice")).components["included"] == 0.5


def test_number_match_reads_the_one_number_in_the_answer():
    assert StringMatch(number=12)(Ending(answer="It has 12 comments.")).passed
    assert StringMatch(number=1240)(Ending(answer="1,240")).passed
    assert not StringMatch(number=12)(Ending(answer="13")).passed


def test_number_match_refuses_a_hedge_between_numbers():
    verdict = StringMatch(number=12)(Ending(answer="12 or 13"))
    assert not verdict.passed and "holds 2" in verdict.details


def test_numbers_in_reads_digits_with_separators_and_decimals():
    assert numbers_in("1,240 posts, 3.5 stars, -2 votes") == [1240.0, 3.5, -2.0]


def test_no_answer_scores_zero():
    verdict = StringMatch(exact="alice")(Ending())
    assert verdict.score == 0.0 and verdict.components == {"answered": 0.0}


def test_string_match_takes_exactly_one_way():
    with pytest.raises(UsageError, match="exactly one"):
        StringMatch(exact="a", number=1)
    with pytest.raises(UsageError, match="exactly one"):
        StringMatch()


# ---------------------------------------------------------------------------- URL match


def test_url_match_ignores_parameter_order_blanks_and_host():
    judge = UrlMatch("/tracker/p/atlas/issues?state=closed&label=ui")
    ending = Ending(path="/tracker/p/atlas/issues?label=ui&search=&state=closed")
    assert judge(ending).passed
    assert judge.judge("http://127.0.0.1:8000/tracker/p/atlas/issues/?label=ui&state=closed").passed


def test_url_match_treats_a_default_value_as_absent():
    judge = UrlMatch("/tracker/p/atlas/issues?label=ui", defaults={"state": "opened"})
    assert judge(Ending(path="/tracker/p/atlas/issues?state=opened&label=ui")).passed


def test_url_match_fails_on_another_filter():
    verdict = UrlMatch("/tracker/p/atlas/issues?state=closed&label=ui")(
        Ending(path="/tracker/p/atlas/issues?state=closed&label=bug")
    )
    assert not verdict.passed
    assert verdict.components == {"path": 1.0, "query": 0.0}


def test_url_match_fails_on_another_page():
    verdict = UrlMatch("/forum/f/books?sort=top")(Ending(path="/forum/f/music?sort=top"))
    assert verdict.components == {"path": 0.0, "query": 1.0}


def test_canonical_url_decodes_the_path():
    assert canonical_url("/forum/u/al%69ce/") == ("/forum/u/alice", ())


# ---------------------------------------------------------------------------- programs


def count_posts(db: sqlite3.Connection) -> Verdict:
    """there are posts"""
    (n,) = db.execute("SELECT count(*) FROM posts").fetchone()
    return all_of([("has posts", n > 0)])


def no_such_post(db: sqlite3.Connection) -> Verdict:
    """a post titled 'never written' exists"""
    row = db.execute("SELECT 1 FROM posts WHERE title = 'never written'").fetchone()
    return all_of([("the post exists", row is not None)])


def test_a_program_passes_on_the_final_state(state):
    assert ProgramCheck("forum", count_posts)(Ending(state=state)).passed


def test_a_program_fails_when_the_state_is_not_so(state):
    verdict = ProgramCheck("forum", no_such_post)(Ending(state=state))
    assert (verdict.score, verdict.passed) == (0.0, False)
    assert "the post exists" in verdict.details


def test_a_program_sees_a_read_only_database(state):
    def write(db):
        db.execute("DELETE FROM posts")
        return all_of([("wrote", True)])

    with pytest.raises(VerifierError, match="readonly"):
        ProgramCheck("forum", write)(Ending(state=state))


def test_a_missing_database_is_a_verifier_error_not_a_zero(state):
    state.release("ep1")
    with pytest.raises(VerifierError, match="cannot be opened"):
        ProgramCheck("forum", count_posts)(Ending(state=state))


def test_a_failing_query_is_a_verifier_error(state):
    def broken(db):
        db.execute("SELECT title FROM nowhere")

    with pytest.raises(VerifierError, match="no such table"):
        ProgramCheck("forum", broken)(Ending(state=state))


def test_a_program_must_return_a_verdict(state):
    with pytest.raises(VerifierError, match="not a Verdict"):
        ProgramCheck("forum", lambda db: True)(Ending(state=state))


def test_all_of_scores_the_share_of_goals_that_hold():
    verdict = all_of([("a", True), ("b", False)])
    assert (verdict.score, verdict.passed, verdict.details) == (0.5, False, "not done: b")


def test_invariants_gate_the_score_and_never_add_to_it():
    nothing_done = all_of([("commented", False)], keep=[("no stray copies", True)])
    assert (nothing_done.score, nothing_done.passed) == (0.0, False)
    vandal = all_of([("a", True), ("b", True)], keep=[("others unchanged", False)])
    assert (vandal.score, vandal.passed, vandal.details) == (
        0.0,
        False,
        "not done: others unchanged",
    )
    done = all_of([("a", True)], keep=[("others unchanged", True)])
    assert (done.score, done.passed, done.components) == (
        1.0,
        True,
        {"a": 1.0, "others unchanged": 1.0},
    )


# ---------------------------------------------------------------------------- infeasible


def test_an_infeasible_task_scores_one_when_reported():
    assert Infeasible("no messages")(Ending(infeasible="there are no messages")).score == 1.0


def test_an_infeasible_task_scores_zero_when_answered_or_ignored():
    assert Infeasible("no messages")(Ending(answer="done")).score == 0.0
    assert Infeasible("no messages")(Ending()).score == 0.0


def test_reporting_a_feasible_task_infeasible_scores_zero(state):
    gave_up = Ending(answer=None, infeasible="cannot", path="/forum/f/books?sort=top", state=state)
    assert StringMatch(exact="alice")(gave_up).score == 0.0
    assert UrlMatch("/forum/f/books?sort=top")(gave_up).score == 0.0
    assert ProgramCheck("forum", count_posts)(gave_up).score == 0.0


# ---------------------------------------------------------------------------- the wording


@pytest.mark.parametrize("env_id", ["web/Forum-v1", "web/Tracker-v1"])
def test_the_report_infeasible_wording_does_not_tell_which_tasks_are_infeasible(env_id):
    """An agent that reports infeasible exactly when its instructions mention
    report_infeasible scores no more than the share of infeasible tasks: the wording is in
    every task's instructions, feasible or not (it was once only in infeasible goals, and
    that agent scored 0.29 with no skill)."""
    env = agentgym.make(env_id).unwrapped
    tasks = [env.tasks.get(f"dev/{d}/{i}") for d in env.tasks.difficulties for i in range(40)]
    infeasible = [task.kind == "infeasible" for task in tasks]
    reads = [
        "report_infeasible" in goal or "report_infeasible" in env.instructions(goal)
        for goal in (task.goal() for task in tasks)
    ]
    assert 0 < sum(infeasible) < len(tasks)
    assert set(reads) == {True}, "the wording is in some tasks' instructions only"
    score = sum(r and i for r, i in zip(reads, infeasible, strict=True)) / len(tasks)
    assert score <= sum(infeasible) / len(tasks)
    assert all("report_infeasible" not in task.goal() for task in tasks)
    env.close()


def test_every_web_site_env_says_how_to_report_an_infeasible_task():
    for env_id in ("web/Shop-v1", "web/Forum-v1", "web/Tracker-v1"):
        env = agentgym.make(env_id).unwrapped
        assert env.instructions("a goal").endswith(INFEASIBLE_HINT), env_id
        env.close()
