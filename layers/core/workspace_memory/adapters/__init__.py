"""Adapters behind the ports: DynamoDB (the only place its expressions are spelled), the in-memory table for
unit tests, KMS encryption, the Temporal client and payload codec."""
