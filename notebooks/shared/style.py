# The book's figure style, one for every chapter. A figure FIG_WIDTH wide fills the
# site's text column at its natural size, so its smallest text (SMALLEST_FONT) reads
# at about 11 screen pixels; PNGs are drawn at twice that resolution (sharp on
# high-density screens) and shown at FIG_DPI.
import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib_inline.backend_inline import set_matplotlib_formats

FIG_WIDTH = 6.9  # inches: the book's text column; panels stack rather than shrink
FIG_DPI = 100  # screen pixels per inch of figure
SMALLEST_FONT = 8  # points: ticks, legends, notes; nothing in a figure is smaller
# The Okabe–Ito palette, safe for colour-blind readers. One colour per model family:
COLORS = {
    "plain": "#D55E00",  # vermillion
    "residual": "#0072B2",  # blue
    "pre-LN": "#009E73",  # bluish green
    "post-LN": "#E69F00",  # orange
}
# The rest, for a chapter's other lines; sky blue never next to the residual blue.
OKABE_ITO = {
    "reddish purple": "#CC79A7",
    "black": "#000000",
    "sky blue": "#56B4E9",
    "yellow": "#F0E442",
    "grey": "#7F7F7F",
}

plt.rcParams.update(
    {
        "figure.figsize": (FIG_WIDTH, 3.2),
        "figure.dpi": FIG_DPI,
        "figure.constrained_layout.use": True,
        "font.size": 9,
        "axes.titlesize": 9,
        "axes.labelsize": 9,
        "figure.titlesize": 10,
        "xtick.labelsize": SMALLEST_FONT,
        "ytick.labelsize": SMALLEST_FONT,
        "legend.fontsize": SMALLEST_FONT,
        "legend.title_fontsize": SMALLEST_FONT,
        "legend.framealpha": 0.9,
        "lines.linewidth": 1.6,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": cycler(color=[*COLORS.values(), *OKABE_ITO.values()]),
    }
)
set_matplotlib_formats("retina")
