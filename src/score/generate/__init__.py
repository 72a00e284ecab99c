"""Generation: run models on the benchmark and write predictions the scorer reads.

The flow (``DESIGN.md``, "Generation")::

    task ──prompt──▶ messages (CREATE TABLE + 3 rows, note, today, ABSTAIN rule; sha256-pinned)
         ──retrieve (rag)──▶ top-k BM25 chunks of data/grounding + train-split examples
         ──model (OpenAI-compatible endpoint)──▶ raw output + finish reason + usage
         ──▶ predictions.jsonl (sorted, written atomically; a journal makes it resumable)

Modules, one concept each: :mod:`.database_facts` (what the prompt says about the
database, asked through the read-only executor), :mod:`.schema_text` (those facts as the
pinned schema text), :mod:`.template` (the fixed wording, pinned), :mod:`.prompt` (one
instance's messages), :mod:`.retrieval` (chunks and BM25), :mod:`.client` (chat calls with
retries), :mod:`.journal` (the resumable output files), :mod:`.generate` (the run) and
:mod:`.cli` (``sqlgold generate`` and ``sqlgold prompt``).

Generation imports ``score`` only, never ``curate``.  The ``openai`` and ``bm25s``
packages come with the optional extra ``generate`` and are imported inside the
functions that use them.
"""
