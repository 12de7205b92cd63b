"""``python -m builders.integrations.vlmevalkit PATH/TO/run.py --data BQA_16frame --model ...``."""

import sys

from builders.integrations.vlmevalkit import run

run(sys.argv[1:])
