"""The OpenAI-compatible HTTP front end: request bodies and the queue (api.py), the decode loop's side of a request
(jobs.py), the ASGI edge (asgi.py) and the one read of uvicorn's private protocol (uvicorn_shim.py)."""
