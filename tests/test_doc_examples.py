"""The examples in the documentation must be true.

- Every module of ``reference/`` and ``grader/`` (with ``grader/gallery/__init__.py``, not the
  exhibits: they are programs) whose source shows ``>>>`` runs as a doctest (one case per
  module); any failure fails the case.
- README.md: every ```json block must parse, and every exchange shown in a ```text block as
  ``-> request`` / ``<- reply`` lines is replayed against a fresh reference server (one per
  block), the reply compared with the one shown. A ``<-`` line that is JSON must be contained in
  the real reply (keys it shows must match; lists in full); one elided with ``...`` must match
  fragment by fragment. A ``->`` line with no ``<-`` after it must get no reply at all. Blocks
  whose ``->`` lines are elided are illustrations and are not replayed.
- README.md's ```http blocks (Streamable HTTP as raw frames: request line, headers, blank line,
  body; then the status line, headers, blank line, body) are replayed against a real
  ``mcp-lab serve --http`` started with the options of the block's ``$ mcp-lab serve`` line, on a
  free port. The response's status and reason must be the ones shown, each header shown must be
  there with that value (``...`` elides), and the body must match as a ``<-`` line does (JSON; or
  text, fragment by fragment); no body shown means an empty one. The random parts are replaced:
  a request's ``Host`` is the real address, its ``Mcp-Session-Id`` the last one the server issued,
  and an ``Mcp-Session-Id`` shown in a response stands for any 32 hex digits.
"""

from __future__ import annotations

import doctest
import importlib
import json
import os
import pkgutil
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import ROOT, Wire

import grader
import reference
from reference import database

README = ROOT / "README.md"
ELLIPSES = ("...", "\u2026")


# -- doctests ---------------------------------------------------------------------------------
def modules_with_examples(package: ModuleType) -> list[str]:
    """The package and its modules (subpackages too, except the gallery's exhibits) that show ``>>>``."""
    names = [info.name for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    names = [name for name in names if not name.startswith("grader.gallery.")]
    names.append(package.__name__)
    found = []
    for name in sorted(names):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        if ">>>" in Path(spec.origin).read_text(encoding="utf-8"):
            found.append(name)
    return found


MODULES = modules_with_examples(reference) + modules_with_examples(grader)


def test_the_reference_has_doctests() -> None:
    assert {"reference.framing", "reference.dispatch", "reference.server", "reference.client"} <= set(MODULES)


def test_the_grader_has_doctests() -> None:
    expected = {
        "grader.checker.catalogue",
        "grader.checker.verdicts",
        "grader.checker.stdout_rules",
        "grader.checker.tool_calls",
        "grader.gallery",
    }
    assert expected <= set(MODULES)
    # The exhibits are programs run as child processes, never imported: not doctested.
    assert not [m for m in MODULES if m.startswith("grader.gallery.")]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str, shop_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The shop examples use the default database: point it at the session's built copy.
    monkeypatch.setenv(database.ENV_VAR, str(shop_db))
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    examples = sum(len(t.examples) for t in tests)
    assert examples > 0, f"{name} shows >>> but no doctest was found"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in tests:
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
    assert result.attempted == examples


# -- README ---------------------------------------------------------------------------------
@dataclass
class Exchange:
    request: str
    replies: list[str] = field(default_factory=list)


@dataclass
class Block:
    lang: str
    text: str
    line: int  # where the block starts in the file (1-based)


def fenced_blocks(markdown: str) -> list[Block]:
    blocks = []
    for match in re.finditer(r"^```([\w+-]*)[^\n]*\n(.*?)^```", markdown, flags=re.S | re.M):
        blocks.append(Block(match.group(1).lower(), match.group(2), markdown.count("\n", 0, match.start()) + 1))
    return blocks


def parse_json_block(text: str) -> list[Any]:
    """A ```json block: one JSON value, or one per line (JSON Lines)."""
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def exchanges(text: str) -> list[Exchange]:
    """The ``->`` / ``<-`` lines of a ```text block, grouped by request."""
    found: list[Exchange] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("-> "):
            found.append(Exchange(line[3:]))
        elif line.startswith("<- "):
            assert found, f"a reply shown before any request: {line}"
            found[-1].replies.append(line[3:])
    return found


def elided(text: str) -> bool:
    return any(mark in text for mark in ELLIPSES)


def contained(shown: Any, actual: Any, where: str = "reply") -> None:
    """Every key the README shows is in the real reply with the same value (lists in full)."""
    if isinstance(shown, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in shown.items():
            assert key in actual, f"{where}: no member {key!r} in {actual!r}"
            contained(value, actual[key], f"{where}.{key}")
    elif isinstance(shown, list):
        assert isinstance(actual, list) and len(actual) == len(shown), f"{where}: {shown!r} != {actual!r}"
        for i, (a, b) in enumerate(zip(shown, actual, strict=True)):
            contained(a, b, f"{where}[{i}]")
    else:
        same = type(shown) is type(actual) and shown == actual
        assert same, f"{where}: the text shows {shown!r}, the server sent {actual!r}"


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def matches(shown: str, actual_line: bytes) -> None:
    """Compare one ``<-`` line with the reply the server actually sent."""
    actual = json.loads(actual_line)
    if not elided(shown):
        contained(json.loads(shown), actual)
        return
    # An elided line: its fragments, whitespace aside, appear in order in the real reply.
    text = squeeze(actual_line.decode("utf-8"))
    position = 0
    for fragment in re.split("|".join(map(re.escape, ELLIPSES)), shown):
        piece = squeeze(fragment)
        if not piece:
            continue
        found = text.find(piece, position)
        assert found >= 0, f"README fragment {fragment!r} not in the reply {actual_line.decode()!r}"
        position = found + len(piece)


def replay(wire: Wire, block: list[Exchange]) -> None:
    for exchange in block:
        wire.send_raw(exchange.request.encode("utf-8") + b"\n")
        if not exchange.replies:
            assert wire.sync() == [], f"no reply expected to {exchange.request}"
            continue
        for shown in exchange.replies:
            wire.recv()
            matches(shown, wire.lines[-1])


def replayable(markdown: str) -> list[tuple[int, list[Exchange]]]:
    """The text blocks with exchanges whose requests are shown in full."""
    found = []
    for block in fenced_blocks(markdown):
        if block.lang not in ("text", "", "console"):
            continue
        shown = exchanges(block.text)
        if shown and not any(elided(e.request) for e in shown):
            found.append((block.line, shown))
    return found


def readme() -> str:
    if not README.is_file():
        pytest.skip("README.md does not exist yet: no examples to check")
    return README.read_text(encoding="utf-8")


def test_readme_json_blocks_parse() -> None:
    blocks = [b for b in fenced_blocks(readme()) if b.lang in ("json", "jsonl")]
    if not blocks:
        pytest.skip("README.md has no ```json blocks")
    for block in blocks:
        try:
            values = parse_json_block(block.text)
        except json.JSONDecodeError as exc:
            pytest.fail(f"README.md line {block.line}: the ```json block does not parse: {exc}")
        assert values, f"README.md line {block.line}: an empty ```json block"


def test_readme_exchanges_match_the_server(start_server: Callable[..., Wire]) -> None:
    blocks = replayable(readme())
    if not blocks:
        pytest.skip("README.md shows no -> / <- exchanges in ```text blocks")
    replay_all(blocks, start_server, "README.md")


def replay_all(blocks: list[tuple[int, list[Exchange]]], start_server: Callable[..., Wire], where: str) -> None:
    """Replay each block against a fresh reference server; a mismatch names the block."""
    for line, block in blocks:
        wire = start_server()
        try:
            replay(wire, block)
        except AssertionError as exc:
            raise AssertionError(f"{where}, the block at line {line}: {exc}") from None
        finally:
            wire.close()


# The replay machinery itself, on a README-like sample, so that it is known to work (and to
# fail) before README.md has any examples.
SAMPLE = """
Some prose.

```json
{"jsonrpc": "2.0", "id": 1, "method": "ping"}
```

```text
$ mcp-lab serve
-> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}
<- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}
-> {"jsonrpc":"2.0","method":"notifications/initialized"}
-> {"jsonrpc":"2.0","id":"p","method":"ping"}
<- {"jsonrpc":"2.0","id":"p","result":{}}
-> this is not JSON
<- {"jsonrpc":"2.0","id":null,"error":{"code":-32700,...}}
-> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"lost"}}}
<- {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"unknown status 'lost'...pending..."}],...}}
```

```text
-> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{...}}
<- {"jsonrpc":"2.0","id":0,"result":{...}}
```
"""


def test_replay_machinery_on_a_sample(start_server: Callable[..., Wire]) -> None:
    assert [b.lang for b in fenced_blocks(SAMPLE)] == ["json", "text", "text"]
    assert parse_json_block(fenced_blocks(SAMPLE)[0].text) == [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]
    blocks = replayable(SAMPLE)
    assert len(blocks) == 1, "the elided block is an illustration, not replayed"
    _, block = blocks[0]
    assert [len(e.replies) for e in block] == [1, 0, 1, 1, 1]
    replay(start_server(), block)


@pytest.mark.parametrize(
    "wrong",
    [
        '<- {"jsonrpc":"2.0","id":"p","result":{"extra":1}}',
        '<- {"jsonrpc":"2.0","id":"P","result":{}}',
        '<- {"jsonrpc":"2.0","id":"p","error":{...}}',
    ],
)
def test_replay_machinery_detects_a_wrong_reply(start_server: Callable[..., Wire], wrong: str) -> None:
    block = exchanges(f'-> {{"jsonrpc":"2.0","id":"p","method":"ping"}}\n{wrong}\n')
    with pytest.raises(AssertionError):
        replay(start_server(), block)


# -- README: Streamable HTTP as raw frames ------------------------------------------------------
REQUEST_LINE = re.compile(r"^(GET|POST|DELETE|PUT|PATCH|HEAD|OPTIONS) (\S+) HTTP/1\.1$")
STATUS_LINE = re.compile(r"^HTTP/1\.1 (\d{3}) (.+)$")


@dataclass
class HttpFrame:
    start: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    in_body: bool = False

    def text(self) -> str:
        return "\n".join(self.body).strip("\n")


def http_frames(text: str) -> tuple[list[str], list[tuple[HttpFrame, HttpFrame]]]:
    """An ```http block: the ``$ mcp-lab serve`` options, and (request, response) pairs."""
    options: list[str] = []
    frames: list[HttpFrame] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            words = line[2:].split()
            assert words[:2] == ["mcp-lab", "serve"], line
            options = words[2:]
        elif REQUEST_LINE.match(line) or STATUS_LINE.match(line):
            frames.append(HttpFrame(line))
        elif frames and not frames[-1].in_body:
            if line == "":
                frames[-1].in_body = True
            else:
                name, sep, value = line.partition(": ")
                assert sep, f"not a header: {line!r}"
                frames[-1].headers.append((name, value))
        elif frames:
            frames[-1].body.append(line)
        else:
            assert not line.strip(), f"text before the first frame: {line!r}"
    assert len(frames) % 2 == 0, "every request is followed by its response"
    pairs = list(zip(frames[::2], frames[1::2], strict=True))
    for request, response in pairs:
        assert REQUEST_LINE.match(request.start) and STATUS_LINE.match(response.start), (request, response)
    return options, pairs


def text_matches(shown: str, actual: str) -> None:
    if not elided(shown):
        assert actual.strip() == shown.strip(), f"the text shows {shown!r}, the server sent {actual!r}"
        return
    body, position = squeeze(actual), 0
    for fragment in re.split("|".join(map(re.escape, ELLIPSES)), shown):
        piece = squeeze(fragment)
        found = body.find(piece, position)
        assert found >= 0, f"README fragment {fragment!r} not in {actual!r}"
        position = found + len(piece)


def replay_http(options: list[str], pairs: list[tuple[HttpFrame, HttpFrame]], shop_db: Path) -> None:
    from http_support import HttpServer

    served = list(options)
    if "--http" in served:  # a free port instead of the one shown
        at = served.index("--http")
        del served[at : at + 2]
    if "--db" not in served:
        served += ["--db", str(shop_db)]
    server = HttpServer(served)
    session = None
    try:
        for request, shown in pairs:
            method, path = REQUEST_LINE.match(request.start).groups()  # type: ignore[union-attr]
            headers = dict(request.headers)
            headers["Host"] = f"{server.host}:{server.port}"
            if "Mcp-Session-Id" in headers:
                assert session is not None, "a session id shown before one was issued"
                headers["Mcp-Session-Id"] = session
            body = request.text().encode("utf-8") if request.text() else None
            reply = server.send(method, body, headers, path=path)
            where = f"{request.start} ({request.text()[:60]})"
            status, reason = STATUS_LINE.match(shown.start).groups()  # type: ignore[union-attr]
            assert (reply.status, HTTPStatus(reply.status).phrase) == (int(status), reason), (where, reply)
            for name, value in shown.headers:
                actual = reply.header(name)
                assert actual is not None, f"{where}: no {name} header in {reply.headers}"
                if name.lower() == "mcp-session-id":
                    assert re.fullmatch(r"[0-9a-f]{32}", actual), actual
                    session = actual
                else:
                    text_matches(value, actual)
            if not shown.text():
                assert reply.body == b"", f"{where}: no body shown, got {reply.body[:200]!r}"
            elif shown.text().startswith("{"):
                matches(shown.text(), reply.body)
            else:
                text_matches(shown.text(), reply.body.decode("utf-8"))
    finally:
        assert server.stop() == 0, server.stderr()


def test_readme_http_exchanges_match_the_server(shop_db: Path) -> None:
    blocks = [b for b in fenced_blocks(readme()) if b.lang == "http"]
    assert blocks, "README.md shows a Streamable HTTP session"
    for block in blocks:
        options, pairs = http_frames(block.text)
        assert pairs, f"README.md line {block.line}: an ```http block with no exchange"
        try:
            replay_http(options, pairs, shop_db)
        except AssertionError as exc:
            raise AssertionError(f"README.md, the http block at line {block.line}: {exc}") from None


HTTP_SAMPLE = """$ mcp-lab serve --http 127.0.0.1:8000

POST /mcp HTTP/1.1
Content-Type: application/json

{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}

HTTP/1.1 200 OK
Mcp-Session-Id: 0123456789abcdef0123456789abcdef

{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18",...}}

POST /mcp HTTP/1.1
Mcp-Session-Id: 0123456789abcdef0123456789abcdef
Content-Type: application/json

{"jsonrpc":"2.0","method":"notifications/initialized"}

HTTP/1.1 202 Accepted
"""


def test_http_replay_machinery_on_a_sample(shop_db: Path) -> None:
    options, pairs = http_frames(HTTP_SAMPLE)
    assert options == ["--http", "127.0.0.1:8000"] and len(pairs) == 2
    assert pairs[0][0].headers == [("Content-Type", "application/json")] and pairs[1][1].text() == ""
    replay_http(options, pairs, shop_db)
    wrong = HTTP_SAMPLE.replace("HTTP/1.1 202 Accepted", "HTTP/1.1 200 OK")
    with pytest.raises(AssertionError):
        replay_http(*http_frames(wrong), shop_db)


# -- the lessons ------------------------------------------------------------------------------
def lesson_markdown() -> list[tuple[str, str]]:
    """(stage, the text of its markdown cells) for every stage notebook."""
    from grader.course.build import stages
    from grader.course.notebook import parse

    found = []
    for stage in stages():
        cells = parse(stage.text.read_text(encoding="utf-8"), stage.name)["cells"]
        found.append((stage.name, "\n\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")))
    return found


LESSONS = lesson_markdown()


def test_lessons_show_frames() -> None:
    assert sum(len(replayable(text)) for _, text in LESSONS) >= 4, "the lessons show real exchanges"


def serve_options(text: str) -> list[str] | None:
    """The options of a block's ``$ mcp-lab serve ...`` line (``None``: the block has none)."""
    for line in text.splitlines():
        words = line.strip().split()
        if words[:3] == ["$", "mcp-lab", "serve"]:
            return words[3:]
    return None


def own_program(text: str) -> str | None:
    """The module of a block's ``$ python3 NAME.py`` line: the learner's own server, as solved."""
    for line in text.splitlines():
        words = line.strip().split()
        if words[:2] == ["$", "python3"] and len(words) == 3 and words[2].endswith(".py"):
            return words[2].removesuffix(".py")
    return None


def solution_module(stage: str, name: str) -> str:
    return stage_modules(stage)[name]


def stage_modules(stage: str) -> dict[str, str]:
    """Every ``%%module`` of a stage's solution, by name."""
    from grader.course.build import stages
    from grader.course.notebook import modules, parse

    found = next(s for s in stages() if s.name == stage)
    return modules(parse(found.text.read_text(encoding="utf-8"), stage))


@pytest.mark.parametrize(("stage", "text"), LESSONS, ids=[s for s, _ in LESSONS])
def test_lesson_examples_are_real(
    stage: str, text: str, start_server: Callable[..., Wire], tmp_path: Path, shop_db: Path
) -> None:
    """Every exchange a lesson shows is what the reference server does; every JSON block parses.

    A block that starts with ``$ mcp-lab serve OPTIONS`` is replayed against a server started with
    them, ``COPY`` standing for a fresh copy of the shop (stage 11's writes); one that starts with
    ``$ python3 NAME.py`` against the stage's own solution of ``NAME`` (stage 05's my_server.py)."""
    for block in fenced_blocks(text):
        if block.lang in ("json", "jsonl"):
            assert parse_json_block(block.text), f"{stage}: an empty ```json block"
    for number, block in enumerate(fenced_blocks(text)):
        shown = exchanges(block.text) if block.lang in ("text", "", "console") else []
        if not shown or any(elided(e.request) for e in shown):
            continue  # not an exchange, or an illustration
        options = serve_options(block.text)
        argv = None
        if options is not None:
            copy = database.build(tmp_path / f"copy-{number}.db")
            argv = [sys.executable, "-m", "reference.server", *[str(copy) if w == "COPY" else w for w in options]]
        program = own_program(block.text)
        if program is not None:
            path = tmp_path / f"{program}.py"
            path.write_text(solution_module(stage, program), encoding="utf-8")
            for name, source in stage_modules(stage).items():  # what it imports (stage 03: modern_server)
                if name != program:
                    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
            argv = [sys.executable, str(path)]
        # The learner's server finds the shop in $MCP_LAB_DB, as the course runs it.
        wire = start_server(argv, env={**os.environ, "MCP_LAB_DB": str(shop_db)} if program else None)
        try:
            replay(wire, shown)
        except AssertionError as exc:
            raise AssertionError(f"{stage} (markdown), the block at line {block.line}: {exc}") from None
        finally:
            wire.close()


HTTP_LESSONS = [(stage, text) for stage, text in LESSONS if "```http" in text]


@pytest.mark.parametrize(("stage", "text"), HTTP_LESSONS, ids=[s for s, _ in HTTP_LESSONS])
def test_lesson_http_exchanges_are_real(stage: str, text: str, shop_db: Path) -> None:
    """Every Streamable HTTP exchange a lesson shows (an ```http block, as README's) is what
    ``mcp-lab serve --http`` does, replayed as README's blocks are."""
    for block in fenced_blocks(text):
        if block.lang != "http":
            continue
        options, pairs = http_frames(block.text)
        assert pairs, f"{stage}: an ```http block with no exchange"
        try:
            replay_http(options, pairs, shop_db)
        except AssertionError as exc:
            raise AssertionError(f"{stage} (markdown), the http block at line {block.line}: {exc}") from None


# -- the signatures the lessons show ----------------------------------------------------------
# A lesson that shows a given piece as a call (`Dispatcher(methods, notifications, ...)`) shows its
# real parameters: a learner who copies the order must not wire `route` into `no_batch`.
INLINE_CODE = re.compile(r"`([^`\n]+)`")


def given_pieces() -> dict[str, list[Any]]:
    """The course's given callables by name: every public function and class of ``reference`` and of
    ``grader.course.lab_runtime``, and (as ``Class.method``) the public methods of those classes."""
    import inspect

    import grader.course.lab_runtime as lab_runtime

    found: dict[str, list[Any]] = {}
    for package in (reference, lab_runtime):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            try:
                module = importlib.import_module(info.name)
            except Exception:  # a program of the runtime that imports as a top-level package only
                continue
            for name, value in vars(module).items():
                if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                    continue
                if inspect.isfunction(value) or inspect.isclass(value):
                    found.setdefault(name, []).append(value)
                if inspect.isclass(value):
                    for method, function in vars(value).items():
                        if not method.startswith("_") and inspect.isfunction(function):
                            found.setdefault(f"{name}.{method}", []).append(function)
    return found


def learners_names(stage: str) -> set[str]:
    """The functions and classes a stage's learner writes (or is given in their own cells)."""
    import ast

    names: set[str] = set()
    for source in stage_modules(stage).values():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
    return names


def shown_calls(text: str) -> list[tuple[str, Any]]:
    """(the inline code, its call) for each inline code span of ``text`` that is one call."""
    import ast

    found = []
    for match in INLINE_CODE.finditer(text):
        code = match.group(1)
        try:
            tree = ast.parse(code, mode="eval").body
        except SyntaxError:
            continue
        if isinstance(tree, ast.Call):
            found.append((code, tree))
    return found


def resolve(call: Any, pieces: dict[str, list[Any]], mine: set[str]) -> list[Any]:
    """The given callables a shown call names: ``Name(...)``, or ``receiver.method(...)`` where the
    receiver names the class (``dispatcher.handle_line``) or a reference module (``framing.read_frame``)."""
    import ast

    func = call.func
    if isinstance(func, ast.Name):
        return [] if func.id in mine else pieces.get(func.id, [])
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        receiver, method = func.value.id, func.attr
        classes = [name for name in pieces if "." not in name and name.lower() == receiver.lower()]
        methods = [f for cls in classes for f in pieces.get(f"{cls}.{method}", [])]
        modules = [f for f in pieces.get(method, []) if f.__module__.rpartition(".")[2] == receiver]
        return methods + modules
    return []


def signature_problem(call: Any, target: Any) -> str:
    """Why the call as shown does not fit ``target``'s real signature ("" when it fits).

    A positional argument written as the name of one of the parameters must be the parameter in that
    place; anything else (a variable of the example, a literal, a CONSTANT, ``...``) is a value and
    only takes up a place. Keywords must be parameters, in the signature's order."""
    import ast
    import inspect

    parameters = list(inspect.signature(target).parameters.values())
    if "." in target.__qualname__ and parameters and parameters[0].name == "self":
        parameters = parameters[1:]
    kinds = inspect.Parameter
    places = [p for p in parameters if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind == kinds.VAR_POSITIONAL for p in parameters)
    names = [p.name for p in parameters]
    for index, argument in enumerate(call.args):
        if index >= len(places):
            return "" if variadic else f"{len(call.args)} positional arguments, it takes {len(places)}"
        if isinstance(argument, ast.Name) and argument.id in names and argument.id != places[index].name:
            return f"position {index + 1} is {places[index].name!r}, the text shows {argument.id!r} there"
    shown = [k.arg for k in call.keywords if k.arg is not None]
    if any(p.kind == kinds.VAR_KEYWORD for p in parameters):
        shown = [k for k in shown if k in names]
    unknown = [k for k in shown if k not in names]
    if unknown:
        return f"no parameter {unknown[0]!r}"
    taken = {places[i].name for i in range(min(len(call.args), len(places)))}
    if taken & set(shown):
        return f"{sorted(taken & set(shown))[0]!r} given twice"
    if shown != sorted(shown, key=names.index):
        return f"keywords {shown} are not in the order of the parameters {names}"
    return ""


def signature_mismatches(stage: str, text: str, pieces: dict[str, list[Any]]) -> list[str]:
    """Each shown call of a given piece that fits none of the callables of that name."""
    import inspect

    wrong = []
    mine = learners_names(stage) if stage else set()
    for code, call in shown_calls(text):
        targets = resolve(call, pieces, mine)
        problems = [signature_problem(call, target) for target in targets]
        if targets and all(problems):
            real = f"{targets[0].__qualname__}{inspect.signature(targets[0])}"
            wrong.append(f"`{code}`: {problems[0]}; the real one is {real}")
    return wrong


def test_a_wrongly_ordered_signature_is_found() -> None:
    """The check would have caught the Dispatcher of issue 30: `route` shown where `no_batch` is."""
    pieces = given_pieces()
    wrong = signature_mismatches("", "`Dispatcher(methods, notifications, batches_allowed, route)`", pieces)
    assert len(wrong) == 1 and "'no_batch'" in wrong[0] and "'route'" in wrong[0], wrong
    shown = "`Dispatcher(methods, notifications, batches_allowed=..., route=...)` `read_frame(stream)`"
    assert signature_mismatches("", shown, pieces) == []
    assert signature_mismatches("", "`read_frame(limit)`", pieces) != []  # a parameter out of its place
    assert signature_mismatches("", "`RpcError(CODE, detail=..., kind=...)`", pieces) != []  # given twice
    assert signature_mismatches("", "`dispatcher.handle_line(line, methods)`", pieces) != []  # one too many
    assert signature_mismatches("", "`RpcError(INVALID_PARAMS, why)` `read_frame(sys.stdin.buffer)`", pieces) == []


@pytest.mark.parametrize(("stage", "text"), LESSONS, ids=[s for s, _ in LESSONS])
def test_lesson_signatures_are_real(stage: str, text: str) -> None:
    """Every call of a course piece that a lesson shows in inline code has its real parameters."""
    wrong = signature_mismatches(stage, text, given_pieces())
    assert not wrong, f"{stage}: signatures that are not the real ones:\n" + "\n".join(wrong)
