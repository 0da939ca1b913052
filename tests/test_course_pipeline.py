"""The course, proven stage by stage through nbgrader's real pipeline and the instructor's grading command.

For every stage:
- the source notebook executes cleanly under nbval (``--nbval-lax``, a cell timeout), and
  nbgrader's ``Validator`` finds no failure in it;
- ``generate_assignment`` succeeds; the release holds no solution text, no hidden test, and no
  file the source folder did not hold; ``Validator(invert=True)`` shows every graded test fails
  against the stubs;
- graded with ``mcp-lab course grade`` (outside the learner's kernel, in the sandbox): the
  solutions score full marks, the untouched release zero; a submission with one typical learner
  bug loses points in exactly the cells that test the rule it breaks; a server that never answers
  costs bounded time; feedback shows no hidden-test source.
"""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import pytest
from course_support import (
    KITCHEN_SINK,
    api,
    autograded_notebook,
    error_texts,
    grade,
    handed_in,
    nbgrader_config,
    notebook_text,
    run_nbval,
    solved_files,
    submit,
)

from grader.course import build
from grader.grading import secret

pytestmark = pytest.mark.timeout(600)

STAGES = {stage.name: stage for stage in build.stages()}

# The stdout rule's points in each stage whose learner code runs as a server: the cells that drive that
# server over its pipes watch its stdout for the whole session (a print flushed or not, at start, in a
# handler or at exit). The SDK client's cells may lose too (it skips a stray line, or chokes on it).
STDOUT_CELLS: dict[str, set[str]] = {
    "03-lifecycle": {"test_modern_server", "test_exit", "test_handshake", "test_batches", "test_eras"},
    "04-tools-list": {"test_served"},
    "05-tools-call": {"test_call_tool", "test_read_only", "test_mcp_lab_check"},
    "10-resources-prompts": {"test_served"},
    "11-audited-writes": {"test_ask_first", "test_served"},
}

# One typical learner bug per row: (stage, name, text replaced in the solution, cells that must lose points).
BUGS: list[tuple[str, str, tuple[str, str], set[str]]] = [
    (
        "00-shop-and-pipe",
        "f-string SQL",
        (
            'conn.execute("SELECT count(*) FROM orders WHERE status = ?", (status,)).fetchone()',
            "conn.execute(f\"SELECT count(*) FROM orders WHERE status = '{status}'\").fetchone()",
        ),
        {"test_count_orders"},
    ),
    (
        "00-shop-and-pipe",
        "stderr mixed into stdout",
        ("stdout=subprocess.PIPE, stderr=subprocess.PIPE)", "stdout=subprocess.PIPE, stderr=subprocess.STDOUT)"),
        {"test_talk"},
    ),
    ("00-shop-and-pipe", "the shop opened with mode=rwc", ('"?mode=ro"', '"?mode=rwc"'), {"test_open_shop"}),
    (
        "01-framing",
        "a missing flush",
        ("    stream.write(encode(message))\n    stream.flush()\n", "    stream.write(encode(message))\n"),
        {"test_flush", "test_unicode_process", "test_bad_lines"},
    ),
    (
        "01-framing",
        "NaN let through",
        ("allow_nan=False, separators", "allow_nan=True, separators"),
        {"test_encode"},
    ),
    (
        "01-framing",
        "read_frame keeping the carriage return of CRLF",
        ('        if line.endswith(b"\\r"):\n            line = line[:-1]\n', ""),
        {"test_read_frame"},
    ),
    (
        "02-messages",
        "a numeric id echoed as a string",
        (
            '    id = message["id"]\n    if not valid_id(id):',
            '    id = message["id"]\n    if isinstance(id, int):\n        id = str(id)\n    if not valid_id(id):',
        ),
        {"test_branches", "test_id_echo", "test_error_table"},
    ),
    (
        "02-messages",
        "a reply to a notification",
        (
            "            except Exception:\n                pass\n        return None",
            "            except Exception:\n                pass\n"
            "        return error_reply(None, METHOD_NOT_FOUND, method)",
        ),
        {"test_branches", "test_silence"},
    ),
    (
        "02-messages",
        "a reply to a response",
        (
            '("result" in message or "error" in message):\n        return None\n',
            '("result" in message or "error" in message):\n'
            '        return error_reply(message.get("id"), INVALID_REQUEST, "Invalid Request")\n',
        ),
        {"test_branches", "test_silence"},
    ),
    (
        "02-messages",
        "if id: taking id 0 for a notification",
        ('    if "id" not in message:\n        handler', '    if not message.get("id"):\n        handler'),
        {"test_branches", "test_id_echo", "test_error_table"},
    ),
    (
        "02-messages",
        "a bad line ending the server",
        (
            "    try:\n        message = decode(line)\n    except ValueError as exc:\n"
            '        return error_reply(None, PARSE_ERROR, f"Parse error: {exc}")\n',
            "    message = decode(line)\n",
        ),
        {"test_branches", "test_error_table"},
    ),
    (
        "03-lifecycle",
        "a print to stdout",
        (
            "    while True:\n        line = read_frame(stdin)\n",
            '    print("server ready", flush=True)\n    while True:\n        line = read_frame(stdin)\n',
        ),
        STDOUT_CELLS["03-lifecycle"],
    ),
    (
        "03-lifecycle",
        "a print to stdout that is never flushed",
        (
            "    while True:\n        line = read_frame(stdin)\n",
            '    print("server ready")\n    while True:\n        line = read_frame(stdin)\n',
        ),
        STDOUT_CELLS["03-lifecycle"],
    ),
    (
        "03-lifecycle",
        "the envelope's capabilities not checked",
        (
            "    if not isinstance(meta.get(CLIENT_CAPABILITIES), dict):\n",
            "    if False:\n",
        ),
        {"test_read_meta", "test_modern_server", "test_eras"},
    ),
    (
        "03-lifecycle",
        "-32022 without the versions served",
        (
            '        raise RpcError(UNSUPPORTED_VERSION, version, data={"supported": [MODERN], "requested": version})',
            "        raise RpcError(UNSUPPORTED_VERSION, version, data=None)",
        ),
        {"test_read_meta", "test_modern_server", "test_eras"},
    ),
    (
        "03-lifecycle",
        "no caching hints on the cacheable results",
        ('    if method in CACHEABLE:\n        out["ttlMs"] = TTL_MS\n        out["cacheScope"] = "public"\n', ""),
        {"test_complete", "test_discover", "test_modern_server", "test_eras"},
    ),
    (
        "03-lifecycle",
        "2026-07-28 results without resultType",
        ('    out = {"resultType": "complete", **result}\n', "    out = dict(result)\n"),
        {"test_complete", "test_discover", "test_modern_server", "test_eras"},
    ),
    (
        "03-lifecycle",
        "the era not fixed by a 2026-07-28 request",
        ('        session.era = "modern"\n', ""),
        {"test_eras"},
    ),
    (
        "03-lifecycle",
        "a 2026-07-28 request served after initialize",
        (
            '        if session.era == "legacy":\n            raise RpcError(INVALID_REQUEST',
            "        if False:\n            raise RpcError(INVALID_REQUEST",
        ),
        {"test_eras"},
    ),
    (
        "03-lifecycle",
        "a plain ping that locks the legacy era",
        (
            "    return methods.get(request.method)\n",
            '    session.era = "legacy"\n    return methods.get(request.method)\n',
        ),
        {"test_eras"},
    ),
    (
        "03-lifecycle",
        "a late initialize answered -32602 on a 2026-07-28 connection",
        ('        if request.method == "initialize":\n            return modern_server.route(request)\n', ""),
        {"test_eras"},
    ),
    (
        "03-lifecycle",
        "the Dispatcher's route passed by position",
        ("    return Dispatcher({}, {}, route=route)\n", "    return Dispatcher({}, {}, route)\n"),
        {"test_modern_server", "test_sdk_client"},
    ),
    (
        "03-lifecycle",
        "no exit at the end of input",
        ("        if line is None:\n            return 0\n", "        if line is None:\n            continue\n"),
        {"test_exit"},
    ),
    (
        "04-tools-list",
        "no caching hints in 2026-07-28",
        ('        result["ttlMs"] = TTL_MS\n        result["cacheScope"] = "public"\n', "        pass\n"),
        {"test_caching"},
    ),
    (
        "04-tools-list",
        "no upper bound on limit",
        (
            '"limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,',
            '"limit": {"type": "integer", "minimum": 1, "default": 20,',
        ),
        {"test_list_orders"},
    ),
    (
        "04-tools-list",
        "a tool name with a dot",
        ('        "name": "count_orders",\n', '        "name": "shop.count_orders",\n'),
        {"test_count_orders", "test_served"},
    ),
    (
        "04-tools-list",
        "a print to stdout in list_tools",
        (
            '    result = {"tools": all_tools()}\n',
            '    print("<- tools/list called with", params)\n    result = {"tools": all_tools()}\n',
        ),
        STDOUT_CELLS["04-tools-list"],
    ),
    (
        "05-tools-call",
        "a tool execution error sent as a protocol error",
        (
            "    except ToolError as exc:\n        return text_result(str(exc), True)\n",
            "    except ToolError as exc:\n        raise RpcError(INVALID_PARAMS, str(exc))\n",
        ),
        {"test_call_tool", "test_mcp_lab_check"},
    ),
    (
        "05-tools-call",
        "a print to stdout in a tool",
        (
            "def count_orders(conn, args):\n    ### BEGIN SOLUTION\n",
            'def count_orders(conn, args):\n    ### BEGIN SOLUTION\n    print("count_orders", args)\n',
        ),
        STDOUT_CELLS["05-tools-call"],
    ),
    (
        "05-tools-call",
        "my_server reads the id of a notification named like a request",
        (
            '    method, params = message["method"], message.get("params", {})\n    if "id" not in message:',
            '    method, params = message["method"], message.get("params", {})\n'
            '    if not method.startswith("notifications/"):\n'
            '        log(f"request {message[\'id\']}: {method}")  # {"method": "ping"} has no id: KeyError\n'
            '    if "id" not in message:',
        ),
        {"test_own_server_check"},
    ),
    (  # not a bug: no MUST says an unknown tool is a protocol error, and the checker only warns
        "05-tools-call",
        "an unknown tool answered with an isError result costs nothing",
        (
            "        raise RpcError(INVALID_PARAMS, f\"unknown tool {name!r}; tools/list shows {', '.join(TOOLS)}\")\n",
            "        return text_result(f\"unknown tool {name!r}; tools/list shows {', '.join(TOOLS)}\", True)\n",
        ),
        set(),
    ),
    (
        "05-tools-call",
        "a crashing tool's traceback on stdout",
        ("traceback.print_exc(file=sys.stderr)", "traceback.print_exc(file=sys.stdout)"),
        {"test_call_tool"},
    ),
    # MCP 2026-07-28's: resultType by era, and the envelope checked before anything is served.
    (
        "05-tools-call",
        "a 2026-07-28 tool result without resultType",
        (
            "    if version == MODERN:  # every 2026-07-28 result says what kind it is; legacy results never do\n"
            '        return {"resultType": "complete", **result}\n',
            "",
        ),
        {"test_call_tool"},  # on the wire the course's server marks every modern result: the unit check pays
    ),
    (
        "05-tools-call",
        "resultType on a legacy tool result",
        (
            "    if version == MODERN:  # every 2026-07-28 result says what kind it is; legacy results never do\n",
            "    if version:  # every result says what kind it is\n",
        ),
        {"test_call_tool"},
    ),
    (
        "05-tools-call",
        "my_server serves a 2026-07-28 request without checking its envelope",
        ("        session.modern = True\n        read_meta(params)\n", "        session.modern = True\n"),
        {"test_own_server_check"},
    ),
    (  # the SDK client in its default mode refuses such a result: its cell names the same rule
        "05-tools-call",
        "my_server's 2026-07-28 results without resultType",
        ('        return lambda params: {"resultType": "complete", **handler(params)}', "        return handler"),
        {"test_own_server_check", "test_own_server_sdk"},
    ),
    (
        "05-tools-call",
        "resultType on my_server's legacy tool results",
        (
            "    result = tool_result(json.dumps(value, ensure_ascii=False), False)\n    if version >=",
            "    result = tool_result(json.dumps(value, ensure_ascii=False), False)\n"
            '    result["resultType"] = "complete"\n    if version >=',
        ),
        {"test_own_server_check"},
    ),
    (  # no call writes, so only the connection open_shop returns shows it
        "05-tools-call",
        "my_server's shop opened with mode=rwc",
        (
            'Path(path).resolve().as_uri() + "?mode=ro", uri=True)',
            'Path(path).resolve().as_uri() + "?mode=rwc", uri=True)',
        ),
        {"test_own_server_check"},
    ),
    (
        "06-the-client",
        "a server request with id 0 taken for a notification",
        (
            '        if "id" not in message:\n            self.notifications.append(message)',
            '        if not message.get("id"):\n            self.notifications.append(message)',
        ),
        {"test_server_messages"},
    ),
    (
        "06-the-client",
        "an unknown server request refused with the wrong code",
        (
            'error = {"code": -32601, "message": f"Method not found:',
            'error = {"code": -32603, "message": f"Method not found:',
        ),
        {"test_server_messages"},
    ),
    (
        "06-the-client",
        "a timeout per message, not for the whole request",
        (
            "            message = self.next_message(deadline - time.monotonic())\n",
            "            message = self.next_message(self.timeout if timeout is None else timeout)\n",
        ),
        {"test_timeouts"},
    ),
    (
        "06-the-client",
        "no fallback when the probe times out",
        (
            '            code = exc.error.get("code") if isinstance(exc.error, dict) else None\n',
            '            if exc.error is None:\n                raise\n            code = exc.error.get("code")\n',
        ),
        {"test_probe"},
    ),
    (
        "06-the-client",
        "a fallback to initialize on any error, -32022 too",
        ("            if code in MODERN_ERRORS:\n", "            if False:\n"),
        {"test_probe"},
    ),
    (
        "06-the-client",
        "the fallback keyed to -32601 alone",
        ("            if code in MODERN_ERRORS:\n", "            if code != -32601:\n"),
        {"test_probe"},
    ),
    (
        "06-the-client",
        "the envelope on the probe only",
        (
            '        if self.era == "modern":\n            params = dict(params or {})\n'
            '            params["_meta"] = {**params.get("_meta", {}), **self.envelope()}\n',
            "",
        ),
        {"test_envelope"},
    ),
    (
        "06-the-client",
        "the caller's _meta replaced by the envelope",
        ('params["_meta"] = {**params.get("_meta", {}), **self.envelope()}', 'params["_meta"] = self.envelope()'),
        {"test_envelope"},
    ),
    (
        "06-the-client",
        "requestState dropped on the retry",
        (
            '            if "requestState" in result:\n'
            '                retry["requestState"] = result["requestState"]\n',
            "",
        ),
        {"test_input_required"},
    ),
    (
        "06-the-client",
        "requestState sent JSON-encoded",
        (
            'retry["requestState"] = result["requestState"]',
            'retry["requestState"] = json.dumps(result["requestState"])',
        ),
        {"test_input_required"},
    ),
    (
        "06-the-client",
        "an old requestState carried when the last result had none",
        (
            "            retry = dict(original)\n",
            '            retry = {**original, **{k: v for k, v in retry.items() if k == "requestState"}}\n',
        ),
        {"test_input_required"},
    ),
    (
        "06-the-client",
        "inputResponses keyed by method, not by the server's keys",
        (
            "{key: self.on_input(key, request) for key, request in asked.items()}",
            '{request["method"]: self.on_input(key, request) for key, request in asked.items()}',
        ),
        {"test_input_required"},
    ),
    (
        "07-stdout-hygiene",
        "stdout flushed before the swap",
        (
            "    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())\n    sys.stdout.flush()\n",
            "    sys.stdout.flush()\n    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())\n",
        ),
        {"test_protocol_stdout"},
    ),
    (
        "06-the-client",
        "replies matched by order, not by id",
        (
            '                if same_id(message["id"], request_id):\n'
            "                    return message\n"
            "                self.early.append(message)\n",
            "                return message\n",
        ),
        {"test_ids"},
    ),
    (
        "06-the-client",
        "stderr never read",
        (
            "(self.process.stdout, self.lines.put), (self.process.stderr, self.stderr.append)",
            "(self.process.stdout, self.lines.put),",
        ),
        {"test_stderr"},
    ),
    (
        "06-the-client",
        "killed before it could exit",
        ("        self.process.stdin.close()\n", "        self.process.kill()\n"),
        {"test_close"},
    ),
    (  # the client's ids start at 1, so only a request of id 0 (the tests send one) shows it
        "06-the-client",
        "a reply with id 0 taken for no reply",
        ('            elif "id" in message:\n', '            elif message.get("id"):\n'),
        {"test_ids"},
    ),
    (
        "07-stdout-hygiene",
        "no flush after the descriptor swap",
        (
            "    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())\n"
            "    sys.stdout.flush()\n"
            "    sys.stdout = sys.stderr\n",
            "    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())\n    sys.stdout = sys.stderr\n",
        ),
        {"test_protocol_stdout"},
    ),
    (
        "07-stdout-hygiene",
        "stdout kept, never pointed at stderr",
        (
            "    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())\n"
            "    sys.stdout.flush()\n"
            "    sys.stdout = sys.stderr\n",
            "",
        ),
        {"test_protocol_stdout", "test_quiet_server"},
    ),
    (
        "07-stdout-hygiene",
        "a child that may read the protocol's stdin",
        ("stdin=subprocess.DEVNULL, capture_output", "capture_output"),
        {"test_run_quietly"},
    ),
    (
        "10-resources-prompts",
        "an unknown resource answered -32602, not -32002",
        (
            'raise RpcError(RESOURCE_NOT_FOUND, data={"uri": uri})\n',
            'raise RpcError(INVALID_PARAMS, f"unknown resource {uri}")\n',
        ),
        {"test_read_resource", "test_served"},
    ),
    # 2026-07-28's code raised by the handler itself: right on the 2026-07-28 wire, -32602 on the legacy one.
    (
        "10-resources-prompts",
        "an unknown resource raised as 2026-07-28's -32602 with its URI",
        (
            'raise RpcError(RESOURCE_NOT_FOUND, data={"uri": uri})\n',
            'raise RpcError(INVALID_PARAMS, "Resource not found", data={"uri": uri})\n',
        ),
        {"test_read_resource", "test_served"},
    ),
    # 2026-07-28: servers MUST NOT answer a non-existent resource with an empty contents array. The learner's
    # own summarise_order reads its order through read_resource: an order that does not exist then reaches
    # get_prompt as an empty list, not as -32602 (that cell's failure names prompt-arguments, see CELL_RULES).
    (
        "10-resources-prompts",
        "an unknown resource read as an empty contents list",
        ('    raise RpcError(RESOURCE_NOT_FOUND, data={"uri": uri})\n', '    return {"contents": []}\n'),
        {"test_read_resource", "test_served", "test_get_prompt"},
    ),
    # Caching hints written by hand into the given lists, wrong: 2026-07-28 wants a ttlMs >= 0 (the SDK floors it).
    (
        "10-resources-prompts",
        "a list cached for a negative time",
        ("    return {key: items}\n", '    return {key: items, "ttlMs": -1}\n'),
        {"test_served"},
    ),
    (
        "10-resources-prompts",
        "an unknown resource without its URI in data",
        ('raise RpcError(RESOURCE_NOT_FOUND, data={"uri": uri})\n', "raise RpcError(RESOURCE_NOT_FOUND)\n"),
        {"test_read_resource", "test_served"},
    ),
    (
        "10-resources-prompts",
        "shop://orders/007 read as order 7",
        (
            '            if re.fullmatch(r"[1-9][0-9]{0,9}", value) and expand(template, **found) == uri:\n',
            "            if value.isdigit():\n",
        ),
        {"test_read_resource"},
    ),
    (
        "10-resources-prompts",
        "a missing required prompt argument not refused",
        (
            "    for key, argument in declared.items():\n"
            '        if argument.get("required") and key not in arguments:\n'
            '            raise invalid(f"missing required argument {key} for {name}")\n',
            "",
        ),
        {"test_get_prompt", "test_served"},
    ),
    (
        "10-resources-prompts",
        "a print to stdout in resources/read",
        (
            '    ### BEGIN SOLUTION\n    uri = params.get("uri")\n',
            '    ### BEGIN SOLUTION\n    uri = params.get("uri")\n    print("reading", uri)\n',
        ),
        STDOUT_CELLS["10-resources-prompts"],
    ),
    (
        "11-audited-writes",
        "a print to stdout in a write tool",
        (
            '    ### BEGIN SOLUTION\n    name = params.get("name")\n    arguments = params.get("arguments")\n',
            '    ### BEGIN SOLUTION\n    name = params.get("name")\n    print("write", name, flush=True)\n'
            '    arguments = params.get("arguments")\n',
        ),
        STDOUT_CELLS["11-audited-writes"],
    ),
    (
        "11-audited-writes",
        "with conn: taken for a transaction",
        (
            '    conn.execute("BEGIN IMMEDIATE")\n    try:\n        yield conn\n    except BaseException:\n'
            '        conn.execute("ROLLBACK")\n        raise\n    conn.execute("COMMIT")\n',
            "    with conn:\n        yield conn\n",
        ),
        {"test_writes"},
    ),
    (
        "11-audited-writes",
        "a write refused by the shop not audited",
        (
            '    except ToolError as exc:\n        audit("rejected", str(exc))\n',
            "    except ToolError as exc:\n",
        ),
        {"test_call_write", "test_served"},
    ),
    (
        "11-audited-writes",
        "a long note audited whole",
        (
            '        return value if len(value) <= SHORT else f"<text, {len(value)} chars>"\n',
            "        return value\n",
        ),
        {"test_summary"},
    ),
    (
        "11-audited-writes",
        "cancel_order's destructiveHint left out",
        (
            '"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False}\n'
            "    return {",
            '"readOnlyHint": False, "idempotentHint": True, "openWorldHint": False}\n    return {',
        ),
        {"test_annotations", "test_served"},
    ),
    (
        "11-audited-writes",
        "a requestState trusted without its MAC",
        (
            '    if not hmac.compare_digest(expected.encode("ascii"), mac.encode("utf-8")):\n'
            '        return "requestState failed verification: it was changed, or another server issued it"\n',
            "",
        ),
        {"test_request_state", "test_ask_first"},
    ),
    (
        "11-audited-writes",
        "a requestState not bound to its request",
        (
            '    if body.get("for") != bound:\n'
            '        return "requestState was issued for another request (another tool or other arguments)"\n',
            "",
        ),
        {"test_request_state", "test_ask_first"},
    ),
    (
        "11-audited-writes",
        "a requestState that never expires",
        ('    if now > body.get("exp", 0):\n', "    if False:\n"),
        {"test_request_state"},
    ),
    (
        "11-audited-writes",
        "a cancel asked of a client that declared no elicitation",
        ('    if not isinstance(declared, dict) or (declared and "form" not in declared):\n', "    if False:\n"),
        {"test_ask_first"},
    ),
    # MRTR > Error Handling: a retry that lacks the answer is asked again (the lesson's ask_first), never a yes.
    (
        "11-audited-writes",
        "a retry without an answer taken for a yes",
        (
            "    if not isinstance(answer, dict):  # no answer to the question: ask it again\n"
            "        return ask(key, arguments, bound, capabilities, now)\n",
            "    if not isinstance(answer, dict):  # no answer to the question: ask it again\n        return None\n",
        ),
        {"test_ask_first"},
    ),
    # The audit's failure line printed: in the course's server that is its stdout, the protocol's channel.
    (
        "11-audited-writes",
        "an audit failure printed to stdout",
        (
            '        log(f"audit failed ({type(exc).__name__}: {exc}); the reply to the client is unchanged")\n',
            '        print(f"audit failed ({type(exc).__name__}: {exc}); the reply to the client is unchanged")\n',
        ),
        {"test_served"},
    ),
    (
        "12-streamable-http",
        "a notification answered 200 with a body",
        (
            "        if reply is None:  # a notification or a response: accepted, nothing to say\n"
            "            self.reply(202, headers=headers)\n"
            "        elif isinstance",
            "        if isinstance",
        ),
        {"test_sessions", "test_mcp_lab_check"},  # an older client's notification (part 6's answer)
    ),
    (
        "12-streamable-http",
        "an Mcp-Method header not checked against the body",
        (
            '    if method.strip() != message.get("method"):\n',
            "    if False:\n",
        ),
        {"test_headers", "test_mcp_lab_check"},
    ),
    (
        "12-streamable-http",
        "a session id still required in 2026-07-28",
        (
            '        server = self.server.shop.server("http")  # no session: nothing of one request reaches another\n',
            "        found = self.session_for(message)\n        if found is None:\n            return\n"
            "        server = found[0]\n",
        ),
        {"test_post", "test_headers", "test_sdk_client"},
    ),
    (
        "12-streamable-http",
        "a GET answered with a stream in 2026-07-28",
        (
            "            self.fail(405, "
            'f"Method Not Allowed: {MODERN} sends every message as a POST", {"Allow": "POST"})\n',
            '            self.reply(200, b": listening\\n\\n", SSE_TYPE)\n',
        ),
        {"test_post"},
    ),
    (
        "12-streamable-http",
        "an unknown session id served as a new session",
        (
            "            server = self.server.sessions.get(session_id)\n",
            '            server = self.server.sessions.get(session_id) or self.server.shop.server("http")\n',
        ),
        {"test_sessions", "test_mcp_lab_check"},
    ),
    (
        "12-streamable-http",
        "Origin checked as text, not by host name",
        (
            '    return parts.scheme in ("http", "https") and parts.hostname in LOOPBACK\n',
            '    return "localhost" in origin or "127.0.0.1" in origin or "[::1]" in origin\n',
        ),
        {"test_origin"},  # the checker's foreign origin is caught; http://localhost.evil.example is not
    ),
    (
        "12-streamable-http",
        "a 401 without WWW-Authenticate",
        (
            '"Unauthorized: send Authorization: Bearer TOKEN", {"WWW-Authenticate": challenge})',
            '"Unauthorized: send Authorization: Bearer TOKEN")',
        ),
        {"test_auth", "test_mcp_lab_check"},
    ),
    (
        "12-streamable-http",
        "a 204 sent with Content-Length",
        (
            "        if status != 204:  # RFC 9110: a 204 has no content, so no Content-Length either\n"
            '            self.send_header("Content-Length", str(len(body)))\n',
            '        self.send_header("Content-Length", str(len(body)))\n',
        ),
        {"test_mcp_lab_check"},
    ),
    (
        "12-streamable-http",
        "an SSE event without its blank line",
        ('encode(message) + b"\\n\\n"\n', 'encode(message) + b"\\n"\n'),
        {"test_sse", "test_mcp_lab_check"},
    ),
    # A request is a message with an "id" member, whatever its value: 0 taken for "no id" skips the header check.
    (
        "12-streamable-http",
        "id 0 taken for no id in a 2026-07-28 POST",
        (
            '        if isinstance(message, dict) and "method" in message and "id" in message:\n',
            '        if isinstance(message, dict) and "method" in message and message.get("id"):\n',
        ),
        {"test_headers"},
    ),
    (
        "12-streamable-http",
        "the request's id turned into a string in a -32020 error",
        (
            'encode({"jsonrpc": "2.0", "id": message["id"], "error": error})',
            'encode({"jsonrpc": "2.0", "id": str(message["id"]), "error": error})',
        ),
        {"test_headers"},
    ),
]

# The rule each bug row breaks: every cell it costs quotes this check's rule (main or one of its own
# others, as the checker's finding followed), not a neighbour's. A cell that meets the bug through
# another rule the same evidence breaks says so in CELL_RULES.
RULES: dict[str, str] = {
    "f-string SQL": "parameterised-sql",
    "stderr mixed into stdout": "stdio-pipes",
    "a missing flush": "stdout-flush",
    "NaN let through": "stdout-strict-json",
    "a numeric id echoed as a string": "id-echo",
    "a reply to a notification": "notification-silence",
    "the shop opened with mode=rwc": "read-only-uri",
    "read_frame keeping the carriage return of CRLF": "framing-read",
    "a reply to a response": "notification-silence",
    "if id: taking id 0 for a notification": "id-echo",
    "a bad line ending the server": "survives-bad-input",
    "a print to stdout": "stdout-json-lines",
    "a print to stdout that is never flushed": "stdout-json-lines",
    "no exit at the end of input": "exit-on-eof",
    "no upper bound on limit": "shop-contract",
    "a tool name with a dot": "tool-names",
    "a print to stdout in list_tools": "stdout-json-lines",
    "the envelope's capabilities not checked": "modern-envelope-errors",
    "-32022 without the versions served": "modern-unsupported-version",
    "no caching hints on the cacheable results": "modern-cacheable",
    "2026-07-28 results without resultType": "modern-result-type",
    "the era not fixed by a 2026-07-28 request": "era-mixing",
    "a 2026-07-28 request served after initialize": "era-mixing",
    "a plain ping that locks the legacy era": "era-mixing",
    "a late initialize answered -32602 on a 2026-07-28 connection": "modern-removed-methods",
    "the Dispatcher's route passed by position": "discover-result",
    "no caching hints in 2026-07-28": "modern-cacheable",
    "a tool execution error sent as a protocol error": "shop-contract",
    "a print to stdout in a tool": "stdout-json-lines",
    "my_server reads the id of a notification named like a request": "notification-silence",
    "an unknown tool answered with an isError result costs nothing": "unknown-tool",
    "a crashing tool's traceback on stdout": "stdout-json-lines",
    "a 2026-07-28 tool result without resultType": "modern-result-type",
    "resultType on a legacy tool result": "modern-result-type",
    "my_server serves a 2026-07-28 request without checking its envelope": "modern-envelope-errors",
    "my_server's 2026-07-28 results without resultType": "modern-result-type",
    "resultType on my_server's legacy tool results": "modern-result-type",
    "a server request with id 0 taken for a notification": "client-server-requests",
    "an unknown server request refused with the wrong code": "client-server-requests",
    "a timeout per message, not for the whole request": "client-timeouts",
    "no fallback when the probe times out": "client-probe",
    "a fallback to initialize on any error, -32022 too": "client-probe",
    "the fallback keyed to -32601 alone": "client-probe",
    "the envelope on the probe only": "client-envelope",
    "the caller's _meta replaced by the envelope": "client-envelope",
    "requestState dropped on the retry": "client-input-required",
    "requestState sent JSON-encoded": "client-input-required",
    "an old requestState carried when the last result had none": "client-input-required",
    "inputResponses keyed by method, not by the server's keys": "client-input-required",
    "stdout flushed before the swap": "stdout-json-lines",
    "replies matched by order, not by id": "client-ids",
    "stderr never read": "client-stderr",
    "killed before it could exit": "client-shutdown",
    "my_server's shop opened with mode=rwc": "read-only-uri",
    "a reply with id 0 taken for no reply": "client-ids",
    "no flush after the descriptor swap": "stderr-logs",
    "stdout kept, never pointed at stderr": "stdout-json-lines",
    "a child that may read the protocol's stdin": "child-stdin",
    "an unknown resource answered -32602, not -32002": "resource-not-found",
    "an unknown resource raised as 2026-07-28's -32602 with its URI": "resource-not-found",
    "an unknown resource read as an empty contents list": "resource-not-found",
    "an unknown resource without its URI in data": "resource-not-found",
    "a list cached for a negative time": "modern-cacheable",
    "shop://orders/007 read as order 7": "resource-not-found",
    "a missing required prompt argument not refused": "prompt-arguments",
    "a print to stdout in resources/read": "stdout-json-lines",
    "a print to stdout in a write tool": "stdout-json-lines",
    "with conn: taken for a transaction": "write-transaction",
    "a write refused by the shop not audited": "write-audit",
    "a long note audited whole": "audit-redaction",
    "a requestState trusted without its MAC": "modern-request-state",
    "a requestState not bound to its request": "modern-request-state",
    "a requestState that never expires": "modern-request-state",
    "a cancel asked of a client that declared no elicitation": "modern-input-required",
    "a retry without an answer taken for a yes": "modern-input-required",
    "an audit failure printed to stdout": "stdout-json-lines",
    "cancel_order's destructiveHint left out": "write-annotations",
    "a notification answered 200 with a body": "http-notification-202",
    "an unknown session id served as a new session": "http-session",
    "Origin checked as text, not by host name": "http-origin",
    "a 401 without WWW-Authenticate": "http-auth",
    "an SSE event without its blank line": "http-sse",
    "a 204 sent with Content-Length": "http-session",
    "an Mcp-Method header not checked against the body": "http-modern-headers",
    "a session id still required in 2026-07-28": "http-modern-no-session",
    "a GET answered with a stream in 2026-07-28": "http-modern-status",
    "id 0 taken for no id in a 2026-07-28 POST": "http-modern-headers",
    "the request's id turned into a string in a -32020 error": "id-echo",
}
# Cells that meet a bug through another rule the same evidence breaks. (A protocol error for an unknown
# status is the shop contract's in every cell: its contract says an unknown status is an isError result.)
CELL_RULES: dict[tuple[str, str], str] = {
    # Id 0 taken for "no id": so is a null id, which then gets no -32600 (the error table's probe).
    ("if id: taking id 0 for a notification", "test_error_table"): "invalid-request",
    # handle_line itself raises on the line that is not JSON: the parse rule; in the server it dies.
    ("a bad line ending the server", "test_branches"): "parse-error",
    ("an unknown resource read as an empty contents list", "test_get_prompt"): "prompt-arguments",
    # Over the wire each era's request is judged by that era's rule, the checker's: a result for a URI
    # that names nothing breaks 2026-07-28's; -32602 in a legacy session breaks 2025-11-25's -32002.
    ("an unknown resource read as an empty contents list", "test_served"): "modern-resource-not-found",
    ("an unknown resource raised as 2026-07-28's -32602 with its URI", "test_served"): "resources-read",
    # A dot is a name character from 2025-11-25 on: the served list is not the shop's four.
    ("a tool name with a dot", "test_served"): "shop-contract",
}


def quotable_rules(check: str) -> list[str]:
    """The rule lines a failure of ``check`` may quote: its main rule, or one of its others."""
    from grader.checker.catalogue import CATALOGUE
    from grader.course.expect import rule_and_fix

    rules = [rule_and_fix(check)[0]]
    if check in CATALOGUE:
        rules += [f"{r.source} ({r.keyword}): {r.text}" for r in CATALOGUE[check].also.values()]
    return [r for r in rules if r]


def quoted_rule(text: str) -> str:
    """The rule paragraph of a failure's text, its wrapped lines joined."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("rule:")), None)
    if start is None:
        return ""
    paragraph = [lines[start].strip().removeprefix("rule:").strip()]
    for line in lines[start + 1 :]:
        if not line.startswith(" " * 12) or line.strip().startswith(("fix:", "stderr")):
            break
        paragraph.append(line.strip())
    return " ".join(paragraph)


def test_every_bug_row_names_its_rule() -> None:
    assert {b[1] for b in BUGS} == set(RULES), "every bug row says which rule it breaks, and only they"
    for check in {*RULES.values(), *CELL_RULES.values()}:
        assert quotable_rules(check), f"{check}: no rule in the catalogue or the lessons' table"


# The clinic's answers are data and files: its bug rows change those (stage, name, change, cells that must lose).
CLINIC_BUGS: list[tuple[str, str, str, set[str]]] = [
    ("08-clinic-diagnosis", "one case misdiagnosed", "case-03", {"test_case_03"}),
    ("08-clinic-diagnosis", "one reproducer that shows nothing", "case-05", {"test_case_05"}),
    # One seven-line "kitchen sink" as every live case's evidence, each with its right rule: no reproducer
    # of the rule named, so every live case loses its point (the cells are those of the draw's live cases).
    ("08-clinic-diagnosis", "a kitchen sink for every live case", "every live case", {"test_case_NN (live)"}),
    ("09-clinic-repair", "one server left broken", "repair_2.py", {"test_repair_2"}),
    ("09-clinic-repair", "the 2026-07-28 server left broken", "repair_5.py", {"test_repair_5"}),
]

# A server that reads every line and never answers a request: its process tests fail, in bounded time.
HANGS: dict[str, tuple[str, str]] = {
    # talk() that waits for a server that never exits, with no timeout.
    "00-shop-and-pipe": (
        '        out, _ = process.communicate(b"".join(lines), timeout=timeout)\n',
        '        out, _ = process.communicate(b"".join(lines))\n',
    ),
    "01-framing": ("    stream.write(encode(message))\n    stream.flush()\n", "    return None\n"),
    "02-messages": (
        "        return result_reply(id, methods[method](params))\n",
        "        result_reply(id, methods[method](params))\n",
    ),
    "03-lifecycle": ("        reply = dispatcher.handle_line(line)\n", "        reply = None\n"),
    "04-tools-list": ('    result = {"tools": all_tools()}\n', "    import time\n\n    time.sleep(3600)\n"),
    "05-tools-call": (
        '    name = params.get("name")\n',
        '    import time\n\n    time.sleep(3600)\n    name = params.get("name")\n',
    ),
    # A client whose every read waits forever: its calls are given up after stage06.LIMIT seconds.
    "06-the-client": ("        deadline = time.monotonic() + timeout\n", "        time.sleep(3600)\n"),
    "07-stdout-hygiene": (
        "    return server.serve(sys.stdin.buffer, protocol)\n",
        "    import time\n\n    time.sleep(3600)\n",
    ),
    # A resources/read that never returns (and so a summarise_order prompt, which reads its order).
    "10-resources-prompts": (
        '    uri = params.get("uri")\n',
        '    import time\n\n    time.sleep(3600)\n    uri = params.get("uri")\n',
    ),
    # A write that waits forever, on every call.
    "11-audited-writes": (
        '    name = params.get("name")\n    arguments = params.get("arguments")\n',
        "    import time\n\n    time.sleep(3600)\n"
        '    name = params.get("name")\n    arguments = params.get("arguments")\n',
    ),
    # A POST that is never answered (GET and DELETE still are): every request of every cell waits.
    "12-streamable-http": (
        "        body = self.read_body()\n",
        "        import time\n\n        time.sleep(3600)\n        body = self.read_body()\n",
    ),
}
HANG_BUDGET = 60.0  # seconds for a whole grading of a hanging submission


# Session-scoped: the stages are groups of their own under xdist (tests/conftest.py), and a worker
# that comes back to this file after another file's group would otherwise build the course again.
@pytest.fixture(scope="session")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("course")
    build.init_course(root)
    secret.create(root)
    nbgrader = api(root)
    for name in STAGES:
        result = nbgrader.generate_assignment(name, force=True, create=True)
        assert result["success"], result.get("log", "")[-3000:]
    return root


# -- the source executes, the release's stubs fail ----------------------------------------------
# The course's own source (what nbgrader generates the release from), every cell run by nbval: a
# graded cell that fails raises, so this is also nbgrader's "the source validates". A stage per
# test: the stages' groups share the suite's workers (tests/conftest.py).
@pytest.mark.parametrize("name", STAGES)
def test_source_notebooks_execute_under_nbval(course: Path, name: str, tmp_path: Path) -> None:
    stage = STAGES[name]
    copy = tmp_path / "source"
    shutil.copytree(course / "source" / name, copy)  # with what a stage hands out (stage 09's servers)
    done = run_nbval(copy / stage.notebook)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout), done.stdout[-2000:]
    assert "failed" not in done.stdout.splitlines()[-1], done.stdout[-2000:]


@pytest.mark.parametrize("name", STAGES)
def test_release_stubs_fail_the_validator(course: Path, name: str, tmp_path: Path) -> None:
    from nbgrader.validator import Validator

    stage = STAGES[name]
    copy = tmp_path / "release"
    shutil.copytree(course / "release" / name, copy)
    found = Validator(config=nbgrader_config(course), invert=True).validate(str(copy / stage.notebook))
    # Inverted, Validator returns {} when every graded cell fails: no stub passes by luck.
    assert found == {}, f"release (inverted): {json.dumps(found)[:3000]}"


@pytest.mark.parametrize("name", STAGES)
def test_release_leaks_nothing(course: Path, name: str) -> None:
    stage = STAGES[name]
    source_files = {p.name for p in (course / "source" / name).iterdir()}
    release_files = {p.name for p in (course / "release" / name).iterdir()}
    assert release_files <= source_files, (
        f"files in the release that the source did not hold: {release_files - source_files}"
    )
    release = json.loads((course / "release" / name / stage.notebook).read_text(encoding="utf-8"))
    text = "\n".join(
        cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"]) for cell in release["cells"]
    )
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text
    for hidden in _regions(stage.text.read_text(encoding="utf-8"), "HIDDEN TESTS"):
        assert hidden not in text, f"hidden test text in the release: {hidden!r}"
    for solution in _regions(stage.text.read_text(encoding="utf-8"), "SOLUTION"):
        assert solution not in text, f"solution text in the release: {solution!r}"


def _regions(text: str, marker: str) -> list[str]:
    """The distinctive lines between ### BEGIN marker and ### END marker (short ones are not proof)."""
    lines = []
    for body in re.findall(rf"### BEGIN {marker}\n(.*?)### END {marker}", text, flags=re.S):
        lines.extend(line.strip() for line in body.splitlines() if len(line.strip()) > 25)
    return lines


# -- autograding ---------------------------------------------------------------------------------
def solutions(course: Path, student: str, stage: build.Stage, replace: tuple[str, str] | None = None) -> None:
    """Submit the stage's solution (as ``student``'s own, with one bug if ``replace`` says so)."""
    text = notebook_text(stage, replace, course=course, student=student)
    submit(course, student, stage, text, solved_files(stage, course))


@pytest.mark.parametrize("name", STAGES)
def test_solutions_full_marks_release_zero(course: Path, name: str) -> None:
    stage = STAGES[name]
    solutions(course, "solutions", stage)
    release = (course / "release" / name / stage.notebook).read_text(encoding="utf-8")
    submit(course, "untouched", stage, release, handed_in(stage, course))
    full = grade(course, "solutions", stage)
    zero = grade(course, "untouched", stage)
    assert full.max_score == stage.points() > 0
    if full.score != full.max_score:  # say why: the failed cells' own texts
        notebook = autograded_notebook(course, "solutions", stage)
        why = {cell: error_texts(notebook, cell) for cell in sorted(full.lost())}
        raise AssertionError(f"solutions lost points in {sorted(full.lost())}: {why}")
    assert zero.score == 0, f"the untouched release scored in {sorted(set(zero.cells) - zero.lost())}"
    assert not full.flag_kinds() and not zero.flag_kinds(), (full.flags, zero.flags)
    # A stub that still raises says so in every cell it costs, the capstone's too: never a dead server,
    # an SDK's ExceptionGroup or a time-out. (The clinic hands out answers and servers, not stubs.)
    if name not in ("08-clinic-diagnosis", "09-clinic-repair"):
        notebook = autograded_notebook(course, "untouched", stage)
        said = {cell: (error_texts(notebook, cell) or [""])[0] for cell in zero.lost()}
        unsaid = {cell: text.splitlines()[:1] for cell, text in said.items() if "not written yet" not in text}
        assert not unsaid, f"cells of the untouched release that do not say what is not written yet: {unsaid}"
    print(
        f"{name}: {stage.points()} points; graded in {full.seconds:.1f} s (solutions), {zero.seconds:.1f} s (untouched)"
    )


@pytest.mark.parametrize(("name", "bug", "replace", "lost"), BUGS, ids=[f"{b[0]}:{b[1]}" for b in BUGS])
def test_one_bug_loses_only_its_rule(
    course: Path, name: str, bug: str, replace: tuple[str, str], lost: set[str]
) -> None:
    stage = STAGES[name]
    student = re.sub(r"\W+", "-", bug)
    solutions(course, student, stage, replace)
    grades = grade(course, student, stage)
    # The SDK client skips lines that are not JSON, but may choke on one at shutdown: either is fair.
    lenient = {"test_sdk_client"} if "print" in bug else set()
    assert lost <= grades.lost() <= lost | lenient, f"{bug}: lost {sorted(grades.lost())}, expected {sorted(lost)}"
    # Each failure names a check and says what to fix.
    notebook = autograded_notebook(course, student, stage)
    for cell in lost:
        texts = error_texts(notebook, cell)
        # (The learner's own traceback may be the evidence; a traceback of the grader's never is.)
        assert texts and not texts[0].startswith("Traceback"), f"{cell}: {texts[:1]}"
        # ... and quotes the rule this row breaks, as the check that found it words it.
        check = CELL_RULES.get((bug, cell), RULES[bug])
        first = texts[0].removeprefix("Failure").strip()
        assert first.startswith(f"{check}:"), f"{bug}: {cell} names another rule: {first.splitlines()[0]}"
        rule = " ".join(quoted_rule(texts[0]).split())
        assert any(rule == " ".join(r.split()) for r in quotable_rules(check)), f"{bug}: {cell} quotes {rule!r}"


DEBUG_LINE = 'import sys as _debug\nprint("debug: my module is loaded", file=_debug.stderr)\n'


def with_debug_lines(text: str) -> str:
    """A stage's text with a debug line to stderr in every module the learner writes."""
    return re.sub(r"(%%module \w+\n)", lambda m: m.group(1) + DEBUG_LINE, text)


@pytest.mark.parametrize("name", STAGES)
def test_a_debug_line_to_stderr_costs_nothing(course: Path, name: str) -> None:
    """The course teaches stderr as the place for logs: a learner who uses it loses nothing."""
    stage = STAGES[name]
    student = "debug-lines"
    text = notebook_text(stage, course=course, student=student)
    notebook = json.loads(text)
    for cell in notebook["cells"]:
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if source.startswith("%%module "):
            cell["source"] = with_debug_lines(source)
        elif source.startswith("diagnosis = "):
            cell["source"] = source + "\n" + DEBUG_LINE
    files = {
        name: re.sub(r"\nif __name__ == .__main__.:", "\n" + DEBUG_LINE + "\nif __name__ == '__main__':", text, count=1)
        for name, text in solved_files(stage, course).items()
    }
    submit(course, student, stage, json.dumps(notebook), files)
    grades = grade(course, student, stage)
    assert grades.score == grades.max_score == stage.points(), f"lost {sorted(grades.lost())}"


@pytest.mark.parametrize(("name", "bug", "target", "lost"), CLINIC_BUGS, ids=[f"{b[0]}:{b[1]}" for b in CLINIC_BUGS])
def test_one_clinic_bug_loses_only_its_case(course: Path, name: str, bug: str, target: str, lost: set[str]) -> None:
    from grader.course import clinic
    from grader.grading.clinic_key import solution_value

    stage = STAGES[name]
    student = re.sub(r"\W+", "-", bug)
    files = solved_files(stage, course)
    text = notebook_text(stage, course=course, student=student)
    if name.startswith("08"):
        value = solution_value(clinic.salt(course / "source" / name), student)
        if "misdiagnosed" in bug:
            value[target]["rule"] = "ping" if value[target]["rule"] != "ping" else "id-echo"
        elif "kitchen sink" in bug:
            live = [case for case, entry in value.items() if "reproduce" in entry]
            for case in live:
                value[case]["reproduce"] = KITCHEN_SINK
            lost = {f"test_case_{case[-2:]}" for case in live}
        elif "reproduce" in value[target]:
            # A case whose defect shows on any line (a banner at start) has no harmless lines: the draw
            # depends on the course's random salt, so the next live case of this student's is taken then.
            live = [target, *sorted(c for c, e in value.items() if "reproduce" in e and c != target)]
            for target in live:
                if (lines := harmless_lines(course / "source" / name, student, target)) is not None:
                    break
            assert lines is not None, f"every live case of {student} shows its defect on any line"
            value[target]["reproduce"] = lines
            lost = {f"test_case_{target[-2:]}"}
        else:
            value[target]["line"] = 1
        source = stage.text.read_text(encoding="utf-8")
        start, end = source.index("### BEGIN SOLUTION"), source.index("### END SOLUTION") + len("### END SOLUTION")
        text = notebook_text_from(stage, source[:start] + "diagnosis = " + repr(value) + source[end:])
    else:
        files[target] = handed_in(stage, course)[target]
    submit(course, student, stage, text, files)
    grades = grade(course, student, stage)
    assert grades.lost() == lost, f"{bug}: lost {sorted(grades.lost())}, expected {sorted(lost)}"


# Repairs that fix the defect and break what the author wanted (the lesson says the repair must keep it):
# (file, text replaced in the instructor's repair, cells that must lose).
REPAIR_BUGS: list[tuple[str, str, tuple[str, str], set[str]]] = [
    (
        "repair_3.py",
        "keyed by the id, cancel still looks up str(requestId)",
        (
            '        request_id = params.get("requestId")\n'
            "        call = self.running.get(request_id) if isinstance(request_id, (str, int)) else None\n",
            '        call = self.running.get(str(params.get("requestId")))\n',
        ),
        {"test_repair_3"},
    ),
]


@pytest.mark.parametrize(("target", "bug", "replace", "lost"), REPAIR_BUGS, ids=[b[1] for b in REPAIR_BUGS])
def test_a_repair_that_breaks_what_it_must_keep_loses_its_point(
    course: Path, target: str, bug: str, replace: tuple[str, str], lost: set[str]
) -> None:
    stage = STAGES["09-clinic-repair"]
    student = re.sub(r"\W+", "-", bug)
    files = solved_files(stage, course)
    old, new = replace
    assert files[target].count(old) == 1, f"{target}: the bug's text must occur exactly once"
    files[target] = files[target].replace(old, new)
    submit(course, student, stage, notebook_text(stage, course=course, student=student), files)
    grades = grade(course, student, stage)
    assert grades.lost() == lost, f"{bug}: lost {sorted(grades.lost())}, expected {sorted(lost)}"
    texts = error_texts(autograded_notebook(course, student, stage), "test_repair_3")
    assert texts and "clinic-repair:" in texts[0] and "cancel" in texts[0], texts[:1]


def harmless_lines(source: Path, student: str, case: str) -> list[str] | None:
    """Lines on which ``case`` does nothing the healthy server does not (a ping shows a ping defect);
    None when every candidate shows the defect (a banner written at start shows on any line)."""
    import sys

    from grader.checker.transcript import broken
    from grader.course import clinic
    from grader.course.clinic.evidence import REFERENCE
    from grader.course.clinic.replay import replay

    command = [sys.executable, "-m", "grader.course.clinic.server", clinic.salt(source), student, case]
    for lines in (
        ['{"jsonrpc":"2.0","id":1,"method":"ping"}'],
        ['{"jsonrpc":"2.0","method":"notifications/mcp-lab/nothing"}'],
        ['{"jsonrpc":"2.0","id":1,"method":"tools/list"}'],
    ):
        if not broken(replay(command, lines), replay(REFERENCE, lines)):
            return lines
    return None


def notebook_text_from(stage: build.Stage, text: str) -> str:
    from grader.course.notebook import parse

    return json.dumps(parse(text, stage.name), indent=1, ensure_ascii=False)


@pytest.mark.parametrize("name", [*HANGS, "09-clinic-repair"])
def test_a_hanging_server_costs_bounded_time(course: Path, name: str) -> None:
    stage = STAGES[name]
    if name in HANGS:
        submit(course, "hangs", stage, notebook_text(stage, HANGS[name], course=course, student="hangs"))
    else:  # a repair that hangs before it reads a line
        files = solved_files(stage, course)
        files["repair_3.py"] = "import time\ntime.sleep(3600)\n" + files["repair_3.py"]
        submit(course, "hangs", stage, notebook_text(stage, course=course, student="hangs"), files)
    grades = grade(course, "hangs", stage)
    assert grades.seconds < HANG_BUDGET, f"autograde took {grades.seconds:.0f} s"
    assert grades.score < grades.max_score
    print(f"{name}: a hanging server graded in {grades.seconds:.1f} s, {grades.score}/{grades.max_score}")


def test_feedback_shows_no_hidden_tests(course: Path) -> None:
    stage = STAGES["02-messages"]
    bug = next(b for b in BUGS if b[1] == "a numeric id echoed as a string")
    submit(course, "feedback", stage, notebook_text(stage, bug[2]))
    grade(course, "feedback", stage)
    result = api(course).generate_feedback(stage.name, "feedback", force=True)
    assert result["success"], result.get("log", "")[-3000:]
    page = course / "feedback" / "feedback" / stage.name / f"{stage.name}.html"
    html = unescape(page.read_text(encoding="utf-8"))
    assert "test_branches" in html and "check" in html  # the visible test is there
    for hidden in [*_regions(stage.text.read_text(encoding="utf-8"), "HIDDEN TESTS"), "random_ids"]:
        assert hidden not in html, f"hidden test source in the feedback: {hidden!r}"
    assert "id-echo" in html  # and the learner's failure message
