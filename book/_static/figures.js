// Figures open full size. Each figure is drawn for the 690 px text column, so on a phone it shrinks with the column
// and its ticks and legends fall to about 5 px. A click, a tap or Enter on a figure opens it in a dialog at the size
// it was drawn for (larger, up to its full resolution, where the window has room); on a narrow screen the dialog
// scrolls sideways, so its smallest text reads at 11 px. Escape, the Close button or a click beside it closes it.
// A figure Sphinx already links to its PNG keeps that link (it still opens without this script, or in a new tab);
// a slider's frame, a data: URL that browsers do not open as a page, is wrapped in a button.
(function () {
  "use strict";
  let dialog, view, opener;

  function makeDialog() {
    dialog = document.createElement("dialog");
    dialog.className = "rc-figure-view";
    dialog.setAttribute("aria-label", "Figure at full size");
    const close = document.createElement("button");
    close.type = "button";
    close.className = "rc-figure-close";
    close.textContent = "Close";
    close.addEventListener("click", () => dialog.close());
    const scroller = document.createElement("div");
    scroller.className = "rc-figure-scroll";
    view = document.createElement("img");
    scroller.append(view);
    dialog.append(close, scroller);
    // a click beside the figure, not on it, closes the dialog
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog || event.target === scroller) dialog.close();
    });
    dialog.addEventListener("close", () => opener && opener.focus());
    document.body.append(dialog);
  }

  function open(image, from) {
    if (!dialog) makeDialog();
    opener = from;
    view.src = image.currentSrc || image.src;
    view.alt = image.alt;
    // the width the notebook drew it for: the inline style or width attribute it gives every figure (half its pixels)
    const drawn = parseFloat(image.style.width) || Number(image.getAttribute("width")) || image.naturalWidth / 2;
    view.style.width = Math.max(drawn, Math.min(image.naturalWidth, window.innerWidth - 48)) + "px";
    dialog.showModal();
    dialog.querySelector(".rc-figure-scroll").scrollTo(0, 0);
  }

  function opensHere(event) {
    // Ctrl, Cmd, Shift or the middle button: the reader wants the browser's own handling of the link
    return !(event.ctrlKey || event.metaKey || event.shiftKey || event.altKey || event.button !== 0);
  }

  function wire() {
    for (const link of document.querySelectorAll(".bd-article a.image-reference:not(.rc-figure-link)")) {
      const image = link.querySelector("img");
      if (!image) continue;
      link.classList.add("rc-figure-link");
      link.setAttribute("aria-haspopup", "dialog");
      link.addEventListener("click", (event) => {
        if (!opensHere(event)) return;
        event.preventDefault();
        open(image, link);
      });
    }
    for (const image of document.querySelectorAll(".rc-slider img")) {
      if (image.closest(".rc-figure-open")) continue;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "rc-figure-open";
      button.setAttribute("aria-haspopup", "dialog");
      image.replaceWith(button);
      button.append(image); // the slider's script keeps changing this image; the button shows its current frame
      button.addEventListener("click", () => open(image, button));
    }
  }

  document.addEventListener("DOMContentLoaded", wire);
})();
