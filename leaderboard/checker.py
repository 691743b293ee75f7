"""The checker: one thread that re-scores submissions in the order they were asked.

A check moves a submission ``received`` -> ``checking`` -> ``scored`` (with the re-score) or
``rejected`` (with the reason). A check that fails for a reason of the server's own (an env
that cannot start) is not the submitter's fault: the submission goes back to ``received``,
the error is kept for its page, and it is checked again when the server restarts or an admin
asks. :func:`queue_stale` queues a re-score of what an older scorer version judged. A
submission whose episodes are an earlier one's is flagged as its duplicate
(:mod:`agentgym.leaderboard.duplicates`), at every check of it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import replace

from agentgym.errors import UsageError
from agentgym.eval import Benchmark

from .bundle import BundleLimits, BundleRejected, read_bundle
from .duplicates import duplicate_flag, earlier_twin
from .rescore import rescore, scorer_version
from .results import Rescore
from .store import NotFoundError, Store

__all__ = ["VERIFIED_FLAG", "Checker", "queue_stale"]

log = logging.getLogger(__name__)

VERIFIED_FLAG = "verified by re-run "
"""How the flag of a verification that matched begins (a re-score carries it over)."""


class Checker:
    """One thread that re-scores submissions, one at a time, in the order they were asked.

    Started on the first :meth:`submit` (or by the app's startup, which also takes up what a
    stopped server left ``received`` or ``checking``); :meth:`close` stops it after the
    check in progress.
    """

    def __init__(self, store: Store, *, limits: BundleLimits, replay: bool = True) -> None:
        self.store = store
        self.limits = limits
        self.replay = replay
        self.errors: dict[str, str] = {}
        """The last check that could not run, per submission (shown on its page)."""
        self._queue: queue.Queue[tuple[str, str, bool] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.history = threading.Lock()
        """Held from reading a submission's latest re-score to adding the row built on it
        (here and in :func:`~agentgym.leaderboard.verification.verify_rerun`), so no row is
        built on one that is no longer the latest."""

    def start(self, *, resume: bool = False) -> None:
        with self._lock:
            if self._closed:
                raise UsageError("the checker is closed")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="agentgym-leaderboard-checker", daemon=True
                )
                self._thread.start()
        if resume:
            for status in ("checking", "received"):
                for submission in self.store.submissions(status=status):
                    self._queue.put((submission.id, "system", False))

    def submit(self, submission_id: str, *, actor: str = "system", again: bool = False) -> None:
        """Check a submission (``again``: one that was checked before: a new history row)."""
        self.start()
        self._queue.put((submission_id, actor, again))

    def wait(self, timeout: float = 60.0) -> bool:
        """Block until every asked check is done; False if ``timeout`` passed first."""
        done = self._queue.all_tasks_done
        deadline = time.monotonic() + timeout
        with done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                done.wait(left)
        return True

    def close(self, timeout: float = 60.0) -> None:
        """Stop after the check in progress (idempotent); unstarted checks stay ``received``
        in the store, for the next start."""
        with self._lock:
            self._closed, thread = True, self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(None)
            thread.join(timeout)

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None or self._closed:
                    return
                self._check(*job)
            except Exception as error:  # a store that fails under the checker: serve the rest
                log.exception("checking %s failed", job[0] if job else None)
                if job is not None:  # shown on its page; checked again at the next start
                    self.errors[job[0]] = f"{type(error).__name__}: {error}".splitlines()[0]
            finally:
                self._queue.task_done()

    def _check(self, submission_id: str, actor: str, again: bool) -> None:
        submission = self.store.submission(submission_id)
        if not again and submission.status not in ("received", "checking"):
            return  # already done (asked twice, or taken up at start and asked again)
        keep_status = again and submission.status == "scored"  # stays on the board meanwhile
        if not keep_status:
            self.store.set_status(submission_id, "checking", actor=actor)
        try:
            bundle = read_bundle(self.store.get_blob(submission.bundle_sha), self.limits)
            record = self.store.benchmark(submission.benchmark, submission.benchmark_version)
            result = rescore(bundle, Benchmark.from_dict(record.spec), replay=self.replay)
        except BundleRejected as error:
            self.errors.pop(submission_id, None)
            self.store.set_status(submission_id, "rejected", reason=str(error), actor=actor)
            return
        except Exception as error:  # the server's failure, not the submitter's
            log.exception("could not check submission %s", submission_id)
            self.errors[submission_id] = f"{type(error).__name__}: {error}".splitlines()[0]
            if not keep_status:
                self.store.set_status(submission_id, "received", actor=actor)
            return
        self.errors.pop(submission_id, None)
        with self.history:
            previous = self.store.latest_rescore(submission_id) if again else None
            if previous is not None and previous.tier == "verified" and result.tier == "re-scored":
                result = _carry_verification(previous, result)
            twin = earlier_twin(self.store, submission, bundle, self.limits)
            if twin is not None:
                result = replace(result, flags=[*result.flags, duplicate_flag(twin)])
            self.store.add_rescore(submission_id, result, actor=actor)


def _carry_verification(previous: Rescore, result: Rescore) -> Rescore:
    """A re-score of a verified submission: still ``verified`` (with the verification's flag)
    when every episode's verdict is what it was; else ``re-scored``, flagged to verify again."""

    def verdicts(rescore: Rescore) -> list[tuple[str, str, bool, float]]:
        return [(e.episode_id, e.outcome, e.passed, e.score) for e in rescore.episodes]

    if verdicts(previous) == verdicts(result):
        kept = [f for f in previous.flags if f.startswith(VERIFIED_FLAG)]
        return replace(result, tier="verified", flags=[*result.flags, *kept])
    flag = (
        f"was verified by a re-run under scorer {previous.scorer_version!r}; verdicts changed "
        f"under this scorer: verify again"
    )
    return replace(result, flags=[*result.flags, flag])


def queue_stale(
    store: Store, checker: Checker, *, benchmark: str | None = None, actor: str = "system"
) -> list[str]:
    """Queue a re-score of every scored submission (of ``benchmark`` if given) whose latest
    re-score was judged by another scorer version than the current one; their ids.

    A server that does not replay (``--self-reported``) queues none: its rows would replace
    replayed ones with unreplayed ones."""
    if not checker.replay:
        return []
    current = {
        (record.name, record.version): scorer_version(Benchmark.from_dict(record.spec))
        for record in store.benchmarks()
        if benchmark is None or record.name == benchmark
    }
    if benchmark is not None and not current:
        raise NotFoundError(f"no benchmark {benchmark!r} is registered")
    queued = []
    for submission_id, name, version, judged_by in store.latest_scorer_versions(benchmark):
        now = current.get((name, version))
        if now is not None and judged_by != now:
            checker.submit(submission_id, actor=actor, again=True)
            queued.append(submission_id)
    if queued:
        log.info("re-scoring %d submissions judged by another scorer version", len(queued))
    return queued
