"""The experiment's fixed clock (the article's): every "now" in the data and the instructions is this instant."""

CLOCK = "2026-10-08T12:00:00+00:00"
