"""The edge to agents: the MCP server, harness set-up and its checks, and the
store summaries a tool description carries."""
