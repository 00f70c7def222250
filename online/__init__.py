"""Online adaptation of drafters while serving: feedback, updaters (OGD, optimistic, Hedge ensemble), hot-swap."""
