"""``python -m s2s``: the ``s2s`` command (``s2s.cli.main``)."""

import sys

from .cli.main import main

sys.exit(main())
