"""``python -m segue`` runs the command line."""

import sys

from segue._cli.entry import main

sys.exit(main())
