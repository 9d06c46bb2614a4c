"""The floor every package stands on: paths, the fixed clock, kinds of numbers, JSON forms, errors, helpers."""
