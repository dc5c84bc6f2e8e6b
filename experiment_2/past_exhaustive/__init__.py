"""The work past the original study: what can be measured where the exhaustive 2^L pass cannot go.

Exact low orders at both corners of the cube (:mod:`.low_orders`, step 8), the sampling estimators with their
intervals (:mod:`.sampling`: random sub-cubes and Walsh summaries from random masks; applied per image by
:mod:`.sampled`), what a run will cost (:mod:`.cost`), what the estimates decide (:mod:`.verdicts`), and the
estimators' validation on exhaustive tables and on synthetic functions at depth (:mod:`.validation`, steps 11 and 15),
and the steps' bodies (:mod:`.evaluation`, step 8; :mod:`.depth_trend`, step 12; :mod:`.validation.exhaustive`, step 11;
:mod:`.validation.stress`, step 15). Steps 8, 11, 12 and 15 are its entry points: each step file holds its question and
its flags, and hands the checked flags to its body's ``run``.
"""
