"""reference.framing, in stage 01's runtime: the learner's framing.py stands in for the answer key.

The course's server reads, decodes, encodes and writes every frame with the learner's four
functions. Every framing failure is a ValueError (the lesson's contract), so that is what the
server catches as a frame error.
"""

import framing as _learner  # the learner's framing.py, first on the import path

FrameError = ValueError
MAX_LINE_BYTES = 10 * 1024 * 1024
encode = _learner.encode
decode = _learner.decode
read_frame = _learner.read_frame
write_frame = _learner.write_frame
