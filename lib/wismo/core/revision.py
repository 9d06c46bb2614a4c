"""The MCP protocol revision both sides speak, and no other (the context-budget case study: "Pin the revision")."""

PINNED_REVISION = "2025-11-25"
