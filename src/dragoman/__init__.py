"""dragoman: high-throughput self-hosted machine translation on vLLM's async engine."""

__version__ = "0.1.0"
