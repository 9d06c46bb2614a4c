"""MCP: wismo's own servers (servers) and the client side that starts, reaches and measures any server (client)."""
