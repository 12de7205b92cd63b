"""``python -m builders.cli``: the same as the ``vqabench`` command."""

import sys

from builders.cli import main

sys.exit(main())
