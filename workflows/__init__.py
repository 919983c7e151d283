"""Temporal: the agent-turn workflow, its activities, the tool registry, model providers and the workers."""
