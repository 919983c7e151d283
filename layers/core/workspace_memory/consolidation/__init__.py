"""Consolidation (docs/decisions/0086): a workspace's entries tidied by proposals a person decides."""
