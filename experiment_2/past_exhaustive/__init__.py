"""The work past the original study: what can be measured where the exhaustive 2^L pass cannot go.

Exact low orders at both corners of the cube (:mod:`.low_orders`, step 8), the sampling estimators with their
intervals (:mod:`.sampling`: random sub-cubes and Walsh summaries from random masks; applied per image by
:mod:`.sampled`), what a run will cost (:mod:`.cost`), what the estimates decide (:mod:`.verdicts`), and the
estimators' validation on exhaustive tables (:mod:`.validation`, step 11). Steps 8, 11 and 12 are its entry points.
"""
