"""Comparison profiles: one module per rule, each a pure function of
(gold result, predicted result, task flags) returning a
:class:`~score.comparison.profiles.base.Verdict`.
"""
