"""Servers the learner's code talks to: stage 00's pipe (:mod:`.pinger`) and stage 06's adversaries."""
