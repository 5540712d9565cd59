"""A continuous-batching server under load, simulated step by step: request lengths and
arrivals (lengths, arrivals), the KV cache's blocks (kv_blocks), a scheduler like vLLM's
(scheduler), the seconds of one step (step_time), speculative decoding (speculative) and
a shared prefix's cache (prefix_cache), the simulation (simulate) and its results
(results); load_request checks the inputs where they enter."""
