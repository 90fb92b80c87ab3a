"""``python -m loadtest``: the same as the ``loadtest`` command."""

import sys

from loadtest.entry import main

sys.exit(main())
