"""Stage verify: run the gold, apply the reference rules, check the answer.

- :mod:`curate.verify.gold`: the gold runs and meets the rules; the answer agrees;
- :mod:`curate.verify.reference_rules`: the rules themselves (pure checks on a result);
- :mod:`curate.verify.pair`: one gold / answer pair checked while editing (``sqlgold verify``);
- :mod:`curate.verify.concept_hints`: why an empty gold is empty (absent concept ids).
"""
