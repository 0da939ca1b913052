Stage 08 of MCP Wire Lab, as text (see grader/course/notebook.py for the cell syntax).

# %% [markdown] id=title
# # Stage 08: the clinic, diagnosis
#
# Twelve servers are waiting for you. Each one is the course's shop server with exactly one
# defect, of the kind real servers ship with. You get what a host or a user would report, the
# *symptom*, and a way to run each server. You find the rule it breaks.
#
# The cases are yours: which server hides behind `case-01` is drawn for you alone, and kept in
# `clinic_seed.txt` beside this notebook (it is handed in with it, so the grader sees your cases).

# %% setup id=setup
from grader.course import clinic, lab

lab.setup("08")
diagnosis = {}  # your answers: the cell under "Your turn" fills it

# %% [markdown] id=method
# ## 1. A method
#
# A senior engineer does not guess from the symptom. They look at the wire:
#
# 1. **Run the checker.** `mcp-lab check` probes the server and lists every rule it breaks. When
#    one defect makes several checks fail, read the *first* failure: a missing flush, say, also
#    makes `initialize` time out, but the rule broken is the flush.
# 2. **Watch the frames** that show the failure: send the request the checker names, and read
#    what comes back, byte for byte.
# 3. **Name the rule** with the checker's id for it (`stdout-flush`, `id-echo`, ...): that id is
#    your answer. Each id stands for a rule of the spec, MCP 2025-11-25 (or of JSON-RPC 2.0, which
#    it builds on); the report quotes it.
#
# A worked example, on a server that is not one of your cases. Its symptom: *Go clients report
# "invalid trailing data at the end of stream"; other hosts are fine.*

# %% id=example-check
clinic.report(lab.exhibit("crlf"))

# %% [markdown] id=example-watch
# The report names `stdout-line-ending`, as a warning (WARN, not FAIL): the checker fails a
# server only where the spec says MUST, and the rule here is what strict clients enforce. The
# frames confirm it: each line ends in `\r\n` (the `\r` shows at the end of every reply), and the
# stdio transport delimits messages by `\n`. Your cases each break a rule the report marks FAIL.

# %% id=example-frames
lab.watch(lab.exhibit("crlf"), [lab.request("ping", id=1)])

# %% [markdown] id=example-answer
# So the answer for that server would be `"stdout-line-ending"`. The checks and the rules behind
# them:

# %% id=catalogue
clinic.catalogue()

# %% [markdown] id=cases
# ## 2. Your cases
#
# Each line is a case and its symptom. `clinic.command("case-01")` is the command that runs it;
# `clinic.report(...)` and `lab.watch(...)` take that command, and so does the checker in a
# terminal (the cell below prints the exact line for each case).

# %% id=list-cases
clinic.symptoms()
print()
for case in clinic.case_names():
    print(" ".join(["mcp-lab check --"] + clinic.command(case)))

# %% id=try-a-case
clinic.report(clinic.command("case-01"))

# %% [markdown] id=inspect-case
# The wire inspector puts a case beside the reference server: the same frames to both, and the
# first frame where they differ, with the rule it would break. Use it to confirm what the checker
# says (change the case name, or pass your own frames as a second argument):

# %% id=inspect-case-run
lab.inspect(clinic.command("case-01"), against=lab.reference())

# %% [markdown] id=task
# ### Your turn: `diagnosis`
#
# A dict with one entry per case: the case's name, and the id of the check its server breaks.
#
# ```python
# diagnosis = {
#     "case-01": "stdout-line-ending",
#     "case-02": "...",
# }
# ```
#
# Each case is worth one point. The visible test checks only that each answer is a check id; the
# grader knows the right ones.

# %% solution id=diagnosis
### BEGIN SOLUTION
diagnosis = clinic.answer_key(clinic.seed())
### END SOLUTION

# %% test id=test_case_01 points=1
clinic.check_answer_format(diagnosis, "case-01")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-01")
### END HIDDEN TESTS

# %% test id=test_case_02 points=1
clinic.check_answer_format(diagnosis, "case-02")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-02")
### END HIDDEN TESTS

# %% test id=test_case_03 points=1
clinic.check_answer_format(diagnosis, "case-03")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-03")
### END HIDDEN TESTS

# %% test id=test_case_04 points=1
clinic.check_answer_format(diagnosis, "case-04")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-04")
### END HIDDEN TESTS

# %% test id=test_case_05 points=1
clinic.check_answer_format(diagnosis, "case-05")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-05")
### END HIDDEN TESTS

# %% test id=test_case_06 points=1
clinic.check_answer_format(diagnosis, "case-06")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-06")
### END HIDDEN TESTS

# %% test id=test_case_07 points=1
clinic.check_answer_format(diagnosis, "case-07")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-07")
### END HIDDEN TESTS

# %% test id=test_case_08 points=1
clinic.check_answer_format(diagnosis, "case-08")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-08")
### END HIDDEN TESTS

# %% test id=test_case_09 points=1
clinic.check_answer_format(diagnosis, "case-09")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-09")
### END HIDDEN TESTS

# %% test id=test_case_10 points=1
clinic.check_answer_format(diagnosis, "case-10")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-10")
### END HIDDEN TESTS

# %% test id=test_case_11 points=1
clinic.check_answer_format(diagnosis, "case-11")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-11")
### END HIDDEN TESTS

# %% test id=test_case_12 points=1
clinic.check_answer_format(diagnosis, "case-12")
### BEGIN HIDDEN TESTS
clinic.check_diagnosis(diagnosis, "case-12")
### END HIDDEN TESTS

# %% [markdown] id=end
# ## What you have now
#
# A way to read a server that will not connect: the checker's first failure, then the frames. In
# stage 09 you go one step further and repair servers from their source.
