# Setup, the same in every chapter: in Colab, install only what is missing there
# (Colab has all of these); locally the pinned .venv has everything.
import importlib.util
import os
import subprocess
import sys
from functools import partial

NEEDED = {  # module: pip package, for everything the chapters import
    "torch": "torch",
    "numpy": "numpy",
    "matplotlib": "matplotlib",
    "sklearn": "scikit-learn",
    "tqdm": "tqdm",
    "ipywidgets": "ipywidgets",
}
missing = [
    pip_name
    for module, pip_name in NEEDED.items()
    if importlib.util.find_spec(module) is None
]
if missing:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)

import torch
from tqdm.auto import tqdm, trange

# set when a machine runs the notebook (make book/test): no progress bars;
# the live controls' far corners get checked
HEADLESS = os.environ.get("RC_HEADLESS") == "1"
tqdm = partial(tqdm, disable=HEADLESS)
trange = partial(trange, disable=HEADLESS)

# measured: 2 threads are no faster for models this small, and far slower
# (15-25x) on a busy 2-core machine
torch.set_num_threads(1)
