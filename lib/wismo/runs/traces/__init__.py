"""Agents' OpenTelemetry traces read into conversations, the chains of tool calls a model rebuilds, and their cost.

The modules are imported by name: otlp (reading), conventions (what a span is), conversations (grouping), chains
(chains, links and the modelled saving), recording (wismo's own loop traced).
"""
