"""Benchmarks, profiling and the GPU check: tools that measure the core on this machine, not steps of an experiment."""
