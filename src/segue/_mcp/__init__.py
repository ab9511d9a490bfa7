"""MCP both ways (SPEC.md §9): ``segue mcp serve`` offers session_history to any MCP client;
servers in the ``mcp.servers`` setting give their tools to segue's agents. The ``mcp`` SDK
is an optional extra, imported only where a server or client really runs."""
