Stage 09 of MCP Wire Lab, as text (see grader/course/notebook.py for the cell syntax).

# %% [markdown] id=title
# # Stage 09: the clinic, repair
#
# Five servers, five bug reports. This time you get the source: each `repair_N.py` beside this
# notebook is a whole MCP server in one file, about a hundred lines, written the way many real
# servers are. Each has one defect. Find it, fix it in the file, and the checker grades the repair.

# %% setup id=setup
from grader.course import clinic, lab, repairs

lab.setup("09")

# %% [markdown] id=hand-out
# ## 1. The files
#
# The cell below writes the five files into this folder, once: running it again never overwrites
# your work. Open them in JupyterLab's file browser (double-click), edit, save (Ctrl+S).

# %% id=hand-out-files
for number, name in enumerate(repairs.hand_out(), 1):
    print(f"{name}: {repairs.DEFECTS[number - 1].symptom}")

# %% [markdown] id=method
# ## 2. How to work
#
# The method of stage 08, then a fix:
#
# 1. Run the checker on the file and read its first failure. One defect can make several checks
#    fail: a missing flush makes `initialize` time out too; a server that cannot echo an id right
#    fails the checks that need a working handshake.
# 2. Find the lines that break that rule. Every rule in the report (from MCP 2025-11-25 or
#    JSON-RPC 2.0) comes with its fix.
# 3. Change as little as you can: the grader accepts a repair of up to 12 changed lines, not a new
#    server.
# 4. Run the checker again. Done when it reports no failure (warnings are fine).

# %% id=check-one
clinic.report(lab.program("repair_1"))

# %% [markdown] id=by-code
# The cell below is where the course's own solution applies its repairs. In your copy it does
# nothing: make your repairs in the files.

# %% solution id=instructor_repairs
def instructor_repairs():
    ### BEGIN SOLUTION
    repairs.apply_solution()
    ### END SOLUTION


try:
    instructor_repairs()
except NotImplementedError:
    pass

# %% test id=test_repair_1 points=2
repairs.check_repair(1)

# %% test id=test_repair_2 points=2
repairs.check_repair(2)

# %% test id=test_repair_3 points=2
repairs.check_repair(3)

# %% test id=test_repair_4 points=2
repairs.check_repair(4)

# %% test id=test_repair_5 points=2
repairs.check_repair(5)

# %% [markdown] id=end
# ## The end of the course
#
# You have built an MCP server and a client from the wire up, kept stdout clean, and read and
# repaired servers that others broke. The checker you used is yours to keep: point it at any stdio
# server you meet.
#
# ```sh
# .venv/bin/mcp-lab check -- COMMAND [ARGS...]
# ```
