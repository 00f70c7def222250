"""Online learning math, one file per algorithm: OGD (ogd.py), optimistic OGD (optimistic.py), the Hedge ensemble
(ensemble.py), draft-vocabulary adaptation (vocab.py) and the online distillation losses (losses.py)."""
