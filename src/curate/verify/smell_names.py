"""The gold smells' names and actions, with no import (the CLI's options list them while
``sqlgold --help`` stays fast); the checks are :mod:`curate.verify.smells`."""

#: The smells and whether each drops (True) or warns (False).
DROPS = {
    "duplicate_rows": False,
    "numbers_as_text": False,
    "sort_direction": False,
    "float_order": False,
    "shuffled_copy": True,
}
SMELLS = tuple(DROPS)
#: The smells that rerun the gold on a shuffled copy of the database: off unless asked
#: (the copy, and one more run of every gold).
RERUN = ("float_order", "shuffled_copy")
