"""Memory entries: supersession chains, the human's routes (`service`) and the agent's tools."""
