"""Online adaptation attached to a vLLM server: the engine (engine.py), the proxy and adapter (adapt.py), and what
runs inside vLLM's environment (serve.py, reload.py, shim.py: standard library, torch and vllm only)."""
