"""Experiment 1's own modules: the reconstruction metrics, its part of an all-mask pass, its summary and verdicts."""
