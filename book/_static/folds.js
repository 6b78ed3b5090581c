// One bar for a run of folded cells. A chapter opens with four or five cells the site folds (setup, imports, figure
// style, slider helper, colours), each behind its own "Show ... code" bar, so the reader met a stack of identical
// bars. Adjacent folded cells without output become one bar, "Show setup, import, ... code (4 cells)", a <details>
// like the cells' own (a real button to the keyboard: Tab, then Enter or Space). Opened, it shows every cell of the
// run unfolded; each keeps its own bar, which names it and folds it again.
(function () {
  "use strict";

  const isFoldedCell = (element) =>
    element && element.matches("div.cell.tag_hide-input") && !element.querySelector(".cell_output > *");

  // "Show setup code" -> "setup"
  const subject = (cell) => {
    const label = cell.querySelector(":scope > details > summary > .collapsed")?.textContent.trim() || "";
    return label.replace(/^Show\s+/, "").replace(/\s+code$/, "");
  };

  // ["setup", "import", "slider"] -> "setup, import and slider"
  const listed = (words) =>
    words.length < 2 ? words.join("") : words.slice(0, -1).join(", ") + " and " + words[words.length - 1];

  function title(text, state) {
    const p = document.createElement("p");
    p.className = `${state} admonition-title`;
    p.textContent = text;
    return p;
  }

  function group(run) {
    const what = `${listed([...new Set(run.map(subject))])} code (${run.length} cells)`;
    const wrapper = document.createElement("div");
    wrapper.className = "cell rc-fold-run docutils container";
    const details = document.createElement("details");
    details.className = "admonition hide above-input";
    const summary = document.createElement("summary");
    summary.append(title(`Show ${what}`, "collapsed"), title(`Hide ${what}`, "expanded"));
    details.append(summary);
    run[0].before(wrapper);
    wrapper.append(details);
    for (const cell of run) {
      details.append(cell);
      cell.querySelector(":scope > details").open = true;
    }
  }

  function groupRuns() {
    for (const first of document.querySelectorAll(".bd-article div.cell.tag_hide-input")) {
      // start at the first cell of a run only
      if (!isFoldedCell(first) || isFoldedCell(first.previousElementSibling) || first.closest(".rc-fold-run")) continue;
      const run = [first];
      while (isFoldedCell(run[run.length - 1].nextElementSibling)) run.push(run[run.length - 1].nextElementSibling);
      if (run.length > 1) group(run);
    }
  }

  document.addEventListener("DOMContentLoaded", groupRuns);
})();
