"""Experiment 2, the interaction-order spectrum: the evaluation, per-batch arrays, summary, verdicts, figures and REPORT blocks."""
