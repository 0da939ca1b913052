"""Which eras a server speaks: a ``server/discover`` probe in one process, ``initialize`` in another.

MCP 2026-07-28 names two eras (``basic/versioning``): *modern* (the version in every request's
``_meta``, no handshake) and *legacy* (2025-11-25 and before, an ``initialize`` handshake). The
checker learns the server's eras the way a dual-era client does: the modern session opens with
``server/discover`` carrying the envelope (a DiscoverResult, or a recognised modern error such as
-32022, means modern), and the main session opens with ``initialize`` (a result means legacy). A
modern-only server refuses ``initialize``: that is conformant, and its legacy checks are skipped
with the reason. ``--era`` picks the eras to judge; by default, every era the server speaks.

    >>> eras = Eras("auto")
    >>> eras.set_modern(True, "server/discover answered a DiscoverResult")
    >>> eras.set_legacy(False, "initialize answered -32601")
    >>> eras.judged("modern"), eras.judged("legacy"), eras.spoken()
    (True, False, ['modern'])
    >>> Eras("both").judged("legacy")
    True
    >>> parse_era("newest")
    Traceback (most recent call last):
    ...
    ValueError: --era takes modern, legacy or both, got 'newest'
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

MODES = ("auto", "modern", "legacy", "both")
ERAS = ("legacy", "modern")


def parse_era(text: str) -> str:
    """The value of ``--era`` (``auto`` when not given)."""
    if text not in MODES[1:]:
        raise ValueError(f"--era takes modern, legacy or both, got {text!r}")
    return text


@dataclass
class Eras:
    """The mode asked for, and what each era's opening request found (set once, waited for)."""

    mode: str = "auto"
    modern: bool | None = None  # None until the discover probe is judged
    legacy: bool | None = None  # None until the main session's initialize is judged
    why: dict[str, str] = field(default_factory=dict)  # era -> what its opening request got
    _events: dict[str, threading.Event] = field(default_factory=lambda: {e: threading.Event() for e in ERAS})

    def asked(self, era: str) -> bool:
        """Whether the checker opens a session of ``era`` at all."""
        return self.mode in ("auto", "both", era)

    def set_modern(self, spoken: bool, why: str) -> None:
        self.modern = spoken
        self.why["modern"] = why
        self._events["modern"].set()

    def set_legacy(self, spoken: bool, why: str) -> None:
        self.legacy = spoken
        self.why["legacy"] = why
        self._events["legacy"].set()

    def wait(self, era: str, timeout: float) -> bool | None:
        """What the era's opening request found, waiting at most ``timeout`` seconds (None: unknown)."""
        self._events[era].wait(timeout)
        return self.modern if era == "modern" else self.legacy

    def judged(self, era: str) -> bool:
        """Whether ``era``'s checks are judged: asked for by name, or (auto) spoken by the server.

        In auto mode the modern era is judged where server/discover found it, and the legacy era
        unless the server is modern-only (a server that speaks neither is judged as legacy, as ever).
        """
        if self.mode != "auto":
            return self.asked(era)
        if era == "modern":
            return self.modern is True
        return self.legacy is True or self.modern is not True

    def settled(self, era: str, timeout: float) -> bool:
        """``judged(era)`` once the opening requests that decide it are answered (or ``timeout`` passed)."""
        if self.mode == "auto":
            self.wait("modern" if era == "modern" else "legacy", timeout)
            if era == "modern" and self.modern is not True:
                return False
            if era == "legacy" and self.legacy is not True:
                self.wait("modern", timeout)
        return self.judged(era)

    def spoken(self) -> list[str]:
        return [e for e in ("modern", "legacy") if (self.modern if e == "modern" else self.legacy)]

    def describe(self) -> str:
        """One line for the report: what each opening request found, and the eras judged."""
        spoken = {"modern": self.modern, "legacy": self.legacy}
        found = [
            f"{era} {'spoken' if spoken[era] else 'not spoken'} ({self.why[era]})" for era in spoken if era in self.why
        ]
        judged = [era for era in ("modern", "legacy") if self.judged(era)]
        asked = "" if self.mode == "auto" else f" (--era {self.mode})"
        return f"{'; '.join(found) or 'not probed'}; judged: {', '.join(judged) or 'none'}{asked}"

    def skip_reason(self, era: str) -> str:
        """Why ``era``'s checks were not judged."""
        if not self.asked(era):
            return f"not judged: --era {self.mode} (the {era} era was not asked for)"
        if era == "legacy":
            return (
                f"not judged: a modern-only server ({self.why.get('legacy', 'initialize refused')}; "
                f"{self.why.get('modern', '')}); --era both judges the legacy era anyway"
            )
        return (
            f"not judged: the server does not speak the modern era ({self.why.get('modern', 'no answer')}); "
            "--era both judges it anyway"
        )


def legacy_opened(ctx: Any, reply: Any) -> bool:
    """The main session's ``initialize`` reply decides the legacy era; False ends that session.

    A result means the server speaks the legacy era. A refusal (an error, or silence) from a server
    whose ``server/discover`` found the modern era means a modern-only server: conformant, its
    legacy checks skipped (in auto mode), and the refusal judged by the modern rule (it SHOULD
    name the versions served). Anything else goes on as before: initialize-result says what is wrong.
    """
    eras: Eras = ctx.eras
    result = reply.result if reply.message is not None else None
    answered = isinstance(result, dict)
    got = "a result" if answered else f"error {reply.code}" if reply.error is not None else "no reply"
    eras.set_legacy(answered, f"initialize got {got}")
    if answered or not eras.asked("modern") or reply.spread or reply.near_miss is not None:
        return True
    if eras.wait("modern", ctx.init_timeout + ctx.timeout + 5.0) is not True:
        return True  # neither era: judged as legacy, as ever
    f = ctx.findings
    if eras.mode != "auto":
        # The legacy era asked for by name (--era both) from a modern-only server: initialize-result
        # says so once, and the rest of the legacy conversation, which would only repeat it, is not run.
        f.failed(
            "initialize-result",
            f"initialize got {got}: the server speaks only the modern era, and --era {eras.mode} asks for the "
            "legacy one too",
            {"sent": json.dumps(reply.sent), "received": json.dumps(reply.message, ensure_ascii=False)[:300]},
        )
        f.unreached = "not reached: initialize was refused (the server speaks only the modern era)"
        return False
    if reply.message is None:
        f.failed(
            "modern-removed-methods",
            f"a legacy initialize got no reply within {reply.elapsed:.1f} s from a modern-only server: a request "
            "must get a response, and legacy clients learn nothing from silence",
            {"sent": json.dumps(reply.sent), "expected": "an error that names the versions served"},
            rule="no-reply",
        )
    elif "2026-07-28" in json.dumps(reply.error, ensure_ascii=False):
        f.passed("modern-removed-methods", f"a legacy initialize got error {reply.code} naming 2026-07-28")
    else:
        f.warned(
            "modern-removed-methods",
            f"a legacy initialize got error {reply.code}, which does not name the versions served",
            {"sent": json.dumps(reply.sent), "received": json.dumps(reply.message, ensure_ascii=False)[:300]},
            rule="initialize",
        )
    return False


def mixing_on_legacy(ctx: Any, probe: Any) -> None:
    """era-mixing on an initialized connection: a request with the modern envelope gets an answer."""
    from reference.stateless import CLIENT_CAPABILITIES, MODERN, PROTOCOL_VERSION

    if not ctx.eras.asked("modern") or probe.stalled:
        return  # --era legacy: the modern envelope is not sent at all
    params = {"_meta": {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}}
    reply = probe.request("server/discover", params, id="modern-on-legacy")
    revision = probe.revision if isinstance(probe.revision, str) else None
    if reply.message is None:
        ctx.findings.failed(
            "era-mixing",
            f"server/discover with the {MODERN} _meta on an initialized connection got no reply "
            f"within {reply.elapsed:.1f} s",
            {"sent": json.dumps(reply.sent), "expected": "a DiscoverResult, or an error that says why"},
            revision=revision,
        )
    else:
        got = f"error {reply.code}" if reply.error is not None else "a result"
        ctx.findings.passed(
            "era-mixing", f"a {MODERN} request on an initialized connection got {got}", revision=revision
        )
