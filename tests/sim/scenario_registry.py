"""scenario_registry: the scenarios by name (SCENARIOS, filled by @scenario
as scenarios.py and the modules it imports load) and what several of them
share (VLLM_ARGV). Not thread-safe while registering; read-only after.
"""

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def get(name):
    if name not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}")
    return SCENARIOS[name]


VLLM_ARGV = ("python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
             "meta-llama/Llama-3.1-405B-Instruct-FP8", "--tensor-parallel-size", "8")
