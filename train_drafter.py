"""Train a domain drafter for a target: self-distill (if needed) -> train -> evaluate -> export to the pool.

    accelerate launch --config_file recipes/accelerate_configs/single.yaml train_drafter.py --domain sql \
        [--drafter eagle3|llama|suffix] [--target ID_OR_PATH] [--budget-minutes N] [key=value ...]

(installed: `train_drafter ...`; the code is training/train_drafter.py)
"""

import sys

from training.train_drafter import main

if __name__ == "__main__":
    sys.exit(main())
