"""Quality checks of the servers and the reports: hostile-input fuzzing and byte-identical outputs."""
