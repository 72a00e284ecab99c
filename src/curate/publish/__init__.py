"""Stage publish: immutable, content-hashed releases in Hugging Face Hub format.

:mod:`curate.publish.release` builds one; ``card`` writes its dataset card, ``task_diff``
the changelog between versions, ``hub_push`` uploads it; ``cli`` holds the commands.
"""
