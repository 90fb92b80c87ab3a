"""``python -m loadtest``: the same as the ``loadtest`` command."""

import sys

from loadtest.cli import main

sys.exit(main())
