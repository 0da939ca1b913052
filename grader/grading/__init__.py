"""The instructor's side of the course: grading outside the learner's kernel. Never imported by a notebook.

- ``submission``  a submitted notebook read as data: the learner's ``%%module`` files, handed-in files
- ``sandbox``     how the learner's code runs when graded: bubblewrap, a user of its own, limits
- ``secret``      the course secret (written by ``mcp-lab course init``) and the keys derived from it
- ``hidden``      the hidden checks of every stage, drawn from those keys
- ``grade``       one submission graded: the public and hidden checks of every cell, and flags
- ``flags``       what grading reports beside a score: the answer key used, writes refused, ...
- ``plainfiles``  a submission is plain files: links, devices and copies of course files refused
- ``answers``     answers that are values, checked for their shape before any check reads them
- ``refusals``    what the guard refused, read from a pipe the grader owns
- ``likeness``    normalised answers' fingerprints, for ``copied`` and ``similar``
- ``text``        learner-made text made safe to print (no control characters)
- ``sweep``       what a grading process leaves, removed (also after a crash or a kill)
- ``collect``     ``nbgrader collect`` that never follows a link out of the exchange, and collects
                  only what the student's own uid made
- ``nbhook``      the nbgrader preprocessor that puts the verdicts where nbgrader's own would go
- ``command``     ``mcp-lab course grade STAGE [--jobs N]``

A learner install for a graded class carries none of this package.
"""
