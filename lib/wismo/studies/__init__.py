"""Studies: the comparison and the accounting declared in a TOML file for any MCP servers (the article's is one)."""
