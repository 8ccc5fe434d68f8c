"""``python -m gpusim``: the ``gpusim`` command (gpusim.cli) without the console script."""

import sys

from gpusim.cli import main

sys.exit(main())
