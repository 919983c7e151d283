"""The workspace memory document: its versions (`service`), the memory policy, retention, purge and
the pure line-edit engine."""
