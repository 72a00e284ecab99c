"""Grounding documents for retrieval, generated from the database and the train split.

:mod:`curate.grounding.documents` writes them; ``schema_doc``, ``vocabulary_doc``,
``sql_notes`` and ``examples_doc`` each render one document.
"""
