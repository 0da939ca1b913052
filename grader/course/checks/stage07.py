"""The checks of stage 07 (stdout hygiene).

Part one: the learner's pieces of ``quiet_server.py`` are each run in a fresh Python process with
real pipes, beside the learner's file and under the guard (stdout hygiene is about file
descriptors, so the kernel's own stdout would prove nothing), then the whole server under the
checker's stdout checks. Part two: the learner's ``hygiene(stdout)`` is graded on real
transcripts: the stdout of gallery exhibits and of the reference, recorded by running them, and
(hidden) transcripts made dirty at random. The oracle for "which line is the first dirty one" is
the checker's own :mod:`grader.checker.stdout_rules`.

    >>> first_dirty_line(b'{"jsonrpc":"2.0","id":1,"result":{}}\\nhello\\n')
    2
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from grader.checker.stdout_rules import line_problems
from grader.gallery import command as exhibit_command
from reference.child import Line, child_environment
from reference.framing import encode

from ..calls import call
from ..drive import expect_checks
from ..expect import Failure, show
from ..work import Work
from . import public

REFERENCE = [sys.executable, "-m", "reference.server"]


@public(
    "07",
    "test_protocol_stdout",
    "protocol_stdout(): a print from before it, a print, os.system and a Python child all land on stderr",
)
def protocol_stdout_cell(work: Work) -> None:
    check_protocol_stdout(work, random.randrange(10**6))


@public("07", "test_setup_logging", "setup_logging(): an INFO line reaches stderr, nothing reaches stdout")
def setup_logging_cell(work: Work) -> None:
    check_setup_logging(work, str(random.randrange(10**6)))


@public("07", "test_run_quietly", "run_quietly(argv): the child's output captured, our stdin left alone")
def run_quietly_cell(work: Work) -> None:
    check_run_quietly(work, f"audit {random.randrange(10**6)}")


@public("07", "test_quiet_server", "your whole server under mcp-lab check's stdout and shop checks")
def quiet_server_cell(work: Work) -> None:
    check_quiet_server(work)


@public("07", "test_hygiene_gallery", "hygiene() on the transcripts of the reference and 11 gallery servers")
def hygiene_gallery_cell(work: Work) -> None:
    check_hygiene_gallery(work.module("hygiene_check").hygiene)


@public("07", "test_hygiene_random", "hygiene() on 10 transcripts with one defect each, put in at random")
def hygiene_random_cell(work: Work) -> None:
    check_hygiene_random(work.module("hygiene_check").hygiene, random.Random(), rounds=10)


RUN_LIMIT = 15.0  # seconds for one piece's test process, or one recorded session


def _run_piece(work: Work, name: str, code: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """Run ``code`` as a program beside the learner's ``NAME.py``, under the guard; bounded, pipes real."""
    work.file(name)
    with tempfile.NamedTemporaryFile("w", suffix=".py", prefix=".check_", dir=work.folder, delete=False) as script:
        script.write(code)
    Path(script.name).chmod(0o644)  # the learner's processes may run as a user of their own
    try:
        argv = work.command([*work.python(), work._lab("run.py"), work.inside(Path(script.name))])
        return subprocess.run(argv, input=stdin, capture_output=True, env=child_environment(), timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired:
        raise Failure("module", f"the test process did not finish within {RUN_LIMIT:.0f} s") from None
    finally:
        Path(script.name).unlink(missing_ok=True)


def _raised(result: subprocess.CompletedProcess[bytes], what: str) -> None:
    err = result.stderr.decode("utf-8", "replace")
    if result.returncode != 0:
        last = err.strip().splitlines()[-1] if err.strip() else f"exit status {result.returncode}"
        if "NotImplementedError" in last:
            raise Failure("module", f"{what} is not written yet (it raises NotImplementedError)")
        raise Failure("module", f"{what} failed: {last}", stderr=err)


def _stdout_empty(result: subprocess.CompletedProcess[bytes], what: str, hint: str) -> None:
    if result.stdout:
        raise Failure("stdout-json-lines", what, received=show(result.stdout), hint=hint)


# -- part one: the pieces ------------------------------------------------------------------------
_PROTOCOL = """
import json, os, subprocess, sys
import quiet_server
print("printed before the swap, still in the buffer")
protocol = quiet_server.protocol_stdout()
print("a stray print")
os.system("echo a child process that inherited stdout")
subprocess.run([sys.executable, "-c", "print('a python child')"])
protocol.write(MESSAGE)
protocol.flush()
print("after the message", flush=True)
os._exit(0)  # ended as a host's SIGTERM or SIGKILL ends a server: no clean-up flushes what is still buffered
"""


def check_protocol_stdout(work: Work, id: int) -> None:
    want = encode({"jsonrpc": "2.0", "id": id, "result": {}})
    result = _run_piece(work, "quiet_server", _PROTOCOL.replace("MESSAGE", repr(want)))
    _raised(result, "protocol_stdout()")
    if result.stdout != want:
        raise Failure(
            "stdout-json-lines",
            "after protocol_stdout(), stdout must carry the protocol message and nothing else",
            sent="a print before protocol_stdout(), then after it print(...), os.system('echo ...'), a Python "
            "child, and one message on the protocol stream",
            expected=show(want),
            received=show(result.stdout),
            hint="os.dup(1) keeps the real stdout for the protocol; os.dup2(2, 1) points fd 1 at stderr; "
            "sys.stdout.flush() after that, not before",
        )
    err = result.stderr.decode("utf-8", "replace")
    if "printed before the swap" not in err:
        raise Failure(
            "stderr-logs",
            "a line printed before protocol_stdout() was lost: it sat in Python's stdout buffer, and a server ended "
            "without clean-up (here os._exit, as a host's SIGTERM or SIGKILL ends one) never flushed it",
            sent="print(...) before protocol_stdout(), then a message on the protocol stream, then os._exit(0)",
            hint="sys.stdout.flush() right after os.dup2(2, 1): the buffered line goes out through fd 1, stderr now",
            stderr=err,
        )
    texts = ("a stray print", "a child process that inherited stdout", "a python child", "after the message")
    for text in texts:
        if text not in err:
            raise Failure(
                "stderr-logs",
                f"{text!r} (written after protocol_stdout()) was lost: it belongs on stderr, not nowhere",
                hint="point fd 1 at stderr (os.dup2(2, 1)) and sys.stdout at sys.stderr, never at os.devnull",
                stderr=err,
            )


_LOGGING = """
import logging
import quiet_server
quiet_server.setup_logging()
logging.getLogger("shop").info("an info line MARK")
logging.getLogger("shop").debug("a debug line")
"""


def check_setup_logging(work: Work, mark: str) -> None:
    result = _run_piece(work, "quiet_server", _LOGGING.replace("MARK", mark))
    _raised(result, "setup_logging()")
    _stdout_empty(result, "logging wrote to stdout", "logging.basicConfig(stream=sys.stderr, ...)")
    if f"an info line {mark}".encode() not in result.stderr:
        raise Failure("stdout-json-lines", "an INFO log line must reach stderr", received=show(result.stderr))


_QUIETLY = """
import json, sys
import quiet_server
out = quiet_server.run_quietly([sys.executable, "-c", "import sys; print('MARK'); print(repr(sys.stdin.read()))"])
rest = sys.stdin.read()
sys.stderr.write(json.dumps({"out": out, "rest": rest}) + "\\n")
"""


def check_run_quietly(work: Work, mark: str) -> None:
    protocol_input = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    result = _run_piece(work, "quiet_server", _QUIETLY.replace("MARK", mark), stdin=protocol_input)
    _raised(result, "run_quietly(argv)")
    _stdout_empty(
        result,
        "the child's output reached our stdout",
        "capture it: subprocess.run(..., stdout=subprocess.PIPE) or capture_output=True",
    )
    seen = json.loads(result.stderr.decode().strip().splitlines()[-1])
    if not isinstance(seen["out"], str) or not seen["out"].startswith(mark):
        raise Failure(
            "stdout-json-lines",
            "run_quietly must return what the child printed, as text",
            expected=show(mark + "\n..."),
            received=show(seen["out"]),
        )
    if seen["rest"] != protocol_input.decode():
        raise Failure(
            "child-stdin",
            "the child read the server's stdin: the next protocol message was gone",
            expected=f"our stdin still holds {show(protocol_input)}",
            received=show(seen["rest"]),
        )


def check_quiet_server(work: Work) -> None:
    expect_checks(
        work.program("quiet_server"),
        ["initialize-result", "stdout-json-lines", "stdout-silent-at-start", "tools-call-result", "shop-contract"],
    )


# -- part two: the hygiene check ---------------------------------------------------------------
SESSION = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "course", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "count_orders", "arguments": {"status": "paid"}},
    },
    {"jsonrpc": "2.0", "id": 4, "method": "ping"},
]
DIRTY = ["banner", "log_to_stdout", "child_writes_stdout", "crlf", "pretty_printed", "nan_in_json", "content_length"]
CLEAN = ["id_not_echoed", "ping_not_empty", "answers_notifications", "wrong_result_shape"]


def transcript(argv: list[str]) -> bytes:
    """Everything ``argv`` writes to stdout in the course's standard session, to the last byte."""
    data = b"".join(encode(m) for m in SESSION)
    try:
        done = subprocess.run(argv, input=data, capture_output=True, env=child_environment(), timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired as exc:
        return exc.stdout or b""
    return done.stdout


def first_dirty_line(stdout: bytes) -> int | None:
    """The 1-based number of the first line the checker's stdout rules find fault with."""
    pieces = stdout.split(b"\n")
    for number, piece in enumerate(pieces, 1):
        last = number == len(pieces)
        if last and not piece:
            break
        if line_problems(Line(piece, 0.0, len(piece), complete=not last)):
            return number
    return None


def _judge(hygiene: Any, stdout: bytes, where: str) -> None:
    problems = call(hygiene, "hygiene-check", stdout)
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        raise Failure("hygiene-check", f"hygiene() must return a list of strings, got {show(problems)}")
    dirty = first_dirty_line(stdout)
    shown = [show(line) for line in stdout.split(b"\n")[:8]]
    if dirty is None and problems:
        raise Failure(
            "hygiene-check", f"{where}: a clean transcript was called dirty", sent=shown, received=show(problems)
        )
    if dirty is not None:
        if not problems:
            raise Failure(
                "hygiene-check",
                f"{where}: a dirty transcript (line {dirty}) was called clean",
                sent=shown,
                expected=f"a problem starting 'line {dirty}:'",
                received="[]",
            )
        if not problems[0].startswith(f"line {dirty}:"):
            raise Failure(
                "hygiene-check",
                f"{where}: the first problem must name the first dirty line",
                sent=shown,
                expected=f"'line {dirty}: ...'",
                received=show(problems[0]),
            )


def check_hygiene_gallery(hygiene: Any) -> None:
    servers = {"the reference server": REFERENCE}
    servers.update({f"the exhibit {name}": exhibit_command(name) for name in DIRTY + CLEAN})
    # Recorded side by side (each is a process start and a short session), judged in order.
    with ThreadPoolExecutor(max_workers=4) as pool:
        transcripts = dict(zip(servers, pool.map(transcript, servers.values()), strict=True))
    for where, stdout in transcripts.items():
        _judge(hygiene, stdout, where)


def dirtied(clean: bytes, rng: random.Random) -> bytes:
    """The clean transcript with one defect put in at a random line."""
    lines = clean.split(b"\n")[:-1]
    at = rng.randrange(len(lines))
    kind = rng.choice(["log", "blank", "crlf", "pretty", "two", "nan", "utf8", "array", "string", "cut"])
    line = lines[at]
    if kind == "log":
        lines.insert(at, f"INFO:shop:{rng.choice(['ready', 'call', 'cache warm'])}".encode())
    elif kind == "blank":
        lines.insert(at, b"")
    elif kind == "crlf":
        lines[at] = line + b"\r"
    elif kind == "pretty":
        lines[at : at + 1] = json.dumps(json.loads(line), indent=2).encode().split(b"\n")
    elif kind == "two":
        lines[at] = line + (lines[at + 1] if at + 1 < len(lines) else line)
    elif kind == "nan":
        lines.insert(at, b'{"jsonrpc":"2.0","id":9,"result":{"score":NaN}}')
    elif kind == "utf8":
        lines.insert(at, b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"caf\xe9"}}')
    elif kind == "array":
        lines.insert(at, b"[1, 2, 3]")
    elif kind == "string":
        lines.insert(at, b'"ok"')
    else:
        return b"\n".join(lines)  # the last message has no newline
    return b"\n".join(lines) + b"\n"


def check_hygiene_random(hygiene: Any, rng: random.Random, rounds: int) -> None:
    clean = transcript(REFERENCE)
    for _ in range(rounds):
        _judge(hygiene, dirtied(clean, rng), "a transcript with one defect")
