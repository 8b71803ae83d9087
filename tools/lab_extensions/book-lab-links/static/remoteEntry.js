// A JupyterLab 4 extension of `make lab`, written by hand (no build step): after a click on a link to
// another file, scroll the opened file to the link's fragment once the file is rendered.
//
// Why: Lab's "rendermime:handle-local-link" opens the file and calls widget.setFragment(fragment)
// at once. A notebook opened by that click has not rendered its cells yet (jupyterlab-myst renders
// markdown asynchronously), so NotebookPanel.setFragment finds nothing to scroll to and the chapter
// opens at its top; only a notebook that was already open scrolls. jupyterlab-myst's markdown renderer
// (the Markdown Preview of book/*.md) ignores fragments altogether (no setFragment). This extension
// watches that command and, when the file has settled, scrolls again:
//   * a notebook: "#cell-id=<id>" (the form lab_markup.py writes for a {ref} to a chapter, Lab's own) brings
//     that cell to the top (Notebook.scrollToCell, then scrollIntoView again while the cells above still
//     change height: Lab's setFragment alone lands a few hundred pixels off in a windowed notebook); any
//     other fragment goes to Lab's Notebook.setFragment;
//   * a markdown page: the element whose id is the fragment (jupyterlab-myst gives a heading under
//     "(label)=" the label as id), or for "#term:<term>" the glossary paragraph that starts with it.
//
// Module federation contract of JupyterLab's bootstrap.js: window._JUPYTERLAB[name] is a container
// with init(shareScope) and get(module) -> Promise<() => module>; the module's default export is the
// plugin list. This file needs no shared module, so init has nothing to do.
var _JUPYTERLAB;
(function () {
  'use strict';
  var HANDLE_LINK = 'rendermime:handle-local-link';
  var STEP = 200; // ms between two looks at the opened file
  var PATIENCE = 75; // looks before giving up (15 s)

  function sleep(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  function findWidget(app, path) {
    var found = null;
    var iterator = app.shell.widgets('main');
    var all = Array.from ? Array.from(iterator) : iterator;
    all.forEach(function (w) {
      if (!found && w.context && w.context.path === path) {
        found = w;
      }
    });
    return found;
  }

  function termTarget(node, fragment) {
    // "#term:self-attention" or "#term=text%20%3Cterm%3E": the glossary's entry for the term (a <dt> of the
    // definition list tools/lab_contents.py serves; a paragraph that starts with the term in a plain Lab)
    var match = /^#term[:=](.*)$/.exec(fragment);
    if (!match) {
      return null;
    }
    var role = decodeURIComponent(match[1]).split('`')[0]; // "wavelength`s": a plural's ending after a backtick
    var explicit = /<([^<>]+)>\s*$/.exec(role);
    var term = (explicit ? explicit[1] : role).trim().toLowerCase();
    var entries = node.querySelectorAll('dt, p');
    for (var i = 0; i < entries.length; i++) {
      var text = entries[i].textContent.trim().toLowerCase().replace(/\s+/g, ' ');
      if (text === term || text.indexOf(term + ' ') === 0) {
        return entries[i];
      }
    }
    return null;
  }

  function pageTarget(widget, fragment) {
    var id = decodeURIComponent(fragment.slice(1));
    var node = widget.content.node;
    return node.querySelector('[id="' + CSS.escape(id) + '"]') || termTarget(node, fragment);
  }

  function isNotebook(widget) {
    return widget.content && typeof widget.content.setFragment === 'function' && widget.content.widgets;
  }

  function scroller(widget) {
    return widget.content.outerNode || widget.content.node; // a notebook scrolls in its outer node
  }

  async function settled(widget) {
    // the rendered height has not changed over three looks (jupyterlab-myst renders cell after cell)
    var height = -1;
    var still = 0;
    for (var i = 0; i < PATIENCE && still < 3 && !widget.isDisposed; i++) {
      await sleep(STEP);
      var now = scroller(widget).scrollHeight;
      still = now === height ? still + 1 : 0;
      height = now;
    }
  }

  async function goTo(app, path, fragment) {
    var widget = findWidget(app, path);
    if (!widget) {
      return;
    }
    await widget.context.ready;
    await settled(widget);
    var find;
    if (isNotebook(widget)) {
      var match = /^#cell-id=(.+)$/.exec(fragment);
      if (!match) {
        await widget.content.setFragment(fragment); // Lab's own forms (#heading=..., a bare id)
        widget.node.dataset.bookFragment = fragment;
        return;
      }
      var id = decodeURIComponent(match[1]);
      var cell = widget.content.widgets.find(function (c) { return c.model.id === id; });
      if (!cell) {
        return;
      }
      await widget.content.scrollToCell(cell, 'start'); // renders it if the notebook is windowed
      find = function () { return cell.node; };
    } else {
      find = function () { return pageTarget(widget, fragment); };
    }
    // Scroll the target to the top, and again while what is above it still changes height. Its offset
    // may stay above zero near the end of a page: it counts as reached once it stops moving.
    var last = null;
    var still = 0;
    for (var i = 0; i < PATIENCE && still < 3 && !widget.isDisposed; i++) {
      var target = find();
      if (target) {
        var offset = target.getBoundingClientRect().top - scroller(widget).getBoundingClientRect().top;
        if (last === null || Math.abs(offset - last) > 2) {
          target.scrollIntoView({ block: 'start' });
          still = 0;
          last = target.getBoundingClientRect().top - scroller(widget).getBoundingClientRect().top;
        } else {
          still += 1;
        }
      }
      await sleep(STEP);
    }
    widget.node.dataset.bookFragment = fragment; // for the browser tests: the scroll is over
  }

  var plugin = {
    id: 'book-lab-links:fragment',
    description: 'A link between the book\'s files opens the target at its fragment.',
    autoStart: true,
    activate: function (app) {
      app.commands.commandExecuted.connect(function (sender, executed) {
        var args = executed.args || {};
        if (executed.id !== HANDLE_LINK || !args.id || !args.path) {
          return;
        }
        Promise.resolve(executed.result).then(function () {
          return goTo(app, args.path, args.id);
        }).catch(function (error) {
          console.warn('book-lab-links: could not scroll to ' + args.id + ' in ' + args.path, error);
        });
      });
    }
  };

  var container = {
    init: function () { return Promise.resolve(); },
    get: function (module) {
      if (module !== './extension') {
        return Promise.reject(new Error('book-lab-links has no module ' + module));
      }
      return Promise.resolve(function () { return { __esModule: true, default: [plugin] }; });
    }
  };
  _JUPYTERLAB = _JUPYTERLAB === undefined ? {} : _JUPYTERLAB;
  _JUPYTERLAB['book-lab-links'] = container;
})();
