"""The toy's own vocabulary: the colours a question may ask about."""

COLOURS = ("red", "green", "blue", "yellow")
NAME = "Toy"
SPLITS = ("train", "test")
