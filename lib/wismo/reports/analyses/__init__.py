"""The analyses: the deterministic comparison, the calibration, the scale sweep, breaking points, call strategy."""
