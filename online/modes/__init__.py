"""The serving modes of online_adapt.py, each its wiring around the one serve loop (online/serve_loop.py): `spec`
(token drafting: auto / chain / tree with the pool's drafters and model-free members) and `lookahead` (step-level
lookahead reasoning with a Llama step drafter). vLLM serving is online/vllm_adapt.py."""
