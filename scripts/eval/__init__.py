"""`make eval`'s external sets (scripts/eval_search.py): LoCoMo, read from a folder given on the command line."""
