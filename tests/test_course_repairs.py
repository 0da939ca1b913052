"""Stage 09 graded on real processes: the handed-out servers fail, the repairs that fix them pass.

Every verdict is a graded cell run as grading runs it (public checks, then the hidden ones with a
drawn ``rng``) against a ``Work`` on a temporary folder that holds only the repaired files. The
variants are what learners hand in: the instructor's repairs, partial repairs (a flush on one of
two paths, a lock around one of two writers, ids converted back with ``int()``, a redirect that
misses descriptor 1, a 2026-07-28 request's _meta still trusted from an earlier request on one
path), repairs that delegate to the course's server or wrap everything in ``try/except``, and
valid alternatives (a log notification, another lock placement, the per-connection cache cleared
for each request, ...). The verdicts are computed side by side in threads (most of their time is
spent waiting on servers), then each test reads its own.
"""

from __future__ import annotations

import random
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.course import runtime
from grader.course.checks import cells
from grader.course.checks.stage09 import BUDGET, FOLDER, changed_lines, own_code_problem
from grader.course.expect import Failure
from grader.course.work import LOCAL, Runner, Work
from grader.grading import flags, sandbox
from grader.grading.hidden import for_stage
from grader.grading.repairs import apply_solution, handed_out, healthy_source

pytestmark = pytest.mark.timeout(240)


def edit(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert text.count(old) == 1, f"the variant no longer matches the handed-out file: {old[:70]!r}"
        text = text.replace(old, new)
    return text


@dataclass(frozen=True)
class Variant:
    number: int
    text: str
    keeps: bool  # keeps its points (else: loses them, on ``check``)
    check: str = ""  # the check id the failure must name


TOUCHED = ("Find the defect and repair it in this file.", "Find the defect and repair it in this file (begun).")
LOCK_SEND = (
    '    json.dump(message, OUT, ensure_ascii=False)\n    OUT.write("\\n")\n    OUT.flush()\n',
    "    with WRITING:\n"
    '        json.dump(message, OUT, ensure_ascii=False)\n        OUT.write("\\n")\n        OUT.flush()\n',
)
WRITING = ("def send(message):\n", "WRITING = threading.Lock()\n\n\ndef send(message):\n")
REJECT = (
    '    OUT.write(json.dumps({"jsonrpc": "2.0", "id": None, "error": error.to_error()}) + "\\n")\n    OUT.flush()\n'
)
HANDLER_ERROR = (
    '        except RpcError as exc:\n            return self.fail(message["id"], exc.code, exc.message)\n',
    '        except RpcError as exc:\n            self.fail(message["id"], exc.code, exc.message)\n'
    "            return self.out.flush()\n",
)
FINISH = (
    "            self.reply(key, done.result())\n"
    "        except RpcError as exc:\n"
    "            self.reply(key, error=exc)\n"
)
MAIN_4 = "def main():\n    methods = make_server()\n    out = sys.stdout.buffer\n"
CACHED = "        if self.client is not None:\n"
HEALTHY_BEAT = "    while not stopping.wait(HEARTBEAT_SECONDS):\n"
# What tally prints becomes a log message once the session is initialized (stderr before that);
# descriptor 1 goes to stderr; the logging capability is declared and logging/setLevel served.
LOG_LINES = """class LogLines:
    def __init__(self, out):
        self.out, self.ready = out, False

    def write(self, text):
        for line in text.splitlines():
            if not self.ready:
                sys.stderr.write(line + "\\n")
            elif line.strip():
                note = {"level": "info", "logger": "tally", "data": line}
                send(self.out, {"jsonrpc": "2.0", "method": "notifications/message", "params": note})
        return len(text)

    def flush(self):
        pass


def send(out, message):
    out.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\\n")
    out.flush()


def main():
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    log = sys.stdout = LogLines(out)
    methods = make_server()
"""


def variants() -> dict[str, Variant]:
    h, o = healthy_source, handed_out
    found = {f"healthy-{n}": Variant(n, h(n), True) for n in range(1, 6)}
    firsts = {
        1: "stdout-json-lines",
        2: "stdout-flush",
        3: "id-echo",
        4: "stdout-json-lines",
        5: "modern-envelope-errors",
    }
    for n, check in firsts.items():
        found[f"handed-out-{n}"] = Variant(n, o(n), False, "clinic-repair")
        found[f"begun-{n}"] = Variant(n, edit(o(n), TOUCHED), False, check)
    found.update(
        {
            # 1: a thread per request, the reader thread writes too
            "1-lock-around-the-replies-only": Variant(1, edit(o(1), WRITING, LOCK_SEND), False, "stdout-json-lines"),
            "1-rejections-through-the-locked-send": Variant(
                1,
                edit(
                    o(1),
                    WRITING,
                    LOCK_SEND,
                    (REJECT, '    send({"jsonrpc": "2.0", "id": None, "error": error.to_error()})\n'),
                ),
                True,
            ),
            "1-one-write-per-message": Variant(
                1,
                edit(
                    o(1),
                    (
                        LOCK_SEND[0],
                        '    sys.stdout.buffer.write(json.dumps(message).encode() + b"\\n")\n'
                        "    sys.stdout.buffer.flush()\n",
                    ),
                    (REJECT, '    send({"jsonrpc": "2.0", "id": None, "error": error.to_error()})\n'),
                ),
                True,
            ),
            # 2: asyncio, the error path never flushed
            "2-flush-on-the-handler-path-only": Variant(2, edit(o(2), HANDLER_ERROR), False, "stdout-flush"),
            "2-flush-in-write": Variant(
                2,
                edit(
                    o(2),
                    (
                        '        self.out.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\\n")\n',
                        '        self.out.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\\n")\n'
                        "        self.out.flush()\n",
                    ),
                ),
                True,
            ),
            "2-unbuffered-stdout-and-a-log-notification": Variant(
                2,
                edit(
                    o(2),
                    (
                        "        self.out = sys.stdout.buffer\n",
                        '        self.out = open(sys.stdout.fileno(), "wb", buffering=0, closefd=False)\n',
                    ),
                    (
                        '"capabilities": {"tools": {"listChanged": False}},',
                        '"capabilities": {"tools": {}, "logging": {}},',
                    ),
                    (
                        '        self.respond(message["id"], result)\n',
                        '        self.respond(message["id"], result)\n'
                        '        note = {"level": "debug", "data": f"{message[\'method\']} done"}\n'
                        '        self.write({"jsonrpc": "2.0", "method": "notifications/message", "params": note})\n',
                    ),
                    (
                        '            "ping": self.ping,\n',
                        '            "ping": self.ping,\n            "logging/setLevel": self.ping,\n',
                    ),
                ),
                True,
            ),
            # 3: a dispatcher class, tool calls keyed and answered by str(id)
            "3-int-back-when-digits": Variant(
                3,
                edit(
                    o(3),
                    (
                        FINISH,
                        "            request_id = int(key) if key.isdigit() else key\n"
                        "            self.reply(request_id, done.result())\n"
                        "        except RpcError as exc:\n            self.reply(request_id, error=exc)\n",
                    ),
                ),
                False,
                "id-echo",
            ),
            "3-try-except-everything": Variant(
                3,
                edit(
                    o(3),
                    (
                        "    def finish(self, key, done):\n        self.running.pop(key, None)\n",
                        "    def finish(self, key, done):\n      try:\n        self.running.pop(key, None)\n",
                    ),
                    (
                        "            self.reply(key, error=exc)\n",
                        "            self.reply(key, error=exc)\n      except Exception:\n        pass\n",
                    ),
                    (
                        "            dispatcher.dispatch(message)\n",
                        "            try:\n                dispatcher.dispatch(message)\n"
                        "            except Exception:\n                pass\n",
                    ),
                ),
                False,
                "id-echo",
            ),
            "3-str-key-kept-the-real-id-replied": Variant(
                3,
                edit(
                    o(3),
                    ("lambda done: self.finish(key, done))", "lambda done: self.finish(key, done, request_id))"),
                    ("    def finish(self, key, done):\n", "    def finish(self, key, done, request_id):\n"),
                    (FINISH, FINISH.replace("self.reply(key,", "self.reply(request_id,")),
                ),
                True,
            ),
            "3-json-key": Variant(
                3,
                edit(
                    o(3),
                    ("        key = str(request_id)\n", "        key = json.dumps(request_id)\n"),
                    (FINISH, FINISH.replace("self.reply(key,", "self.reply(json.loads(key),")),
                    # ... and cancel looks a call up by the same key (str() would miss "17": cancelling breaks)
                    (
                        '        call = self.running.get(str(params.get("requestId")))\n',
                        '        call = self.running.get(json.dumps(params.get("requestId")))\n',
                    ),
                ),
                True,
            ),
            "3-json-key-cancel-missed": Variant(
                3,
                edit(
                    o(3),
                    ("        key = str(request_id)\n", "        key = json.dumps(request_id)\n"),
                    (FINISH, FINISH.replace("self.reply(key,", "self.reply(json.loads(key),")),
                ),
                False,
                "clinic-repair",
            ),
            # 4: a vendored library that prints and writes to descriptor 1
            "4-redirect-python-stdout-only": Variant(
                4,
                edit(
                    o(4),
                    (
                        MAIN_4,
                        "def main():\n    sys.stdout = sys.stderr\n"
                        "    methods = make_server()\n    out = sys.__stdout__.buffer\n",
                    ),
                ),
                False,
                "stdout-json-lines",
            ),
            "4-tally-quiet": Variant(
                4,
                edit(
                    o(4),
                    (MAIN_4, 'def main():\n    os.environ["TALLY_QUIET"] = "1"\n' + MAIN_4[len("def main():\n") :]),
                ),
                False,
                "stdout-json-lines",
            ),
            "4-logging-notifications": Variant(
                4,
                edit(
                    o(4),
                    (
                        '"capabilities": {"tools": {"listChanged": False}},',
                        '"capabilities": {"tools": {}, "logging": {}},',
                    ),
                    (
                        '        "ping": lambda params: {},\n',
                        '        "ping": lambda params: {},\n        "logging/setLevel": lambda params: {},\n',
                    ),
                    ("def main():\n    methods = make_server()\n", LOG_LINES),
                    ("    out = sys.stdout.buffer\n", ""),
                    (
                        '            out.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\\n")\n'
                        "            out.flush()\n",
                        "            send(out, reply)\n            log.ready = True\n",
                    ),
                    (
                        "        mean = self.seconds[name] / self.counts[name] * 1000\n",
                        "        mean = self.seconds[name] / self.counts[name] * 1000\n"
                        '        print(f"tally {self.app} {name} n={self.counts[name]} mean={mean:.2f}ms")\n'
                        "        return\n",
                    ),
                ),
                True,
            ),
            "4-stage-07-protocol-stdout": Variant(
                4,
                edit(
                    o(4),
                    (
                        MAIN_4,
                        "def protocol_stdout():\n"
                        '    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")\n'
                        "    sys.stdout.flush()\n"
                        "    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())\n"
                        "    sys.stdout = sys.stderr\n"
                        "    return protocol\n\n\n"
                        "def main():\n    out = protocol_stdout()\n    methods = make_server()\n",
                    ),
                ),
                True,
            ),
            # 5: a 2026-07-28 server that reads _meta once per connection
            "5-cache-kept-when-meta-is-there": Variant(
                5,
                edit(o(5), (CACHED, '        if self.client is not None and isinstance(params.get("_meta"), dict):\n')),
                False,
                "modern-envelope-errors",
            ),
            "5-cache-kept-for-the-same-version": Variant(
                5,
                edit(
                    o(5),
                    (
                        CACHED,
                        "        if self.client is not None and (params.get('_meta') or {})"
                        ".get(VERSION_KEY) == REVISION:\n",
                    ),
                ),
                False,
                "modern-envelope-errors",
            ),
            # The checker's envelope probes are tools/list and server/discover: only the replay sees this one.
            "5-cache-kept-for-tool-calls": Variant(
                5,
                edit(o(5), (CACHED, '        if self.client is not None and "name" in params:\n')),
                False,
                "modern-envelope-errors",
            ),
            "5-cache-cleared-for-each-request": Variant(
                5, edit(o(5), ("        served += 1\n", "        served += 1\n        shop.client = None\n")), True
            ),
            "5-cache-never-filled": Variant(5, edit(o(5), ("        self.client = meta\n", "")), True),
            "5-heartbeat-joined-while-it-sleeps": Variant(
                5,
                edit(
                    o(5),
                    (HEALTHY_BEAT, "    while not stopping.is_set():\n        time.sleep(HEARTBEAT_SECONDS)\n"),
                    ("import threading\n", "import threading\nimport time\n"),
                    ('name="heartbeat", daemon=True)\n', 'name="heartbeat")\n'),
                    (
                        "    stopping.set()  # end of input: the heartbeat stops, and the process exits\n",
                        "    stopping.set()\n    beat.join()\n",
                    ),
                    (CACHED + "            return self.client  # checked on this connection's first request\n", ""),
                    ("        self.client = meta\n", ""),
                ),
                False,
                "exit-on-eof",
            ),
        }
    )
    return found


RUNS = "    asyncio.run(serve())\n"
DELEGATING = {
    "runs the course's server as a module": (
        '    import runpy\n\n    runpy.run_module("reference.server", run_name="__main__")\n'
    ),
    "starts the course's server as a program": (
        '    import os\n\n    os.execv(sys.executable, [sys.executable, "-m", "reference.server"])\n'
    ),
    "imports the course's server": "    from reference.server import main\n\n    sys.exit(main())\n",
}

VARIANTS = variants()
VARIANTS.update(
    {
        f"2-delegating: {why}": Variant(2, edit(handed_out(2), (RUNS, text)), False, "clinic-repair")
        for why, text in DELEGATING.items()
    }
)


def verdict(number: int, text: str, runner: Runner = LOCAL) -> Failure | None:
    """Grade ``text`` as ``repair_NUMBER.py``, alone in a fresh folder: public, then hidden; the failure, if any."""
    grade_id = f"test_repair_{number}"
    with tempfile.TemporaryDirectory(prefix="repairs-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # the sandbox's user reaches its copy through here
        (folder / f"repair_{number}.py").write_text(text, encoding="utf-8")
        try:
            with Work(folder, "09", runner) as work:
                cells("09")[grade_id].run(work)
                for_stage("09")[grade_id](work, random.Random(f"{grade_id}:{len(text)}"))
        except Failure as failure:
            return failure
    return None


@pytest.fixture(scope="module")
def verdicts() -> dict[str, Failure | None]:
    runtime.cached("09")  # built once, before the threads
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(verdict, v.number, v.text) for name, v in VARIANTS.items()}
        futures["healthy-3 in the sandbox"] = pool.submit(verdict, 3, healthy_source(3), sandbox.detect(3))
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", [n for n, v in VARIANTS.items() if v.keeps])
def test_a_repair_keeps_its_points(verdicts: dict[str, Failure | None], name: str) -> None:
    failure = verdicts[name]
    assert failure is None, f"{name}:\n{failure}"


@pytest.mark.parametrize("name", [n for n, v in VARIANTS.items() if not v.keeps])
def test_a_server_still_broken_loses_its_points(verdicts: dict[str, Failure | None], name: str) -> None:
    failure = verdicts[name]
    assert failure is not None, f"{name} passed"
    assert failure.check == VARIANTS[name].check, f"{name}:\n{failure}"
    assert "rule:" in failure.text() or failure.check == "clinic-repair"


def test_repair_4s_failure_names_the_descriptor_fix_the_lesson_allows(verdicts: dict[str, Failure | None]) -> None:
    """tally (a library the lesson says not to change) writes with os.write(1, ...): the fix a failure names
    is the descriptor-level repair in the server's own main(), never print(..., file=sys.stderr)."""
    for name in ("4-redirect-python-stdout-only", "4-tally-quiet"):
        failure = verdicts[name]
        assert failure is not None and failure.check.startswith("stdout-"), name
        text = " ".join(failure.text().split())
        assert "os.dup2(2, 1)" in text and "you do not change tally" in text, text
        assert "file=sys.stderr" not in text, text


def test_the_healthy_server_passes_in_the_sandbox_too(verdicts: dict[str, Failure | None]) -> None:
    assert verdicts["healthy-3 in the sandbox"] is None, verdicts["healthy-3 in the sandbox"]


def test_an_untouched_server_says_so(verdicts: dict[str, Failure | None]) -> None:
    failure = verdicts["handed-out-1"]
    assert failure is not None and "repair_1.py is as it was handed out" in failure.summary


@pytest.mark.parametrize("why", DELEGATING)
def test_a_delegating_repair_is_flagged(verdicts: dict[str, Failure | None], why: str) -> None:
    failure = verdicts[f"2-delegating: {why}"]
    assert failure is not None and "must stay a server of its own" in failure.summary
    found = flags.scan("09", {"repair_2.py": VARIANTS[f"2-delegating: {why}"].text})
    assert "answer-key" in {f.kind for f in found}, found


# -- the files themselves ---------------------------------------------------------------------------
@pytest.mark.parametrize("number", range(1, 6))
def test_each_handed_out_server_is_a_whole_server_with_its_symptom_first(number: int) -> None:
    text = handed_out(number)
    symptom = text.splitlines()[0]
    assert symptom.startswith('"""') and len(symptom) <= 120 and symptom.endswith(".")
    assert 80 <= len(text.splitlines()) <= 180
    assert own_code_problem(text) == ""
    assert (FOLDER / f"repair_{number}.py.orig").read_text(encoding="utf-8") == text, "the pristine copy drifted"
    assert 0 < changed_lines(text, healthy_source(number)) <= BUDGET


def test_no_two_servers_share_a_template() -> None:
    for a in range(1, 6):
        for b in range(a + 1, 6):
            same = changed_lines(handed_out(a), handed_out(b))
            assert same > 60, f"repair_{a}.py and repair_{b}.py differ in {same} lines only"


def test_the_budget_counts_changed_lines_not_comments() -> None:
    text = handed_out(2)
    commented = text.replace("import json\n", "import json  # the wire format\n# a note\n\n", 1)
    assert changed_lines(text, commented) == 0
    rewritten = "\n".join(f"x{i} = {i}" for i in range(200))
    assert changed_lines(text, rewritten) > BUDGET


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("import reference.server\n", "reference.server"),
        ("from reference import dispatch\n", "reference.dispatch"),
        ("import grader.checker\n", "grader.checker"),
        ("import repair_1\n", "repair_1"),
        ("import subprocess\n", "subprocess"),
        ("exec(open('x.py').read())\n", "exec()"),
        ("import os\nos.system('python3 other.py')\n", "system()"),
        ("path = 'repair_3.py'\n", "repair_3"),
    ],
)
def test_a_repair_stays_its_own_server(text: str, says: str) -> None:
    assert says in own_code_problem(text)


def test_the_solution_never_writes_over_the_handed_out_files(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="handed out"):
        apply_solution(FOLDER)
    source = tmp_path / "course" / "source" / "09-clinic-repair"
    source.mkdir(parents=True)
    (tmp_path / "course" / "nbgrader_config.py").write_text("c = get_config()\n")
    with pytest.raises(RuntimeError):
        apply_solution(source)
    written = apply_solution(tmp_path)
    assert [p.read_text(encoding="utf-8") for p in written] == [healthy_source(n) for n in range(1, 6)]


def test_a_server_that_outlives_its_input_is_told_what_holds_it(verdicts: dict[str, Failure | None]) -> None:
    """exit-on-eof says what the server's threads wait for when its time ran out: the main thread in
    a join() of the heartbeat, which sleeps (threads from /proc: reference.thread_state)."""
    failure = verdicts["5-heartbeat-joined-while-it-sleeps"]
    assert failure is not None and failure.check == "exit-on-eof", failure
    threads = failure.details.get("threads", "")
    assert "waits for a lock, an event or another thread (a join()" in threads, failure.text()
    assert "waits for a timer (time.sleep)" in threads, failure.text()
