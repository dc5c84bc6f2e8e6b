"""Experiment 3A/3B, residual scaling: the λ-sweep summary, verdicts, figures and REPORT blocks."""
