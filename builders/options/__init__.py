"""Command-line option helpers every layer may use (argparse and the standard library only, so any
command's ``--help`` stays cheap): :mod:`.numbers`, the ranges of numeric options."""
