"""``python -m bot``: the same as the ``vram-bot`` command."""

import sys

from bot.cli import main

sys.exit(main())
