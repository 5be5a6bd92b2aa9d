"""python3 -m fitalloc_cli (from the python/ folder of the source tree): the command without a
launcher; the library and fitalloc-replay then come from FITALLOC_LIB and FITALLOC_REPLAY (or
fitalloc-replay from PATH)."""

import sys

from .cli import main

sys.exit(main())
