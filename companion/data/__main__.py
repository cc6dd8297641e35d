"""``python -m companion.data`` -- see :mod:`companion.data.cli`."""

import sys

from .cli import main

sys.exit(main())
