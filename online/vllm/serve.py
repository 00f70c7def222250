"""vLLM's OpenAI server, launched so that it dies with the draftpool process that started it.

    <vLLM env python> -m online.vllm.serve <vllm.entrypoints.openai.api_server arguments>

Runs in vLLM's environment (VllmEngine starts it in its own process group). A watcher thread kills that group (the
server and vLLM's engine processes) once the parent is gone, killed or crashed, so no orphaned server keeps the
port, the memory or a GPU. Standard library and vllm only (draftpool/lifeline.py), like data_gen/vllm_worker.py.
"""

import runpy
import sys

from draftpool.lifeline import die_with_parent

if __name__ == "__main__":
    die_with_parent()
    sys.argv = ["vllm.entrypoints.openai.api_server", *sys.argv[1:]]
    runpy.run_module("vllm.entrypoints.openai.api_server", run_name="__main__", alter_sys=True)
