"""Accounting: tokens counted offline and how a client frames them (tokens), and what a conversation costs (cost)."""
