"""What a reader sees: charts, tables, their display, the notebook build, the index and its key figures."""
