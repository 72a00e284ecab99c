"""Stage write: the task file and the curation report, written atomically."""
