"""``python -m claude_sidecar`` runs the command line."""

import sys

from claude_sidecar.commands.main import main

sys.exit(main())
