"""Drafter models: the EAGLE-3 head and the independent Llama drafter presets."""
