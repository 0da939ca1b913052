"""The report: the same verdicts as words for a person, or as the JSON contract for tools.

PASS  ping                  legacy  ping answered {}
FAIL  notification-silence  legacy  the server answered a notification
      sent: ["notifications/initialized", ...]
      ...
      rule: [MUST NOT] MCP 2025-11-25, Base Protocol > Notifications; ...: the receiver ...
      fix: ... (worded for the server's language when the command tells it)
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from .catalogue import CATALOGUE
from .check import Report
from .severity import Rule
from .verdicts import Result

LABEL = {"pass": "PASS", "fail": "FAIL", "warn": "WARN", "skip": "skip"}
ORDER = [
    "sent",
    "received",
    "expected",
    "near_miss",
    "received_after_close",
    "problems",
    "differences",
    "by_revision",
]


WIDTH = 160  # characters of one evidence value in the text report (the JSON keeps more)
SHOWN = 8  # items of one evidence list in the text report


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= WIDTH else text[:WIDTH] + " [...]"


def write_text(report: Report, out: TextIO, verbose: bool = False) -> None:
    target = f"--url {report.url}" if report.url is not None else " ".join(report.command)
    out.write(f"mcp-lab check: {target}\n")
    width = max(len(r.id) for r in report.results)
    for result in report.results:
        era = CATALOGUE[result.id].era  # the era whose sessions judge it: legacy, modern or both
        if result.caused_by:
            # A consequence: one line, and why; its fix is the root's (--json or -v shows its evidence).
            verb = "fails" if result.status == "fail" else "warns"
            out.write(
                f"  {LABEL[result.status]}  {result.id:<{width}}  {era:<6}  {verb} because of {result.caused_by}: "
            )
            out.write(f"{result.summary}\n        because: {result.evidence.get('because', '')}\n")
            if not verbose:
                continue
        else:
            out.write(f"  {LABEL[result.status]}  {result.id:<{width}}  {era:<6}  {result.summary}\n")
        if result.status not in ("fail", "warn") and not verbose:
            continue
        evidence = dict(result.evidence)
        evidence.pop("because", None)  # said on the check's own line
        keys = [k for k in ORDER if k in evidence] + [k for k in evidence if k not in ORDER]
        for key in keys:
            value = evidence[key]
            if value in (None, "", [], {}):
                continue
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                out.write(f"        {key}:\n")
                for item in value[:SHOWN]:
                    out.write(f"          {_value(item)}\n")
                if len(value) > SHOWN:
                    out.write(f"          ... and {len(value) - SHOWN} more (--json shows them)\n")
            elif key == "by_revision" and isinstance(value, dict):
                out.write("        by revision:\n")
                for revision, verdict in value.items():
                    out.write(f"          {revision}: {verdict['status']}: {_value(verdict['summary'])}\n")
            elif key == "stderr_tail":
                out.write("        stderr (last lines):\n")
                for line in str(value).strip().splitlines()[-6:]:
                    out.write(f"          | {_value(line)}\n")
            else:
                out.write(f"        {key}: {_value(value)}\n")
        if result.status in ("fail", "warn"):
            rule = _rule(result)
            out.write(f"        rule: {rule.label}: {rule.text}\n")
            out.write(f"        fix: {CATALOGUE[result.id].fix_for(report.language, rule)}\n")
    c = report.counts
    if report.eras:
        out.write(f"eras: {report.eras}\n")
    out.write(
        f"checks: {c['pass']} pass, {c['fail']} fail, {c['warn']} warn, {c['skip']} skip "
        f"({report.wall_seconds:.1f} s, {len(report.probes)} {'sessions' if report.url else 'server processes'})\n"
    )


def _rule(result: Result) -> Rule:
    return result.rule or CATALOGUE[result.id].main


def write_json(report: Report, out: TextIO) -> None:
    data = report.as_json()
    for check, result in zip(data["checks"], report.results, strict=True):
        if check["status"] in ("fail", "warn"):
            rule = _rule(result)
            check["evidence"].setdefault("rule", rule.text)
            check["evidence"]["keyword"] = rule.keyword
            check["evidence"]["source"] = rule.source
            check["evidence"].setdefault("fix", CATALOGUE[check["id"]].fix_for(report.language, rule))
    out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
