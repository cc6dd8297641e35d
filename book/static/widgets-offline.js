// Loaded before require.js and embed-amd.js on pages that embed widget state (see
// nb_ipywidgets_js in _config.yml). Two fixes so stored widgets render offline and cleanly:
(function () {
  "use strict";
  // 1. embed-amd.js finds its icon fonts relative to the URL require.js gives its modules,
  //    which by default is under the page's own folder (a 404). Map the module path to the
  //    folder the files are really in, next to this script. A global `require` object defined
  //    before require.js loads is read by require.js as its configuration.
  var assets = new URL("html-manager/", document.currentScript.src).href;
  window.__jupyter_widgets_assets_path__ = assets;
  if (typeof window.require === "undefined") {
    window.require = { paths: { "@jupyter-widgets/html-manager/dist": assets.replace(/\/$/, "") } };
  }

  // 2. The widget manager typesets labels with the MathJax 2 API (MathJax.Hub.Queue), but the
  //    book loads MathJax 3, which has no Hub. Give every object assigned to window.MathJax
  //    (first Sphinx's config, then MathJax itself) a small Hub that calls MathJax 3 instead.
  function typesetLater(job) {
    var mj = window.MathJax;
    var element = job && job[2];
    var run = function () {
      if (mj && typeof mj.typesetPromise === "function") {
        return mj.typesetPromise(element ? [element] : undefined);
      }
    };
    var ready = mj && mj.startup && mj.startup.promise;
    Promise.resolve(ready).then(run).catch(function (err) {
      console.warn("widget label typesetting failed", err);
    });
  }
  function withHub(mj) {
    if (mj && typeof mj === "object" && !("Hub" in mj)) {
      // Not enumerable: MathJax 3 copies the config's enumerable keys into its options.
      Object.defineProperty(mj, "Hub", { value: { Queue: typesetLater }, configurable: true });
    }
    return mj;
  }
  var current = withHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); },
  });
})();
