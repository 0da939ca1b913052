"""The gallery over Streamable HTTP: a healthy HTTP shop server (``base.py``) and exhibits that each break one rule.

Each exhibit is a program: ``python grader/gallery/over_http/NAME.py [--port N]`` (or ``mcp-lab gallery
run NAME``) listens on 127.0.0.1 and prints its URL on stderr; ``mcp-lab check --url URL`` then
judges it. The catalogue (symptoms, explanations, the check each must fail) is in
:mod:`grader.gallery`, beside the stdio exhibits'.
"""
