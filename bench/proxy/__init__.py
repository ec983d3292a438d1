"""Proxy overhead benchmark: safeagents serve against direct upstream access and LiteLLM.

.venv/bin/python -m bench.proxy.run --quick   # a fast pass (about two minutes)
.venv/bin/python -m bench.proxy.run           # the full run, writes bench/RESULTS.md
"""
