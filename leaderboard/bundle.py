"""A submission bundle: one run directory and what the submitter says about it, in one archive
the server can open without trusting any of it.

A bundle is a gzipped tar of exactly these regular files, at its top level:

==================  ==========================================================================
``bundle.json``     ``{"bundle_schema": "agentgym.bundle/1", "files": {name: sha256, ...}}``
``manifest.json``   the run's manifest (:func:`agentgym.eval.run.evaluate` wrote it)
``episodes.jsonl``  the run's ledger, unchanged
``submission.json`` :class:`~agentgym.leaderboard.submission.SubmissionInfo`
==================  ==========================================================================

:func:`read_bundle` is the only way in, and it is written for hostile input: a size cap on
the archive and on what it unpacks to (checked on the bytes actually read, not the sizes the
tar headers claim: a gzip bomb stops at the cap), no member but those four names (no path,
no ``..``, no link, no device, no second copy of a name), every file's hash checked against
the index, strict JSON (no ``NaN``), and every episode parsed by the ledger's own reader.
Each failure is a :class:`BundleRejected` whose message names the file and the problem.
Nothing in a bundle is ever executed; the numbers in it (rewards, verdicts, ``summary.json``,
which a bundle does not even carry) are never ranked: :mod:`agentgym.leaderboard.rescore`
recomputes them.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.errors import AgentGymError, LedgerError, UsageError
from agentgym.eval.plan import Benchmark
from agentgym.leaderboard.submission import SubmissionInfo
from agentgym.ledger import EpisodeRecord

__all__ = [
    "BUNDLE_FILES",
    "BUNDLE_SCHEMA",
    "Bundle",
    "BundleLimits",
    "BundleRejected",
    "pack_bundle",
    "read_bundle",
]

BUNDLE_SCHEMA = "agentgym.bundle/1"
INDEX = "bundle.json"
BUNDLE_FILES = (INDEX, "manifest.json", "episodes.jsonl", "submission.json")


class BundleRejected(AgentGymError):
    """The bundle cannot be taken; the message is the reason, one line, for the submitter."""


@dataclass(frozen=True)
class BundleLimits:
    """What a bundle may weigh. The defaults hold a 10,000-episode text run comfortably."""

    max_bytes: int = 64 << 20
    """The archive as uploaded."""
    max_unpacked: int = 512 << 20
    """All its files together, unpacked."""
    max_episodes: int = 100_000


@dataclass
class Bundle:
    """A bundle that passed :func:`read_bundle`'s checks (not yet re-scored)."""

    manifest: dict[str, Any]
    info: SubmissionInfo
    episodes: list[EpisodeRecord]
    files: dict[str, str]
    """Each file's sha256, as the index lists them (and as checked)."""
    sha256: str
    """The archive's sha256: the bundle's identity in the store."""

    def benchmark(self) -> Benchmark:
        """The benchmark the run says it ran (to be compared with the board's own)."""
        data = self.manifest.get("benchmark")
        if not isinstance(data, dict):
            raise BundleRejected("manifest.json names no benchmark (is it a run's manifest?)")
        try:
            return Benchmark.from_dict(data, "manifest.json's benchmark")
        except UsageError as error:
            raise BundleRejected(str(error)) from None


# ----------------------------------------------------------------------------- packing


def pack_bundle(run_dir: str | Path, info: SubmissionInfo, out: str | Path | None = None) -> Path:
    """Write ``run_dir``'s manifest and ledger with ``info`` into a bundle (default:
    ``RUN_DIR/submission.tar.gz``) and return its path.

    The ledger is read first with the same checks the server makes, so a run that would be
    refused fails here, with the reason, before anything is uploaded. The archive is
    reproducible: the same run and info give the same bytes (fixed order, times and owners).
    """
    run_dir = Path(run_dir)
    contents = {
        "manifest.json": _run_file(run_dir, "manifest.json"),
        "episodes.jsonl": _run_file(run_dir, "episodes.jsonl"),
        "submission.json": json.dumps(info.to_dict(), indent=2, sort_keys=True).encode(),
    }
    _parse_episodes(contents["episodes.jsonl"], BundleLimits())
    _parse_json(contents["manifest.json"], "manifest.json")
    index = {
        "bundle_schema": BUNDLE_SCHEMA,
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in contents.items()},
    }
    contents = {INDEX: json.dumps(index, indent=2, sort_keys=True).encode(), **contents}
    target = Path(out) if out is not None else run_dir / "submission.tar.gz"
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name in BUNDLE_FILES:
            member = tarfile.TarInfo(name)
            member.size, member.mode = len(contents[name]), 0o644
            tar.addfile(member, io.BytesIO(contents[name]))
    target.write_bytes(buffer.getvalue())
    return target


def _run_file(run_dir: Path, name: str) -> bytes:
    path = run_dir / name
    if not path.is_file():
        raise UsageError(f"{run_dir} has no {name}: give the directory of a finished run")
    return path.read_bytes()


# ----------------------------------------------------------------------------- reading


def read_bundle(data: bytes, limits: BundleLimits | None = None) -> Bundle:
    """Open and check an uploaded bundle; :class:`BundleRejected` says why it cannot be."""
    limits = limits or BundleLimits()
    if len(data) > limits.max_bytes:
        raise BundleRejected(
            f"the bundle is {len(data):,} bytes; the limit is {limits.max_bytes:,}"
        )
    files = _unpack(data, limits)
    index = _parse_json(files[INDEX], INDEX)
    if not isinstance(index, dict) or index.get("bundle_schema") != BUNDLE_SCHEMA:
        raise BundleRejected(
            f"{INDEX} does not declare bundle_schema {BUNDLE_SCHEMA!r} (made by "
            f"`agentgym submit` or agentgym.leaderboard.pack_bundle?)"
        )
    listed = index.get("files")
    expected = set(BUNDLE_FILES) - {INDEX}
    if not isinstance(listed, dict) or set(listed) != expected:
        raise BundleRejected(f"{INDEX} must list exactly {sorted(expected)} with their sha256")
    hashes = {}
    for name in sorted(expected):
        digest = hashlib.sha256(files[name]).hexdigest()
        if listed[name] != digest:
            raise BundleRejected(f"{name} does not match its sha256 in {INDEX} (edited?)")
        hashes[name] = digest
    manifest = _parse_json(files["manifest.json"], "manifest.json")
    if not isinstance(manifest, dict):
        raise BundleRejected("manifest.json is not a JSON object")
    try:
        info = SubmissionInfo.from_dict(_parse_json(files["submission.json"], "submission.json"))
    except UsageError as error:
        raise BundleRejected(str(error)) from None
    episodes = _parse_episodes(files["episodes.jsonl"], limits)
    return Bundle(manifest, info, episodes, hashes, hashlib.sha256(data).hexdigest())


def _unpack(data: bytes, limits: BundleLimits) -> dict[str, bytes]:
    """The four files, read with every byte counted against the limits."""
    files: dict[str, bytes] = {}
    budget = limits.max_unpacked
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar:  # streamed: headers are read one at a time
                name = member.name
                if name not in BUNDLE_FILES:
                    raise BundleRejected(
                        f"the bundle holds {name[:100]!r}; a bundle holds only {list(BUNDLE_FILES)}"
                    )
                if not member.isreg():
                    raise BundleRejected(f"{name} in the bundle is not a regular file")
                if name in files:
                    raise BundleRejected(f"the bundle holds {name} twice")
                if member.size > budget:
                    raise BundleRejected(
                        f"the bundle unpacks to more than {limits.max_unpacked:,} bytes"
                    )
                stream = tar.extractfile(member)
                assert stream is not None  # a regular file
                content = stream.read(budget + 1)
                if len(content) > budget:
                    raise BundleRejected(
                        f"the bundle unpacks to more than {limits.max_unpacked:,} bytes"
                    )
                budget -= len(content)
                files[name] = content
    except BundleRejected:
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise BundleRejected(f"the bundle is not a gzipped tar archive ({error})") from None
    missing = [name for name in BUNDLE_FILES if name not in files]
    if missing:
        raise BundleRejected(f"the bundle lacks {missing}")
    return files


def _parse_json(data: bytes, name: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as error:
        raise BundleRejected(f"{name} is not valid JSON: {error}") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parse_episodes(data: bytes, limits: BundleLimits) -> list[EpisodeRecord]:
    """Every line a record, read by the ledger's own parser (schema version included)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BundleRejected(f"episodes.jsonl is not UTF-8: {error}") from None
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(records) >= limits.max_episodes:
            raise BundleRejected(f"episodes.jsonl holds over {limits.max_episodes:,} episodes")
        where = f"episodes.jsonl line {number}"
        value = _parse_json(line.encode(), where)
        if not isinstance(value, dict):
            raise BundleRejected(f"{where} is not a JSON object")
        try:
            records.append(EpisodeRecord.from_dict(value))
        except LedgerError as error:
            raise BundleRejected(f"{where}: {error}") from None
        except Exception as error:  # a field of the wrong type deep inside a record
            raise BundleRejected(f"{where}: malformed record ({type(error).__name__})") from None
    if not records:
        raise BundleRejected("episodes.jsonl holds no episode")
    return records
