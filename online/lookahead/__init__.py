"""Serving lookahead reasoning while the trainer adapts the step drafter: the server (server.py), the mode's wiring
(mode.py), the step trainer (step_trainer.py) and its DPO / SFT updates (dpo.py, sft.py)."""
