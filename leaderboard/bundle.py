"""A submission bundle: one run directory and what the submitter says about it, in one archive
the server can open without trusting any of it.

A bundle is a gzipped tar of exactly these regular files, at its top level:

==================  ==========================================================================
``bundle.json``     ``{"bundle_schema": "agentgym.bundle/1", "files": {name: sha256, ...}}``
``manifest.json``   the run's manifest (:func:`agentgym.eval.evaluate` wrote it)
``episodes.jsonl``  the run's ledger, unchanged
``submission.json`` :class:`~agentgym.leaderboard.submission.SubmissionInfo`
==================  ==========================================================================

:func:`read_bundle` is the only way in, and it is written for hostile input: a size cap on
the archive and on what it unpacks to, the tar headers read and checked here, 512 bytes at a
time, before anything they claim is read (only plain regular files: no PAX or GNU extended
header, whose content ``tarfile`` would read whole first, no link, no device, no directory; no
member but those four names, no second copy of a name; a file read only when its stated size
fits the cap, so neither a gzip bomb nor a header bomb gets further than one header), every
file's hash checked against the index, strict JSON (:func:`parse_json`: no ``NaN``, no key
twice, nested at most :data:`MAX_JSON_DEPTH` deep), and every episode parsed by the ledger's
own reader.
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
import re
import struct
import tarfile
import zlib
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentgym.errors import AgentGymError, LedgerError, UsageError
from agentgym.eval import Benchmark
from agentgym.leaderboard.submission import SubmissionInfo
from agentgym.ledger import EpisodeRecord

__all__ = [
    "BUNDLE_FILES",
    "BUNDLE_SCHEMA",
    "MAX_JSON_DEPTH",
    "Bundle",
    "BundleLimits",
    "BundleRejected",
    "pack_bundle",
    "parse_json",
    "public_bundle",
    "read_bundle",
]

BUNDLE_SCHEMA = "agentgym.bundle/1"
INDEX = "bundle.json"
BUNDLE_FILES = (INDEX, "manifest.json", "episodes.jsonl", "submission.json")
TAR_BLOCK = 512
"""A tar header's size, and the unit file contents are padded to."""
READ_CHUNK = 1 << 20
MAX_JSON_DEPTH = 200
"""How deep a bundle's JSON may nest: far deeper than any record (a record, its steps, an
observation and a tool call's arguments are a handful of levels), far shallower than what
would exhaust the recursion of the code that walks a record."""
_TAR_KINDS = {
    b"x": "a PAX extended header",
    b"g": "a PAX global header",
    b"L": "a GNU long name",
    b"K": "a GNU long link name",
    b"1": "a hard link",
    b"2": "a symbolic link",
    b"3": "a character device",
    b"4": "a block device",
    b"5": "a directory",
    b"6": "a FIFO",
    b"7": "a contiguous file",
    b"S": "a GNU sparse file",
}


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
    manifest = _run_file(run_dir, "manifest.json")
    episodes = _run_file(run_dir, "episodes.jsonl")
    _parse_episodes(episodes, BundleLimits())
    parse_json(manifest, "manifest.json")
    target = Path(out) if out is not None else run_dir / "submission.tar.gz"
    target.write_bytes(_packed(manifest, episodes, info))
    return target


def public_bundle(data: bytes, limits: BundleLimits | None = None) -> bytes:
    """A stored bundle as a reader may download it: the same bytes when it names no
    ``contact``, else packed again with ``contact`` emptied (the address is the maintainers'
    alone), the manifest and ledger byte for byte as sent."""
    limits = limits or BundleLimits()
    bundle = read_bundle(data, limits)
    if not bundle.info.contact:
        return data
    files = _unpack(data, limits)
    info = replace(bundle.info, contact="")
    return _packed(files["manifest.json"], files["episodes.jsonl"], info)


def _packed(manifest: bytes, episodes: bytes, info: SubmissionInfo) -> bytes:
    """The archive of a bundle's files: reproducible (fixed order, times and owners)."""
    contents = {
        "manifest.json": manifest,
        "episodes.jsonl": episodes,
        "submission.json": json.dumps(info.to_dict(), indent=2, sort_keys=True).encode(),
    }
    index = {
        "bundle_schema": BUNDLE_SCHEMA,
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in contents.items()},
    }
    contents = {INDEX: json.dumps(index, indent=2, sort_keys=True).encode(), **contents}
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name in BUNDLE_FILES:
            member = tarfile.TarInfo(name)
            member.size, member.mode = len(contents[name]), 0o644
            tar.addfile(member, io.BytesIO(contents[name]))
    return buffer.getvalue()


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
    index = parse_json(files[INDEX], INDEX)
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
    manifest = parse_json(files["manifest.json"], "manifest.json")
    if not isinstance(manifest, dict):
        raise BundleRejected("manifest.json is not a JSON object")
    try:
        info = SubmissionInfo.from_dict(parse_json(files["submission.json"], "submission.json"))
    except UsageError as error:
        raise BundleRejected(str(error)) from None
    episodes = _parse_episodes(files["episodes.jsonl"], limits)
    return Bundle(manifest, info, episodes, hashes, hashlib.sha256(data).hexdigest())


def _unpack(data: bytes, limits: BundleLimits) -> dict[str, bytes]:
    """The four files, read from the archive's raw tar headers with every byte counted.

    ``tarfile`` is not used to read: it reads a PAX extended header or a GNU long name whole
    before anything can check it (a 1 MiB upload could claim, and inflate to, gigabytes of
    header). Here each 512-byte header is read and checked first, and only a plain regular
    file's (ustar type ``0``, what :func:`pack_bundle` writes) is taken: every other kind,
    extended headers included, is refused on its header alone. A file's bytes are read only
    when the size its header states fits what is left of ``max_unpacked``, and no more than
    that size is read.
    """
    files: dict[str, bytes] = {}
    budget = limits.max_unpacked
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            while True:
                header = stream.read(TAR_BLOCK)
                if not header.strip(b"\0"):
                    break  # the end-of-archive block (or the end of the data), as tarfile
                name, size = _member(header)
                if name in files:
                    raise BundleRejected(f"the bundle holds {name} twice")
                if size > budget:
                    raise BundleRejected(
                        f"the bundle unpacks to more than {limits.max_unpacked:,} bytes"
                    )
                content = _read_exactly(stream, size, name)
                stream.read(-size % TAR_BLOCK)  # the padding to the next header
                budget -= size
                files[name] = content
    except BundleRejected:
        raise
    except (OSError, EOFError, zlib.error) as error:
        raise BundleRejected(f"the bundle is not a gzipped tar archive ({error})") from None
    missing = [name for name in BUNDLE_FILES if name not in files]
    if missing:
        raise BundleRejected(f"the bundle lacks {missing}")
    return files


def _read_exactly(stream: gzip.GzipFile, size: int, name: str) -> bytes:
    """``size`` bytes, read a chunk at a time: memory grows with the bytes that arrive, not
    with the size a header claims."""
    chunks, left = [], size
    while left:
        chunk = stream.read(min(left, READ_CHUNK))
        if not chunk:
            raise BundleRejected(f"the bundle's archive ends inside {name}")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _member(header: bytes) -> tuple[str, int]:
    """A regular file's name and size from its 512-byte tar header; anything else refused."""
    if len(header) < TAR_BLOCK:
        raise BundleRejected("the bundle's archive ends inside a tar header")
    if not _checksum_ok(header):
        raise BundleRejected("a tar header in the bundle fails its checksum (damaged?)")
    raw_name = header[:100].split(b"\0", 1)[0]
    prefix = header[345:500].split(b"\0", 1)[0]  # ustar's second name field
    raw_name = prefix + b"/" + raw_name if prefix else raw_name
    name = raw_name.decode("utf-8", "replace")
    kind = header[156:157]
    if kind not in (b"0", b"\0"):
        what = _TAR_KINDS.get(kind, f"a tar member of type {kind!r}")
        raise BundleRejected(
            f"the bundle holds {name[:100]!r} as {what}, not a regular file; a bundle holds "
            f"only regular files (made by `agentgym submit` or pack_bundle?)"
        )
    if name not in BUNDLE_FILES:
        raise BundleRejected(
            f"the bundle holds {name[:100]!r}; a bundle holds only {list(BUNDLE_FILES)}"
        )
    return name, _octal(header[124:136], f"{name}'s size")


def _octal(field: bytes, what: str) -> int:
    """A tar header's octal number (base-256 numbers, for sizes over 8 GiB, are refused)."""
    digits = field.split(b"\0", 1)[0].strip()
    if field[0] & 0x80 or not re.fullmatch(rb"[0-7]*", digits):
        raise BundleRejected(f"{what} in its tar header is not an octal number")
    return int(digits or b"0", 8)


def _checksum_ok(header: bytes) -> bool:
    """The header's checksum: its bytes summed with the checksum field as spaces (unsigned,
    or signed as some old tars wrote it)."""
    digits = header[148:156].split(b"\0", 1)[0].strip()
    if not re.fullmatch(rb"[0-7]+", digits):
        return False
    stated = int(digits, 8)
    unsigned = sum(header[:148]) + 8 * 32 + sum(header[156:])
    signed = sum(struct.unpack("148b", header[:148])) + 8 * 32
    signed += sum(struct.unpack("356b", header[156:]))
    return stated in (unsigned, signed)


def parse_json(data: bytes | str, name: str) -> Any:
    """Untrusted JSON, strictly: UTF-8, no ``NaN`` or ``Infinity``, no key twice in one object
    (a parser that keeps the last would let two readers see two documents), and nested at
    most :data:`MAX_JSON_DEPTH` deep (deeper input would exhaust the recursion of whatever
    walks it next). Every failure is a :class:`BundleRejected` naming ``name``.

    The leaderboard's one reader of JSON it did not write itself."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise BundleRejected(f"{name} is nested deeper than {MAX_JSON_DEPTH} levels") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise BundleRejected(f"{name} is not valid JSON: {error}") from None
    if _too_deep(value, text):
        raise BundleRejected(f"{name} is nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        twice = next(key for key, count in Counter(k for k, _ in pairs).items() if count > 1)
        raise ValueError(f"the key {twice[:100]!r} appears twice in one object")
    return value


def _too_deep(value: Any, text: str) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_JSON_DEPTH` (walked without recursion,
    and only when its text holds enough brackets to)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _parse_episodes(data: bytes, limits: BundleLimits) -> list[EpisodeRecord]:
    """Every line a record, read by the ledger's own parser (schema version included)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BundleRejected(f"episodes.jsonl is not UTF-8: {error}") from None
    records: list[EpisodeRecord] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(records) >= limits.max_episodes:
            raise BundleRejected(f"episodes.jsonl holds over {limits.max_episodes:,} episodes")
        where = f"episodes.jsonl line {number}"
        value = parse_json(line, where)
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
