"""The course machinery: stage notebooks from text, the learner's workspace, the instructor's course.

The stage notebooks live in ``notebooks/NN-name/NN-name.py`` as text (see :mod:`.notebook`); they
become nbgrader source notebooks in a course folder, and nbgrader makes everything else from there:
the learner's workspace holds nbgrader's release, never a hand-kept copy. The notebooks import
:mod:`grader.course.lab`, which runs the learner's code as a real server process through the
checker's probe harness.
"""
