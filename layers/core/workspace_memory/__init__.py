"""workspace_memory: the core shared by every function and the worker (the Lambda layer): domain services,
the ports they speak through, and the adapters behind them."""
