"""The MCP client side: connect to a design's server, call its tools, follow its investigation, check its contract."""
