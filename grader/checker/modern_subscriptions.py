"""The modern era's subscriptions: ``subscriptions/listen``, where the server declares change notifications.

The first message of a subscription is its acknowledgement, carrying the subscription's id (the
listen request's JSON-RPC id) in ``_meta``; on stdio the client ends it with
``notifications/cancelled`` (basic/patterns/subscriptions).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from reference.stateless import SUBSCRIPTION_ID

from .modern_wire import UNKNOWN_URI, meta
from .probe import show_json

if TYPE_CHECKING:
    from .modern_session import ModernSession


def listen_filter(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The notifications to ask for: those the server declares it sends (empty: nothing to listen to).

    >>> listen_filter({"tools": {"listChanged": True}, "resources": {"subscribe": True}, "prompts": {}})
    {'toolsListChanged': True, 'resourceSubscriptions': ['mcp-lab-check://no-such-resource/1']}
    """
    features = (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"), ("resourcesListChanged", "resources"))
    wanted: dict[str, Any] = {
        key: True
        for key, feature in features
        if isinstance(capabilities.get(feature), dict) and capabilities[feature].get("listChanged") is True
    }
    resources = capabilities.get("resources")
    if isinstance(resources, dict) and resources.get("subscribe") is True:
        wanted["resourceSubscriptions"] = [UNKNOWN_URI]
    return wanted


def judge_subscriptions(s: ModernSession) -> None:
    f, probe = s.f, s.probe
    filter_ = listen_filter(s.capabilities)
    if not filter_:
        f.skipped("modern-subscriptions", "not judged: the server declares no listChanged and no resources.subscribe")
        return
    listen_id = "listen-1"
    params = {"notifications": filter_, "_meta": meta()}
    probe.send({"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen", "params": params})
    deadline = probe.child.elapsed() + probe.timeout
    ack = None
    before: list[Any] = []
    ended = None
    while ack is None and ended is None and (left := deadline - probe.child.elapsed()) > 0:
        item = probe.read(left)
        if item is None:
            break
        message = item.message if isinstance(item.message, dict) else {}
        tag = (
            ((message.get("params") or {}).get("_meta") or {}).get(SUBSCRIPTION_ID)
            if isinstance(message.get("params"), dict)
            else None
        )
        if message.get("method") == "notifications/subscriptions/acknowledged":
            ack = message
        elif message.get("id") == listen_id and "method" not in message:
            ended = message
        elif tag == listen_id:
            before.append(message)
    evidence: dict[str, Any] = {
        "sent": show_json({"id": listen_id, "method": "subscriptions/listen", "params": params})
    }
    if ack is None:
        got = f"the response {show_json(ended, 200)}" if ended else "nothing"
        if ended is not None and (ended.get("error") or {}).get("code") == -32601:
            f.warned(
                "modern-subscriptions",
                "subscriptions/listen is not served (-32601), though the server declares change notifications",
                {**evidence, "received": show_json(ended)},
                rule="unserved",
            )
        else:
            f.failed("modern-subscriptions", f"subscriptions/listen got {got} before an acknowledgement", evidence)
        return
    tag = ((ack.get("params") or {}).get("_meta") or {}).get(SUBSCRIPTION_ID)
    evidence["received"] = show_json(ack, 300)
    if before:
        f.failed("modern-subscriptions", "a notification of the subscription came before its acknowledgement", evidence)
    elif tag != listen_id or type(tag) is not type(listen_id):
        f.failed(
            "modern-subscriptions",
            f"the acknowledgement's _meta[{SUBSCRIPTION_ID!r}] is {json.dumps(tag)}, not the listen request's id "
            f"{json.dumps(listen_id)}",
            evidence,
        )
    else:
        f.passed("modern-subscriptions", f"subscriptions/listen acknowledged first, tagged {json.dumps(listen_id)}")
    # End it as a stdio client does; a final response may follow (read briefly, not required).
    probe.notify("notifications/cancelled", {"requestId": listen_id, "reason": "mcp-lab check: done"})
    probe.drain(0.2)
