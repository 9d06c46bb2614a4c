"""The floor every package stands on: where things live, the fixed clock, the design registry, JSON forms, errors."""
