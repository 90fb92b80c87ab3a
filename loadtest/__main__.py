"""``python -m loadtest``: the same as the ``loadtest`` command."""

import sys

from loadtest.command_line.entry import main

sys.exit(main())
