"""The wire inspector in a notebook: a session's frames as a timeline widget, or as text where no widget shows.

``lab.inspect(argv, script, against=lab.reference())`` runs ``script`` against the server command
``argv`` (and against the reference, side by side), then shows every frame with its time, arrow
and kind; a click on a frame shows it pretty-printed; requests and replies point at each other by
number; what breaks a rule is marked, and the first frame that differs from the reference's is
highlighted with the rule it breaks and the fix. Below it a box sends any line you type (an
invalid one too) to a live copy of the server and shows what comes back.

The display carries a plain-text transcript beside the widget, so where no widget front end runs
(nbclient, nbval, nbgrader's autograde) the saved output is still the whole session.

    >>> import sys
    >>> view = Inspector([sys.executable, "-m", "reference.server"], [{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    >>> view.html().count('class="mcp-row mcp-frame')
    2
    >>> print(view.text().splitlines()[1])  # doctest: +ELLIPSIS
      0.0... s  #1   -> request (#...): {"jsonrpc":"2.0","id":1,"method":"ping"}
"""

from __future__ import annotations

import atexit
import html
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from .timeline import REPLY_TIMEOUT, SETTLE, Event, Frame, Recorder, Timeline, run
from .wirediff import ContentDifference, Difference, compare, content_difference, content_lines

IDLE = 600.0  # seconds after the last line typed: the live server is ended
_LIVE: weakref.WeakSet[Recorder] = weakref.WeakSet()  # live servers, all ended when the kernel exits

STYLE = """<style>
.mcp-insp{font-family:var(--jp-code-font-family,monospace);font-size:12px;line-height:1.5;contain:inline-size}
.widget-html.mcp-recorded>.widget-html-content,.widget-html.mcp-live-view>.widget-html-content{min-width:0;flex:1 1 0}
.mcp-insp .mcp-head{font-weight:bold;margin:4px 0}
.mcp-insp .mcp-row{display:flex;gap:8px;padding:1px 4px;border-left:4px solid transparent}
.mcp-insp .mcp-body{flex:1;min-width:0;overflow-wrap:anywhere}
.mcp-insp summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.mcp-insp .mcp-at,.mcp-insp .mcp-n,.mcp-insp .mcp-kind{flex:none} .mcp-insp pre{white-space:pre-wrap}
.mcp-insp .mcp-at{color:#777;min-width:64px;text-align:right} .mcp-insp .mcp-n{color:#777;min-width:34px}
.mcp-insp .mcp-kind{min-width:150px} .mcp-insp pre{margin:2px 0 4px 0;background:#f6f6f6;padding:4px}
.mcp-insp .mcp-sent{border-left-color:#2b6cb0} .mcp-insp .mcp-received{border-left-color:#2f855a}
.mcp-insp .mcp-error{background:#fff8e1} .mcp-insp .mcp-stderr{color:#6b46c1}
.mcp-insp .mcp-note{color:#555;font-style:italic} .mcp-insp .mcp-timeout{color:#c05621}
.mcp-insp .mcp-not-json{background:#fde2e2} .mcp-insp .mcp-flag{color:#c53030;font-weight:bold}
.mcp-insp .mcp-flagged{border-left-color:#c53030}
.mcp-insp .mcp-first-diff{outline:2px solid #c53030;background:#fff0f0}
.mcp-insp .mcp-diff-box{border:2px solid #c53030;padding:6px;margin:6px 0;background:#fff5f5}
.mcp-insp .mcp-same{border:2px solid #2f855a;padding:6px;margin:6px 0;background:#f0fff4}
.mcp-insp .mcp-cols{display:flex;gap:12px} .mcp-insp .mcp-col{flex:1;min-width:0}
.mcp-insp .mcp-era{font-size:10px;color:#555;border:1px solid #bbb;border-radius:3px;padding:0 3px}
</style>"""

ARROWS = {"sent": "→", "received": "←", "stderr": "2>", "note": "··"}
LEGEND = (
    "→ client to server · ← server to client · 2&gt; a stderr line · ·· a note (no reply in time, "
    "stdin closed, exit) · #n (#m): frame n answers or is answered by frame m · 2026-07-28 or legacy: the era "
    "of the frame · _meta:{…}: the 2026-07-28 envelope, folded · click a frame to pretty-print it in full"
)


def event_html(event: Event, first_diff: bool = False) -> str:
    """One event as a row: time, number, arrow, kind and link, and the frame (pretty-printed on a click)."""
    classes = ["mcp-row", f"mcp-{event.direction}", f"mcp-{event.kind}"]
    if event.is_frame:
        classes.insert(1, "mcp-frame")
    if event.flag:
        classes.append("mcp-flagged")
    if first_diff:
        classes.append("mcp-first-diff")
    link = f" (#{event.link})" if event.link is not None else ""
    era = f' <span class="mcp-era">{html.escape(event.era)}</span>' if event.era else ""
    flag = f'<div class="mcp-flag">⚠ {html.escape(event.flag)}</div>' if event.flag else ""
    body = html.escape(event.summary())
    if event.is_frame:
        body = f"<details><summary>{body}</summary><pre>{html.escape(event.pretty())}</pre></details>"
    body = f'<div class="mcp-body">{body}{flag}</div>'
    return (
        f'<div class="{" ".join(classes)}" data-n="{event.n}"><span class="mcp-at">{event.at:.3f} s</span>'
        f'<span class="mcp-n">#{event.n}</span><span>{ARROWS[event.direction]}</span>'
        f'<span class="mcp-kind">{event.kind}{link}{era}</span>{body}</div>'
    )


def timeline_html(timeline: Timeline, first_diff: Event | None = None) -> str:
    head = f'<div class="mcp-head">$ {html.escape(" ".join(timeline.command))}</div>'
    rows = [event_html(e, e is first_diff) for e in timeline.events]
    return head + "".join(rows)


def diff_html(diff: Difference | None, content: ContentDifference | None = None) -> str:
    if diff is None and content is not None:
        return f'<div class="mcp-diff-box"><pre>{html.escape(content.text())}</pre></div>'
    if diff is None:
        return f'<div class="mcp-same">{SAME}</div>'
    rule = diff.rule
    both = diff.learner is not None and diff.reference is not None and diff.learner.data != diff.reference.data
    content = (
        f"<pre>{html.escape(chr(10).join(content_lines(diff.learner.data, diff.reference.data)))}</pre>" if both else ""
    )
    return (
        f'<div class="mcp-diff-box"><b>First difference: <code>{diff.check}</code></b>: {html.escape(diff.why)}<br>'
        f"{content}<b>rule</b>: {html.escape(rule.rule)}<br><b>fix</b>: {html.escape(rule.fix)}</div>"
    )


SAME = "Same as the reference on every frame, byte for byte."


class Inspector:
    """One inspected session (and, with ``against``, the reference's beside it), shown as a widget or text."""

    def __init__(
        self,
        argv: Sequence[str],
        script: Sequence[Frame],
        against: Sequence[str] | None = None,
        timeout: float = REPLY_TIMEOUT,
        settle: float = SETTLE,
    ) -> None:
        self.argv = list(argv)
        self.timeout, self.settle = timeout, settle
        self.timeline = run(self.argv, script, timeout, settle)
        self.reference = run(list(against), script, timeout, settle) if against else None
        self.diff = compare(self.timeline, self.reference) if self.reference else None
        # Where no rule tells the two apart, the first difference in bytes is still shown: never "same"
        # for two sessions that differ (a field the rules above do not compare, a name, an error's words).
        self.content = content_difference(self.timeline, self.reference) if self.reference and not self.diff else None
        self.live: Recorder | None = None
        self._timer: threading.Timer | None = None

    # -- views ----------------------------------------------------------------------------------
    def html(self) -> str:
        """The recorded session(s) as HTML: the timeline, or two columns and the first difference."""
        if self.reference is None:
            return f'{STYLE}<div class="mcp-insp">{LEGEND}{timeline_html(self.timeline)}</div>'
        first = self.diff or self.content
        mark = first.learner or first.sent if first else None
        theirs = first.reference if first else None
        return (
            f'{STYLE}<div class="mcp-insp">{diff_html(self.diff, self.content)}{LEGEND}<div class="mcp-cols">'
            f'<div class="mcp-col mcp-learner"><b>this server</b>{timeline_html(self.timeline, mark)}</div>'
            f'<div class="mcp-col mcp-reference"><b>the reference</b>{timeline_html(self.reference, theirs)}</div>'
            "</div></div>"
        )

    def text(self) -> str:
        """The plain-text transcript: what a notebook without widgets shows."""
        parts = [self.timeline.text()]
        if self.reference is not None:
            parts.append("the reference:\n" + self.reference.text())
            parts.append(self.diff.text() if self.diff else self.content.text() if self.content else SAME)
        return "\n\n".join(parts)

    def live_html(self) -> str:
        if self.live is None:
            return '<div class="mcp-insp mcp-live"><i>Type a line and press Send: a live copy of the server.</i></div>'
        return f'{STYLE}<div class="mcp-insp mcp-live">{timeline_html(self.live.timeline)}</div>'

    # -- the live server --------------------------------------------------------------------------
    def send(self, line: str) -> list[Event]:
        """Send one raw line to the live server (started on first use); returns what it added."""
        if self.live is None or self.live.closed:
            self.live = Recorder(self.argv, self.timeout, self.settle)
            _LIVE.add(self.live)
        events = self.live.send(line)
        self._idle_timer()
        return events

    def end_live(self) -> None:
        """Close the live server's stdin and record how it ends; it is always ended."""
        if self._timer is not None:
            self._timer.cancel()
        if self.live is not None:
            self.live.close()

    def _idle_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(IDLE, self.end_live)
        self._timer.daemon = True
        self._timer.start()

    # -- the widget -------------------------------------------------------------------------------
    def widget(self) -> Any:
        import ipywidgets as widgets

        recorded = widgets.HTML(self.html(), layout=widgets.Layout(width="100%"))
        recorded.add_class("mcp-recorded")
        line = widgets.Text(
            placeholder='a raw line: hello?  or  {"jsonrpc":"2.0","id":"7","method":"ping"}',
            layout=widgets.Layout(width="60%"),
        )
        line.add_class("mcp-line")
        send = widgets.Button(description="Send", button_style="primary", tooltip="send the line to a live server")
        send.add_class("mcp-send")
        end = widgets.Button(description="Close stdin", tooltip="end the live server the way a client does")
        live = widgets.HTML(self.live_html(), layout=widgets.Layout(width="100%"))
        live.add_class("mcp-live-view")

        def on_send(_: Any) -> None:
            self.send(line.value)
            live.value = self.live_html()

        def on_end(_: Any) -> None:
            self.end_live()
            live.value = self.live_html()

        send.on_click(on_send)
        end.on_click(on_end)
        box = widgets.VBox([recorded, widgets.HBox([line, send, end]), live])
        box.add_class("mcp-inspector")
        return box

    def bundle(self) -> dict[str, Any]:
        """The display data: the widget where a front end renders it, the transcript everywhere."""
        try:
            data = self.widget()._repr_mimebundle_()
        except ImportError:
            data = {}
        data = dict(data or {})
        data["text/plain"] = self.text()
        return data


def show(argv: Sequence[str], script: Sequence[Frame], against: Sequence[str] | None = None, **options: Any) -> None:
    """Display an inspector in the running notebook (plain text outside IPython)."""
    view = Inspector(argv, script, against, **options)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - the course runs in IPython
        print(view.text())
        return
    if get_ipython() is None:
        print(view.text())
        return
    display(view.bundle(), raw=True)


@atexit.register
def _end_all() -> None:
    for recorder in list(_LIVE):
        recorder.close()
