"""The translation engine: prompts, vLLM's async engine, and its lifecycle."""
