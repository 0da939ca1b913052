"""The examiner of MCP Wire Lab, in parts that a reader can tell apart in the tree:

- ``grader.checker``  ``mcp-lab check``: the conformance checker, for any stdio MCP server
- ``grader.gallery``  deliberately broken servers, one defect each
- ``grader.course``   the course as the learner's notebooks import it (the %%module magic, the
                      inspector, the public checks, the learner's code run as child processes)

``grader.cli`` is the ``mcp-lab`` command line over all of them.
"""
