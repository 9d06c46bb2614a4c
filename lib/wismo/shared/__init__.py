"""What the MCP client and the servers both stand on: the pinned protocol revision, the shape of a design's
investigation (its entry call, links, cursor and how each step reads a result), and the one walk of it."""
