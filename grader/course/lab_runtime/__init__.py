"""The course's own small programs that run beside the learner's code: copied into every stage's runtime.

A stage's code runs in a child process whose import path holds only the learner's folder and that
stage's *runtime*: the reference modules the stage may lean on (never the ones it teaches) and
this package. Nothing here imports ``grader``: in a grading sandbox there is no ``grader`` to import.

- ``guard``     an audit hook installed before the learner's code runs: it refuses the answer key
- ``wire``      how values cross the pipe between the grader and the harness (tagged JSON)
- ``harness``   the learner's module in a process of its own, its functions called over a pipe
- ``run``       the learner's file run as a program (a server) under the guard
- ``host``      the course's server with one piece taken from the learner (stages 01, 02, 04)
- ``http_host`` the learner's HTTP server (stage 12), reached through this process's pipes (the
                sandbox keeps its own network namespace)
- ``peers``     servers the learner's code talks to (stage 00's pipe, stage 06's adversaries)
- ``polluters`` a library that prints, for stage 07
"""
