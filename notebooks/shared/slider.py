# A figure with a slider that needs no kernel: every frame is drawn while the notebook
# runs, and a few lines of JavaScript in the output swap them. It works on the book's
# site, in Colab and in Jupyter; where scripts cannot run (GitHub, a PDF) the first
# frame shows, with no control that does nothing.
import base64
import hashlib
import html
import io
import json

from IPython.display import display
from PIL import Image

SLIDER_COLORS = 64  # colours per frame: the same plots, at a third of the bytes
SLIDER_BYTES = 300_000  # the most an interactive figure may add to a notebook


def frame_png(fig) -> bytes:
    """A figure as a retina PNG of SLIDER_COLORS colours, the same bytes every run."""
    raw = io.BytesIO()
    fig.savefig(raw, format="png", dpi=2 * FIG_DPI, metadata={"Software": None})
    plt.close(fig)
    image = Image.open(raw).convert("RGB").quantize(SLIDER_COLORS)
    out = io.BytesIO()
    image.save(out, format="png", optimize=True)
    return out.getvalue()


def slider_figure(draw, values, label: str, describe, start=None) -> dict:
    """Show draw(v), a matplotlib figure, for each v of `values`, behind a slider.

    `label` names the slider; describe(v) is a sentence about the frame at v, which
    serves as its alt text and as the caption read out when the slider moves. `start`:
    the value shown first (default: the first). Returns {"values", "texts", "bytes"},
    what the page will show, for the notebook to assert on."""
    values = list(values)
    if not values:
        raise ValueError("slider_figure needs at least one value to show")
    start = values.index(values[0] if start is None else start)
    pngs = [frame_png(draw(v)) for v in values]
    texts = [f"{label} = {v}: {describe(v)}" for v in values]
    frames = ["data:image/png;base64," + base64.b64encode(p).decode() for p in pngs]
    key = hashlib.sha256("".join(texts + frames).encode()).hexdigest()[:12]
    width = int.from_bytes(pngs[start][16:20], "big") // 2  # shown at half: retina
    listed = html.escape(json.dumps([str(v) for v in values]))
    page = f"""<div class="rc-slider" id="rc-slider-{key}" data-values='{listed}'>
<img src="{frames[start]}" alt="{html.escape(texts[start])}" width="{width}"
 style="max-width:100%;height:auto">
<p class="rc-slider-caption" aria-live="polite">{html.escape(texts[start])}</p>
</div>
<script>
(function () {{
  var root = document.getElementById("rc-slider-{key}");
  if (!root || root.querySelector("input")) return;
  var frames = {json.dumps(frames)}, texts = {json.dumps(texts)};
  var values = JSON.parse(root.dataset.values);
  var img = root.querySelector("img"), caption = root.querySelector("p");
  var controls = document.createElement("div");
  controls.className = "rc-slider-controls";
  controls.style.cssText = "display:flex;align-items:center;gap:0.6em;margin:0.3em 0";
  var input = document.createElement("input");
  input.type = "range"; input.id = root.id + "-input";
  input.min = 0; input.max = frames.length - 1; input.step = 1; input.value = {start};
  var name = document.createElement("label");
  name.htmlFor = input.id; name.textContent = {json.dumps(label)};
  var shown = document.createElement("output");
  shown.htmlFor = input.id; shown.style.minWidth = "3em";
  function show(i) {{
    img.src = frames[i]; img.alt = texts[i]; caption.textContent = texts[i];
    shown.textContent = values[i];
    input.setAttribute("aria-valuetext", {json.dumps(label)} + " " + values[i]);
  }}
  input.addEventListener("input", function () {{ show(Number(input.value)); }});
  controls.append(name, input, shown);
  root.insertBefore(controls, img);
  show({start});
}})();
</script>"""
    size = len(page.encode()) + len(pngs[start]) * 4 // 3
    if size > SLIDER_BYTES:
        raise ValueError(
            f"{len(values)} frames weigh {size:,} bytes, over the {SLIDER_BYTES:,} an "
            "interactive figure may add: show fewer values, or a simpler figure"
        )
    fallback = {"image/png": base64.b64encode(pngs[start]).decode()}
    display(
        {"text/html": page, **fallback},
        raw=True,
        metadata={"image/png": {"width": width}},
    )
    return {"values": values, "texts": texts, "bytes": size}
