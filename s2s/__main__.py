"""``python -m s2s``: the ``s2s`` command (``s2s.cli.main``).

Python puts the working directory first on ``sys.path`` for ``-m``; it is
dropped (as ``python -P`` would), so a user's ``inspect.py`` there cannot
stand in for the standard library's while s2s runs.
"""

import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .cli.main import main

sys.exit(main())
