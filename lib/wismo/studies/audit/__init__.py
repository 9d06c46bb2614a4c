"""`wismo tokens`: what any MCP server puts in a model's context, measured, tabulated and compared."""
