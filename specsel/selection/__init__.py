"""Online drafter selection: the selector the decode loop calls, learners, the delayed-feedback game, estimators."""
