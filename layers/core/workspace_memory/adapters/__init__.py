"""Adapters behind the ports: DynamoDB (the only place its expressions are spelled), KMS
encryption, the Temporal client and payload codec."""
