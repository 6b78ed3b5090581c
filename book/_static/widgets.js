// Loaded before require.js and the ipywidgets embedder, on the pages that show a widget's saved state
// (nb_ipywidgets_js in _config.yml).

// The embedder finds its icon fonts through require.js paths: point them at the CDN copy it came from,
// not at the page's own folder.
var require = {
  paths: {"@jupyter-widgets/html-manager/dist": "https://cdn.jsdelivr.net/npm/@jupyter-widgets/html-manager@1.0.6/dist"},
};

// The embedder typesets widget labels with MathJax 2's API, MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]);
// the book loads MathJax 3, which has no Hub. Give whichever MathJax object is current (the configuration, then
// MathJax 3 itself once it loads and replaces it) a Hub that forwards to MathJax 3.
(function () {
  const hub = {Queue: (job) => window.MathJax.typesetPromise && window.MathJax.typesetPromise([job[2]])};
  let current = window.MathJax;
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: () => current,
    set: (value) => {
      current = value;
      if (value && typeof value === "object" && !value.Hub) value.Hub = hub;
    },
  });
  window.MathJax = current;
})();
