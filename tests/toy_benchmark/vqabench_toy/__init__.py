"""Toy: which colour does a short sentence name? A third benchmark, registered by its entry point only."""
