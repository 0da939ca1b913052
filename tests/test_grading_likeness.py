"""``copied`` and ``similar`` flag only answers with room for variety.

Stage 09's smallest repairs are the same for everyone: two honest learners who hand in the instructor's
own fix must not flag each other. A submission whose own part is large (stage 02's handle_line, a
repair that rewrites a server) is still fingerprinted, so a copy of it is still caught.
"""

from __future__ import annotations

from grader.grading.likeness import MIN_VARIETY, fingerprints, own_tokens
from grader.grading.repairs import handed_out, healthy_source

SERVERS = range(1, 6)


def test_the_smallest_repairs_leave_no_fingerprint() -> None:
    handed = {f"repair_{n}.py": handed_out(n) for n in SERVERS}
    repaired = {f"repair_{n}.py": healthy_source(n) for n in SERVERS}
    for n in SERVERS:
        assert own_tokens(healthy_source(n), handed_out(n)) < MIN_VARIETY, n
    assert fingerprints(repaired, {}, handed) == {}  # two learners with these files: no flag between them


def test_a_repair_with_room_for_variety_is_fingerprinted() -> None:
    handed = {"repair_1.py": handed_out(1)}
    rewrite = (
        healthy_source(1)
        + "\n\n"
        + "\n".join(
            f"def helper_{i}(message, limit={i}):\n    return [part for part in message.split() if len(part) > limit]\n"
            for i in range(4)
        )
    )
    assert own_tokens(rewrite, handed_out(1)) >= MIN_VARIETY
    prints = fingerprints({"repair_1.py": rewrite}, {}, handed)
    assert set(prints) == {"copied", "similar"}
    renamed = rewrite.replace("helper_", "tool_").replace("part", "piece")
    again = fingerprints({"repair_1.py": renamed}, {}, handed)
    assert again["similar"] == prints["similar"] and again["copied"] != prints["copied"]


def test_written_modules_and_value_answers_are_fingerprinted_as_before() -> None:
    stub = {"server": "def handle_line(line):\n    raise NotImplementedError()\n"}
    written = {
        "server": "import json\n\ndef handle_line(line):\n"
        + "".join(f"    if line == {i!r}:\n        return json.dumps({{'id': {i}, 'ok': True}})\n" for i in range(8))
        + "    return None\n"
    }
    assert set(fingerprints(written, {}, stub)) == {"copied", "similar"}
    assert set(fingerprints({}, {"diagnosis": {"case-01": {"rule": "id-echo"}}}, {})) == {"copied", "similar"}
