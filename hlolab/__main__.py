import sys

from hlolab.cli import main

sys.exit(main())
