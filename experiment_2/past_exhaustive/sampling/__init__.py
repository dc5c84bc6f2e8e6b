"""Estimators past the exhaustive 2^L pass: random sub-cubes (the mean Möbius coefficient energy of every order up to
the sub-cube's size, unbiased) and Walsh summaries from random masks (variance, influence, noise stability and the
exact-degree weights, with intervals). Import the functions from their modules (``experiment_2.past_exhaustive.sampling.subcubes``,
``experiment_2.past_exhaustive.sampling.walsh``); this package imports nothing on its own."""
