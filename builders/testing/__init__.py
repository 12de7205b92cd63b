"""Real test doubles shared by tests and benchmarks (MP4 writers, a local chat-completions server)."""
