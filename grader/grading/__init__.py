"""The instructor's side of the course: grading outside the learner's kernel. Never imported by a notebook.

- ``submission``  a submitted notebook read as data: the learner's ``%%module`` files, handed-in files
- ``sandbox``     how the learner's code runs when graded: bubblewrap, a user of its own, limits
- ``secret``      the course secret (written by ``mcp-lab course init``) and the keys derived from it
- ``hidden``      the hidden checks of every stage, drawn from those keys
- ``grade``       one submission graded: the public and hidden checks of every cell, and flags
- ``flags``       what grading reports beside a score: the answer key used, writes refused, ...
- ``nbhook``      the nbgrader preprocessor that puts the verdicts where nbgrader's own would go
- ``command``     ``mcp-lab course grade STAGE [--jobs N]``

A learner install for a graded class carries none of this package.
"""
