"""Subcommands of the ``vqabench`` CLI: one module each, exposing ``register(subparsers)``."""
