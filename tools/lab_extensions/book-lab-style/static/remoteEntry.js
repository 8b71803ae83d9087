// A JupyterLab 4 extension of `make lab`, written by hand (no build step): a few rules of style for the
// book's chapters, added to the page as one <style> element when Lab starts.
//
// Why: jupyterlab-myst draws a markdown table with Tailwind's reset (every border 0), so a chapter's
// tables had neither rules between rows nor a line under the header (issue 30, item 8); and a printed
// line must wrap, never run off the right edge of its output (item 1; Lab's own rule, pre-wrap, is
// restated here so that a theme cannot undo it). tests/browser/test_lab.py looks at both in Lab.
//
// Module federation contract of JupyterLab's bootstrap.js: see book-lab-links/static/remoteEntry.js.
var _JUPYTERLAB;
(function () {
  'use strict';
  var CSS = [
    '.jp-RenderedMarkdown.myst table, .myst table { border-collapse: collapse; margin: 0.5em 0 1em; }',
    '.myst table th, .myst table td { padding: 0.3em 0.75em; vertical-align: top; text-align: left; }',
    '.myst table tr:first-child > th { border-top: 2px solid var(--jp-border-color0); }',
    '.myst table th { font-weight: 600; border-bottom: 2px solid var(--jp-border-color0); }',
    '.myst table td { border-bottom: 1px solid var(--jp-border-color2); }',
    // an identifier in a cell keeps its letters together (it wraps at its own punctuation, as the site's)
    '.myst table td code { overflow-wrap: normal; word-break: normal; }',
    '.jp-OutputArea-output pre { white-space: pre-wrap; overflow-wrap: anywhere; }'
  ].join('\n');

  var plugin = {
    id: 'book-lab-style:style',
    description: 'The book\'s tables with rules and a header line; printed lines wrap.',
    autoStart: true,
    activate: function () {
      var style = document.createElement('style');
      style.id = 'book-lab-style';
      style.textContent = CSS;
      document.head.appendChild(style);
    }
  };

  var container = {
    init: function () { return Promise.resolve(); },
    get: function (module) {
      if (module !== './extension') {
        return Promise.reject(new Error('book-lab-style has no module ' + module));
      }
      return Promise.resolve(function () { return { __esModule: true, default: [plugin] }; });
    }
  };
  _JUPYTERLAB = _JUPYTERLAB === undefined ? {} : _JUPYTERLAB;
  _JUPYTERLAB['book-lab-style'] = container;
})();
