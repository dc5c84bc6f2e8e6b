"""Tools that read every experiment: tables.md and the paper's generated files, summaries rebuilt from per-image arrays."""
