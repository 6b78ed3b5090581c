// Accessibility fixes for what the theme and the extensions render; tests/test_browser.py runs axe-core on every
// page, light and dark, laptop and phone, and fails on any violation. The fixes run when the page loads and again
// whenever something renders (the theme's buttons and the widgets are drawn by scripts).
function fixAccessibleNames() {
  // Controls named by an aria-label that differs from the text they show ("Search" on a field that reads
  // "Search Ctrl+K", "Toggle hidden content" on "Show solution"): let the name come from the visible text.
  for (const control of document.querySelectorAll(".search-button-field[aria-label], details > summary[aria-label]")) {
    control.removeAttribute("aria-label");
  }
  // The colour-mode button shows only icons: hide them from assistive technology and name the button in text.
  for (const button of document.querySelectorAll(".theme-switch-button[aria-label]")) {
    for (const icon of button.querySelectorAll("i")) {
      icon.setAttribute("aria-hidden", "true");
      icon.removeAttribute("title");
    }
    const name = document.createElement("span");
    name.className = "visually-hidden";
    name.textContent = button.getAttribute("aria-label");
    button.append(name);
    button.removeAttribute("aria-label");
  }
  // docutils marks each bibliography entry role="doc-biblioentry", which ARIA 1.2 deprecates; in a list it is an item.
  for (const entry of document.querySelectorAll('.citation-list[role="list"] > .citation:not([role="listitem"])')) {
    entry.setAttribute("role", "listitem");
  }
  // The primary sidebar holds the site's navigation: the book's title (a link home), search and the table of contents.
  // Only the table of contents is a landmark (<nav>), so axe's region rule finds the title outside every landmark at
  // laptop width: make the whole sidebar the book's navigation landmark, the table of contents within it.
  for (const sidebar of document.querySelectorAll("#pst-primary-sidebar:not([role])")) {
    sidebar.setAttribute("role", "navigation");
    sidebar.setAttribute("aria-label", "Book");
  }
  // A widget's slider handle (noUiSlider) has no name: give it the slider's label.
  for (const handle of document.querySelectorAll(".noUi-handle:not([aria-label])")) {
    const label = handle.closest(".widget-slider")?.querySelector(".widget-label");
    if (label && label.textContent.trim()) handle.setAttribute("aria-label", label.textContent.trim());
  }
}

document.addEventListener("DOMContentLoaded", fixAccessibleNames);
new MutationObserver(fixAccessibleNames).observe(document.documentElement, { childList: true, subtree: true });
