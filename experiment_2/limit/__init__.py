"""Experiment 3C, the small-λ limit: the laws, the per-variant summary, the REPORT blocks and the swap's top-1 cost."""
