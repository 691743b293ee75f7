"""agentgym's code-test harness. It runs inside a sandbox, in one of two roles.

judge (trusted): reads the run from stdin (a nonce, the program, the tests), makes itself
undumpable so that no other process of its uid can read its memory or its file descriptors,
loads the program in a separate worker process and runs every test in its own namespace,
where the program's functions are proxies: a call sends plain data to the worker and gets
plain data back. Its stdout, which no other process holds, carries one nonce-tagged line
when it starts and one with every test's outcome when it is done.

worker (untrusted): loads the program and answers calls. Whatever it does, it can only send
back plain data, or die.

Typed for mypy --strict like the rest of the package, but it imports nothing from ``typing``
at run time (the worker's start is on every test's clock): the annotations are never evaluated
(``from __future__ import annotations``) and their names come in under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import json
import os
import signal
import sys
import time
import types

TYPE_CHECKING = False  # mypy reads any name TYPE_CHECKING as true
if TYPE_CHECKING:
    import ctypes
    import select
    import subprocess
    import tempfile
    from typing import Any
else:
    # The judge's modules are imported in judge(): the worker does not need them, and each
    # one costs milliseconds of the worker's start.
    ctypes = select = subprocess = tempfile = None

MAX_MESSAGE = 8 << 20  # bytes of one worker answer
MAX_VALUE = 1 << 20  # bytes of one encoded value in the record
MAX_RECORD = 32 << 20  # bytes of all values in the record
MAX_STDOUT = 1 << 20  # bytes of a program's stdout kept per input/output test
MAX_DEPTH = 200  # nesting of plain data


# ----------------------------------------------------------------------------- plain data


def encode(value: Any, depth: int = 0) -> Any:
    """Plain data as JSON-ready data: exact builtin types only, tagged where JSON has none."""
    if depth > MAX_DEPTH:
        raise ValueError("the value is nested too deeply")
    kind, inner = type(value), depth + 1
    if value is None or kind is bool or kind is str or kind is float:
        return value
    if kind is int:
        return value if value.bit_length() < 4096 else {"i": hex(value)}
    if kind is list:
        return [encode(item, inner) for item in value]
    if kind is tuple:
        return {"t": [encode(item, inner) for item in value]}
    if kind is set or kind is frozenset:
        return {"s" if kind is set else "fs": [encode(item, inner) for item in value]}
    if kind is dict:
        return {"d": [[encode(k, inner), encode(v, inner)] for k, v in value.items()]}
    if kind is bytes:
        return {"b": base64.b64encode(value).decode()}
    if kind is complex:
        return {"c": [value.real, value.imag]}
    raise TypeError(f"a {kind.__name__} is not plain data")


def decode(data: Any, depth: int = 0) -> Any:
    """The inverse of :func:`encode`; anything else is a ValueError."""
    if depth > MAX_DEPTH:
        raise ValueError("the value is nested too deeply")
    inner = depth + 1
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [decode(item, inner) for item in data]
    if type(data) is dict and len(data) == 1:
        ((tag, body),) = data.items()
        if tag == "i" and type(body) is str:
            return int(body, 16)
        if tag == "t" and type(body) is list:
            return tuple(decode(item, inner) for item in body)
        if tag in ("s", "fs") and type(body) is list:
            items = [decode(item, inner) for item in body]
            return set(items) if tag == "s" else frozenset(items)
        if tag == "d" and type(body) is list:
            return {decode(k, inner): decode(v, inner) for k, v in body}
        if tag == "b" and type(body) is str:
            return base64.b64decode(body.encode(), validate=True)
        if tag == "c" and type(body) is list and len(body) == 2:
            return complex(float(body[0]), float(body[1]))
    raise ValueError("not an encoded value")


def short(text: object, limit: int = 600) -> str:
    try:
        text = str(text)
    except Exception:  # what the program sent: an int str() refuses, lists nested too deep
        text = "(a value str() refuses)"
    return text if len(text) <= limit else text[: limit - 5] + " ..."


def describe(error: BaseException, path: str | None = None) -> str:
    """``Type: message``, with the program's line number when the traceback has one."""
    import traceback

    where = ""
    if path is not None:
        lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == path]
        if isinstance(error, SyntaxError) and error.filename == path:
            lines.append(error.lineno)
        where = f" (line {lines[-1]})" if lines else ""
    message = short(error)  # its args may be what str() refuses: a 5,000-digit int
    return short(f"{type(error).__name__}: {message}" if message else type(error).__name__) + where


# ----------------------------------------------------------------------------- the worker


def worker(path: str) -> None:
    """Load the program, report its callables, answer calls until the judge hangs up."""
    calls = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the program reads an empty stdin and writes to nowhere
    os.dup2(null, 1)

    def send(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message).encode() + b"\n")
        answers.flush()

    module = types.ModuleType("solution")
    module.__file__ = path
    sys.modules["solution"] = module
    try:
        with open(path, encoding="utf-8") as source:
            code = compile(source.read(), path, "exec")
        exec(code, module.__dict__)
    except BaseException as error:  # SystemExit too: the program must load
        send({"loaded": False, "error": describe(error, path)})
        return
    names = sorted(
        name
        for name, value in vars(module).items()
        if callable(value) and not name.startswith("__")
    )
    send({"loaded": True, "names": names})
    for line in calls:
        request = json.loads(line)
        reply: dict[str, Any] = {"id": request["id"]}
        try:
            function = vars(module)[request["name"]]
            args, kwargs = decode(request["args"]), decode(request["kwargs"])
            value = function(*args, **kwargs)
        except BaseException as error:
            name = type(error).__name__
            reply["raised"] = name
            reply["builtin"] = getattr(builtins, name, None) is type(error)
            reply["message"] = describe(error, path)[len(name) :].lstrip(": ")
        else:
            try:
                reply["value"] = encode(value)
            except (TypeError, ValueError, RecursionError) as error:
                reply["unsupported"] = str(error)
        try:
            send(reply)
        except (TypeError, ValueError, RecursionError):  # an int too long for JSON, say
            send({"id": request["id"], "unsupported": "the value cannot be written as JSON"})


# ----------------------------------------------------------------------------- the judge


class CaseTimeout(BaseException):
    """The case ran out of time. A BaseException, so that test code cannot catch it."""


class WorkerGone(BaseException):
    """The worker died or broke the protocol during a call."""


class ProgramError(Exception):
    """The program raised an exception that is not a builtin one."""


class Case:
    """The state of the test being run."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.timed_out = False
        self.broken: str | None = None  # why the worker was lost, if it was
        self.called = False


class Worker:
    """A worker process and the two pipes to it."""

    def __init__(self, judge: Judge) -> None:
        self.log = tempfile.TemporaryFile(dir=judge.dir)  # closed in stop()
        argv = [sys.executable, "-s", "-c", judge.harness, "worker", judge.path]
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=judge.dir,
            env=judge.env,
            start_new_session=True,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None  # both PIPE
        self.calls, self.answers = self.process.stdin, self.process.stdout
        self.buffer = b""
        os.set_blocking(self.calls.fileno(), False)
        self.next_id = 0
        self.phase = "loaded"  # then "tested"

    def send(self, message: dict[str, Any], deadline: float) -> None:
        data = memoryview(json.dumps(message).encode() + b"\n")
        fd = self.calls.fileno()
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CaseTimeout()
            if not select.select([], [fd], [], left)[1]:
                continue
            try:
                data = data[os.write(fd, data[: 1 << 16]) :]
            except BlockingIOError:
                continue
            except OSError:
                raise WorkerGone(self.gone()) from None

    def receive(self, deadline: float) -> dict[str, Any]:
        fd = self.answers.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CaseTimeout()
            if not select.select([fd], [], [], left)[0]:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise WorkerGone(self.gone())
            self.buffer += chunk
            if len(self.buffer) > MAX_MESSAGE:
                raise WorkerGone(f"the program's answer is over {MAX_MESSAGE >> 20} MiB")
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None
        if type(message) is not dict:
            raise WorkerGone("the program wrote into the test channel")
        return message

    def gone(self) -> str:
        """Why the channel closed: the exit code, and the end of what the program wrote on
        stderr (a crash's message)."""
        try:
            code = self.process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return f"the program closed the test channel while being {self.phase}"
        code = 128 - code if code < 0 else code
        size = os.fstat(self.log.fileno()).st_size
        tail = os.pread(self.log.fileno(), 800, max(0, size - 800)).decode("utf-8", "replace")
        said = f"; its last words: {short(tail.strip(), 400)}" if tail.strip() else ""
        return f"the program exited with code {code} while being {self.phase}{said}"

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait()
        for stream in (self.calls, self.answers, self.log):
            with contextlib.suppress(OSError):
                stream.close()


class Proxy:
    """What the tests see of one of the program's functions."""

    def __init__(self, judge: Judge, name: str) -> None:
        self.judge, self.name = judge, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.judge.call(self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"<the program's {self.name}>"


class Judge:
    """Runs one set of tests against one program, one worker at a time."""

    def __init__(self, run: dict[str, Any]) -> None:
        self.run = run
        self.harness = run["harness"]
        self.deadline = time.monotonic() + run["timeout"]
        self.case_timeout = run["case_timeout"]
        self.may_purge = bool(run["purge"]) and os.getuid() != 0
        self.dir = tempfile.mkdtemp(prefix="run-", dir=os.getcwd())
        self.path = os.path.join(self.dir, "solution.py")
        with open(self.path, "w", encoding="utf-8") as program:
            program.write(run["program"])
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.dir,
            "LANG": "C.UTF-8",
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        self.worker: Worker | None = None
        self.load_error: str | None = None
        self.case: Case | None = None
        self.namespace: dict[str, Any] | None = None
        self.names: list[str] | None = None
        self.record_size = 0
        self.max_record = min(MAX_RECORD, int(run.get("record_budget", MAX_RECORD)))

    # ------------------------------------------------------------------ the worker

    def start_worker(self, deadline: float, respawn: bool = False) -> Worker | None:
        """A loaded worker, or ``None`` with ``load_error`` set (a respawn may time out)."""
        if self.load_error is not None:
            return None
        worker = Worker(self)
        try:
            hello = worker.receive(deadline)
        except CaseTimeout:
            self.discard(worker)
            if respawn:
                raise
            self.load_error = "the program did not finish loading in time"
            return None
        except WorkerGone as gone:
            self.load_error = str(gone)
        else:
            names = hello.get("names")
            if hello.get("loaded") is True and type(names) is list:
                self.worker, worker.phase = worker, "tested"
                if self.names is None:
                    self.names = [n for n in names if type(n) is str and n.isidentifier()]
                return worker
            self.load_error = f"the program raised {short(hello.get('error'))} while loading"
        self.discard(worker)
        return None

    def discard(self, worker: Worker) -> None:
        worker.stop()
        if self.worker is worker:
            self.worker = None
        self.purge()

    def purge(self) -> None:
        """Kill every process the program left (all of this uid but the judge, in a sandbox)."""
        if not self.may_purge:
            return
        me, uid = os.getpid(), os.getuid()
        for _ in range(500):
            with contextlib.suppress(OSError):
                os.kill(-1, signal.SIGKILL)  # every process this uid may signal, but not me
            with contextlib.suppress(ChildProcessError):
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass
            if not others(me, uid):
                return
            time.sleep(0.002)

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        case = self.case
        if case is None:  # a proxy kept by the tests and called after them, from a thread
            raise RuntimeError("the program was called outside a test")
        if case.timed_out:
            raise CaseTimeout()
        if case.broken is not None:
            raise WorkerGone(case.broken)
        try:
            worker = self.worker or self.start_worker(case.deadline, respawn=True)
        except CaseTimeout:
            case.timed_out = True
            raise
        if worker is None:
            raise ProgramError(self.load_error)
        try:
            request: dict[str, Any] = {"id": worker.next_id, "name": name}
            request["args"], request["kwargs"] = encode(list(args)), encode(dict(kwargs))
        except (TypeError, ValueError, RecursionError) as error:
            message = f"the test passed a value the program cannot receive: {error}"
            raise TypeError(message) from None
        worker.next_id += 1
        case.called = True
        try:
            worker.send(request, case.deadline)
            reply = worker.receive(case.deadline)
        except CaseTimeout:
            case.timed_out = True
            self.discard(worker)
            raise
        except WorkerGone as gone:
            case.broken = str(gone)
            self.discard(worker)
            raise
        if reply.get("id") != request["id"]:
            case.broken = "the program wrote into the test channel"
            self.discard(worker)
            raise WorkerGone(case.broken)
        if "value" in reply:
            try:
                return decode(reply["value"])
            except (ValueError, TypeError, RecursionError):
                case.broken = "the program wrote into the test channel"
                self.discard(worker)
                raise WorkerGone(case.broken) from None
        if "unsupported" in reply:
            raise TypeError(
                f"{name}() returned something the tests cannot receive "
                f"({short(reply['unsupported'], 200)}); return plain data (numbers, strings, "
                f"lists, tuples, dicts, sets, None)"
            )
        raise raised(reply)

    # ------------------------------------------------------------------ the tests

    def prepare(self) -> dict[str, Any] | None:
        """Load the program and run the tests' setup: ``None``, or why the setup failed."""
        if all(test["kind"] == "io" for test in self.run["tests"]):
            return None
        if self.start_worker(self.deadline) is None:
            return None
        namespace: dict[str, Any] = {"__name__": "hidden_tests", "__builtins__": builtins}
        module = types.ModuleType("solution")
        names = self.names or []  # set by the worker that just started
        for name in names:
            namespace[name] = proxy = Proxy(self, name)
            setattr(module, name, proxy)
        entry = self.run.get("entry_point")
        if entry in names:
            namespace["candidate"] = namespace[entry]
        sys.modules["solution"] = module
        self.namespace = namespace
        self.case = Case(min(time.monotonic() + self.case_timeout, self.deadline))
        try:
            exec(compile(self.run["setup"], "<test setup>", "exec"), namespace)
        except BaseException as error:
            return {"error": describe(error), "program_called": self.case.called}
        finally:
            self.case = None
        return None

    def run_case(self, test: dict[str, Any]) -> dict[str, Any]:
        if test["kind"] != "io" and self.namespace is None:
            return {"status": "error", "error": self.load_error}
        now, budget = time.monotonic(), self.run["timeout"]
        if now >= self.deadline:
            return {"status": "not_run", "error": f"the time budget of {budget:g} s was used up"}
        cut_by_budget = now + self.case_timeout >= self.deadline
        self.case = case = Case(min(now + self.case_timeout, self.deadline))
        try:
            outcome = self.outcome(test)
        except CaseTimeout:
            outcome = {}
        except WorkerGone as gone:
            outcome = {"status": "error", "error": str(gone)}
        except AssertionError as error:
            outcome = {"status": "failed", "error": describe(error)}
        except BaseException as error:
            outcome = {"status": "error", "error": describe(error)}
        finally:
            self.case = None
        if case.timed_out or not outcome:
            limit = f"the time budget of {budget:g} s ran out" if cut_by_budget else ""
            why = limit or f"timed out after {self.case_timeout:g} s"
            return {"status": "timeout", "error": why}
        if case.broken is not None:
            return {"status": "error", "error": case.broken}
        return outcome

    def outcome(self, test: dict[str, Any]) -> dict[str, Any]:
        kind = test["kind"]
        if kind == "io":
            return self.run_io(test["stdin"])
        namespace = self.namespace
        assert namespace is not None  # run_case runs no other kind without the tests' setup
        if kind == "call":
            value = eval(test["code"], namespace)
            try:
                encoded = json.dumps(encode(value))
            except (TypeError, ValueError, RecursionError) as error:
                return {"status": "error", "error": f"the value is not plain data: {error}"}
            if len(encoded) > MAX_VALUE or self.record_size + len(encoded) > self.max_record:
                return {"status": "error", "error": "the value is too large to compare"}
            self.record_size += len(encoded)
            return {"status": "value", "value": json.loads(encoded)}
        if kind == "assert":
            exec(test["code"], namespace)
        elif kind == "function":
            namespace[test["name"]]()
        elif kind == "method":
            import unittest

            result = unittest.TestResult()
            namespace[test["cls"]](test["name"]).run(result)
            problems = result.failures + result.errors
            if problems:
                last = problems[-1][1].strip().splitlines()[-1]
                failed = last.startswith("AssertionError")
                return {"status": "failed" if failed else "error", "error": short(last)}
        return {"status": "passed"}

    def run_io(self, data: str) -> dict[str, Any]:
        case = self.case
        assert case is not None  # run_case set it
        if self.worker is not None:
            self.discard(self.worker)
        with (
            tempfile.TemporaryFile(dir=self.dir) as stdin,
            tempfile.TemporaryFile(dir=self.dir) as stdout,
            tempfile.TemporaryFile(dir=self.dir) as stderr,
        ):
            stdin.write(data.encode())
            stdin.seek(0)
            process = subprocess.Popen(
                [sys.executable, "-s", self.path],
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                cwd=self.dir,
                env=self.env,
                start_new_session=True,
                close_fds=True,
            )
            try:
                code = process.wait(timeout=max(0.0, case.deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                case.timed_out = True
                code = None
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            process.kill()
            process.wait()
            self.purge()
            if code is None:
                return {}
            output = os.pread(stdout.fileno(), MAX_STDOUT + 1, 0)
            size = os.fstat(stderr.fileno()).st_size
            errors = os.pread(stderr.fileno(), 600, max(0, size - 600))
        if len(output) > MAX_STDOUT:
            return {"status": "error", "error": f"printed more than {MAX_STDOUT >> 20} MiB"}
        text = output.decode("utf-8", "replace")
        self.record_size += len(json.dumps(text))  # as the record will carry it
        if self.record_size > self.max_record:
            return {"status": "error", "error": "the output is too large to compare"}
        return {
            "status": "output",
            "stdout": text,
            "exit_code": 128 - code if code < 0 else code,
            "stderr": short(errors.decode("utf-8", "replace").strip(), 600),
        }


def raised(reply: dict[str, Any]) -> Exception:
    """The exception to raise in the tests for the one the program raised."""
    name, message = str(reply.get("raised")), short(reply.get("message"))
    kind = getattr(builtins, name, None)
    if reply.get("builtin") is True and isinstance(kind, type) and issubclass(kind, Exception):
        with contextlib.suppress(Exception):
            return kind(message)
    return ProgramError(message)


def others(me: int, uid: int) -> bool:
    """Whether a process of ``uid`` other than ``me`` is still alive (zombies aside)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if fields.get("State", "").strip().startswith("Z"):
            continue
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            return True
    return False


def undumpable() -> None:
    """PR_SET_DUMPABLE 0: processes of the same uid can no longer ptrace this one or open its
    /proc files (memory, environment, file descriptors)."""
    with contextlib.suppress(OSError, AttributeError):
        if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:
            raise OSError("prctl(PR_SET_DUMPABLE) failed")


def judge() -> None:
    global ctypes, select, subprocess, tempfile
    import ctypes
    import random
    import select
    import subprocess
    import tempfile
    import traceback

    undumpable()
    # The program may signal the judge (same uid). SIGINT must kill it like the others, not
    # raise KeyboardInterrupt in it: a judge that dies reports nothing, and that scores 0.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    run = json.loads(sys.stdin.buffer.read())
    out = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    nonce = run["nonce"]

    def emit(kind: str, body: Any = None) -> None:
        out.write(f"{nonce} {kind}" + ("" if body is None else " " + json.dumps(body)) + "\n")
        out.flush()

    emit("started")
    random.seed(0)
    try:
        judge = Judge(run)
        setup_error = judge.prepare()
        results = []
        for test in run["tests"]:
            if setup_error is not None and test["kind"] != "io":
                results.append({"status": "error", "error": "the tests' setup failed"})
                continue
            results.append(judge.run_case(test))
        if judge.worker is not None:
            judge.discard(judge.worker)
        judge.purge()
        emit("result", {"results": results, "setup_error": setup_error})
    except BaseException:
        emit("crash", traceback.format_exc()[-4000:])
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker(sys.argv[2])
    else:
        judge()
