"""Governance of what is stored and told: redaction before storage and the ids-only change feed."""
