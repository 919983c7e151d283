"""The MCP server: a user's delegated key session offered to an MCP-capable assistant as tools (docs/mcp.md).

The document, entry and memory-tool tools act as that user's agent runtime on the automation routes (each call
a fresh admission under the key session); `ask_agent` runs an ordinary human turn on the user's own route,
narrowed by the same key session. Nothing here touches the table: every effect goes through the API's routes,
fences and receipts, and stable error codes reach the assistant as tool errors.
"""
