"""Workspaces and who may act in them: membership and rights, key sessions, and deleting a workspace
(the route's service and its contract with the deletion workflow)."""
