"""Test suites: database variants that tell a gold from its near misses (test-suite
accuracy, after Zhong, Yu and Klein, 2020), built for OMOP CDM.

``suite_file`` is the suite on disk; ``neighbours`` makes near misses of a gold on
sqlglot's tree; ``value_pool`` and ``variant_data`` make small consistent CDM databases;
``distill`` keeps the variants that tell golds from their neighbours; ``build`` is
``sqlgold suite build``.
"""
