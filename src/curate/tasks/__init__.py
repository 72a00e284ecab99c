"""Stages tier and validate: the task record of a kept gold, its tier and features, and
what curation decided."""
