// A JupyterLab 4 extension of `make lab`, written by hand (no build step): a few rules of style for the
// book's chapters, added to the page as one <style> element when Lab starts.
//
// Why: jupyterlab-myst draws a markdown table with Tailwind's reset (every border 0), so a chapter's
// tables had neither rules between rows nor a line under the header (issue 30, item 8); and a printed
// line must wrap, never run off the right edge of its output (item 1; Lab's own rule, pre-wrap, is
// restated here so that a theme cannot undo it). tests/browser/test_lab.py looks at both in Lab.
// A wide table (chapter 11's six columns of identifiers and calls) ran 1247 px wide in a 914 px cell at
// 1366 px, its last columns off the edge: the identifiers in a table's cells get break opportunities
// (<wbr>) after / . , ( = and, inside a name of 16 letters or more, after _ and before an inner capital
// (get_timing_|signal_1d, MarianSinusoidal|PositionalEmbedding); letters are never split elsewhere.
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

  var LONG_NAME = 16;

  // the pieces of an identifier between which a line may break
  function pieces(text) {
    var out = [];
    text.split(/(?<=[\/.,(=])(?=\S)/).forEach(function (part) {
      var joined = [''];
      part.split(/(?<=\w)(?=\W)|(?<=\W)(?=\w)/).forEach(function (run) {
        var bits = /^\w+$/.test(run) && run.length >= LONG_NAME
          ? run.split(/(?<=_)(?=[^_])|(?<=[a-z])(?=[A-Z])/) : [run];
        joined[joined.length - 1] += bits[0];
        joined = joined.concat(bits.slice(1));
      });
      out = out.concat(joined);
    });
    return out.filter(function (piece) { return piece.length > 0; });
  }

  function breakIdentifiers(root) {
    root.querySelectorAll('.myst table td code:not([data-book-breaks])').forEach(function (code) {
      code.setAttribute('data-book-breaks', '');
      var walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      var texts = [];
      while (walker.nextNode()) texts.push(walker.currentNode);
      texts.forEach(function (node) {
        var parts = pieces(node.textContent);
        if (parts.length < 2) return;
        var frag = document.createDocumentFragment();
        parts.forEach(function (part, i) {
          if (i) frag.appendChild(document.createElement('wbr'));
          frag.appendChild(document.createTextNode(part));
        });
        node.parentNode.replaceChild(frag, node);
      });
    });
  }

  var plugin = {
    id: 'book-lab-style:style',
    description: 'The book\'s tables with rules and a header line, identifiers that break at their joints; printed lines wrap.',
    autoStart: true,
    activate: function () {
      var style = document.createElement('style');
      style.id = 'book-lab-style';
      style.textContent = CSS;
      document.head.appendChild(style);
      // jupyterlab-myst renders (and re-renders) markdown cells at any time: mark each new table once it is in
      var pending = false;
      new MutationObserver(function () {
        if (pending) return;
        pending = true;
        window.requestAnimationFrame(function () { pending = false; breakIdentifiers(document.body); });
      }).observe(document.body, { childList: true, subtree: true });
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
