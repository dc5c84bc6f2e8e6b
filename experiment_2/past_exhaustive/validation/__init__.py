"""The estimator validation of step 11: exhaustive tables and exact checks (:mod:`.tables`), seeded replications of
the sampling estimators on those tables and the verdict rule (:mod:`.replications`)."""
