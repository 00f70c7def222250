"""The trainer process beside the server: its settings (config.py), the server's handle (process.py), the process
body (child.py), the token drafters' update rounds (token_trainer.py), the guard, the weight boards and the hot swap,
the exported pool versions, the trainer's share of the machine (throttle.py), its signals and fork server."""
