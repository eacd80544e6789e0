"""``python -m tokstat.cli``: the ``tokstat`` command."""

import sys

from . import main

sys.exit(main())
