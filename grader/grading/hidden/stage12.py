"""Stage 12's hidden checks: the same rules on values drawn for the learner (the token, the origins,
a session id never issued, the other session's revision, the request ids, the tool calls), so that
a server that recognises the public cells' values passes none of these."""

import random

from grader.course.checks import stage05
from grader.course.checks import stage12 as s
from grader.course.work import Work
from reference.lifecycle import SUPPORTED

from . import fresh_id, hidden


def _calls(rng: random.Random, count: int) -> list[stage05.Call]:
    tools = rng.sample(stage05.SHOP_TOOLS, count)
    return [(tool, rng.choice(stage05.hidden_arguments(rng, tool))) for tool in tools]


def _ids(rng: random.Random, count: int) -> list[object]:
    found: list[object] = []
    while len(found) < count:  # distinct as JSON values: 7 and "7" would be one id to a careless server
        drawn = fresh_id(rng)
        if str(drawn) not in map(str, found):
            found.append(drawn)
    return found


@hidden("12", "test_post")
def post(work: Work, rng: random.Random) -> None:
    s.check_modern_post(work, _ids(rng, 2), _calls(rng, 2), s.drawn_session_id(rng))


@hidden("12", "test_headers")
def headers(work: Work, rng: random.Random) -> None:
    name, other = rng.sample([*stage05.SHOP_TOOLS, "Grüße", "naïve tool", "x y"], 2)
    (id,) = _ids(rng, 1)
    cases = s.header_cases(name, other, id)
    rng.shuffle(cases)
    s.check_header_problem(work, cases)
    s.check_headers_served(work, rng.choice([t for t in stage05.SHOP_TOOLS if t != "count_orders"]), id)


@hidden("12", "test_sessions")
def sessions(work: Work, rng: random.Random) -> None:
    s.check_post(work, _ids(rng, 2), _calls(rng, 1))
    other = rng.choice([v for v in SUPPORTED if v != "2025-11-25"])
    versions = [f"20{rng.randint(30, 99)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}", rng.choice(["latest", "2025"])]
    s.check_sessions(work, s.drawn_session_id(rng), other, versions)


@hidden("12", "test_origin")
def origin(work: Work, rng: random.Random) -> None:
    foreign, loopback = s.drawn_origins(rng)
    s.check_origin(work, foreign, loopback)


@hidden("12", "test_sse")
def sse(work: Work, rng: random.Random) -> None:
    text = "".join(rng.choice("ab\n\r: é桜") for _ in range(rng.randint(5, 30)))
    id_one, id_two = _ids(rng, 2)
    s.check_sse_event(work, [{"jsonrpc": "2.0", "id": id_one, "result": {"text": text}}])
    ((tool, arguments),) = _calls(rng, 1)
    call = s.message("tools/call", id_two, {"name": tool, "arguments": arguments})
    s.check_sse_stream(work, [s.message("ping", id_one), call])


@hidden("12", "test_auth")
def auth(work: Work, rng: random.Random) -> None:
    token = s.drawn_token(rng)
    wrong = [f"Bearer {s.drawn_token(rng)}", *s.wrong_tokens(token)]
    s.check_auth(work, token, wrong)


@hidden("12", "test_mcp_lab_check")
def whole(work: Work, rng: random.Random) -> None:
    token = s.drawn_token(rng)
    with s.running(work, token) as bridge:
        for version in ("2025-11-25", "2025-06-18", "2025-03-26"):  # the older clients' sessions
            s.check_session_calls(bridge, token, version, _calls(rng, 3), _ids(rng, 4))


@hidden("12", "test_sdk_client")
def sdk(work: Work, rng: random.Random) -> None:
    token = s.drawn_token(rng)
    with s.running(work, token) as bridge:
        s.check_sdk(bridge, token, _calls(rng, 2), "auto")
        s.check_sdk(bridge, token, _calls(rng, 1), "legacy")


@hidden("12", "test_inspector")
def inspector(work: Work, rng: random.Random) -> None:
    token = s.drawn_token(rng)
    with s.running(work, token) as bridge:
        s.check_inspector(work, bridge, token, _calls(rng, 1))
