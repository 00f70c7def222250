"""Build a target's default drafter pool, then fill pool.json with the domain x drafter held-out acceptance matrix.

    python build_pool.py [--target ID_OR_PATH] [--profile quick|full] [--drafters eagle3,suffix[,llama]]
                         [--domains sql,python,...] [key=value ...]

(installed: `build_pool ...`; the code is training/build_pool.py)
"""

import sys

from training.build_pool import main

if __name__ == "__main__":
    sys.exit(main())
