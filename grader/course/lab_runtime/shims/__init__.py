"""Stand-ins for the reference module a stage teaches, made of the learner's own module.

In the runtime of stage 01, ``reference/framing.py`` is :mod:`.framing` here: the course's server
then frames with the learner's functions, and ``from reference.framing import encode`` in the
learner's file finds their own ``encode`` (so the answer key cannot be borrowed). Likewise
``reference/catalog.py`` in stage 04 is :mod:`.catalog`, the learner's tool declarations;
``reference/resources.py`` and ``reference/prompts.py`` in stage 10 are the learner's
``shop_resources.py`` and ``shop_prompts.py``; ``reference/writes.py`` and ``reference/audit.py`` in
stage 11 are their ``shop_writes.py`` and ``shop_audit.py``, and ``reference/confirm.py`` (the
question before a 2026-07-28 ``cancel_order``) their ``shop_state.py``'s ``ask_first``, with
``reference/mrtr.py`` holding only the process's key and clock.
"""
