// What the book's pages need beyond the themes (loaded with defer on every page):
//
// 1. The sidebar buttons work. pydata-sphinx-theme 0.17 and sphinx-book-theme 1.3 bind their click
//    handlers to the FIRST .primary-toggle / .secondary-toggle of the page: a button of the theme's
//    own top bar, which this site hides. The buttons a reader sees (in the article header) get no
//    handler, so on a phone or tablet the chapter list cannot be opened (pydata-sphinx-theme issue
//    2451, sphinx-book-theme issue 988). A click on any other toggle is passed on to the first one,
//    so the themes' own code runs: a dialog on narrow screens, a collapsing sidebar on wide ones.
// 2. Figures can be enlarged. Each figure of the text becomes a link to its full-resolution image;
//    clicking it (or Enter on it) opens the image in an overlay, as large as the screen allows and
//    never smaller than it was designed (wider than a phone: the overlay scrolls). Escape, the close
//    button or a click on the backdrop closes it, and the focus returns to the figure.
// 3. Wide content scrolls with a visible cue. Display formulas and tables scroll inside their own
//    box (book_site.css); an inline formula with a piece wider than its line becomes such a box. A box
//    that has more to show gets the class book-scroll (a fade at the edge with more; at-start and
//    at-end say where the content stands) and a tab stop, so that the keyboard can scroll it. A display
//    formula that book_math.py also stacked shows the stacked form wherever the one line is wider than
//    its box (class book-stacked on the div.math), on any screen.
// 5. Search words are highlighted on a page opened from the search results only. Sphinx's search page
//    stores the words (localStorage "sphinx_highlight_terms") for the next page, whichever it is, and
//    a chapter opened from the sidebar after a search came highlighted (issue 30, item 7). The words are
//    dropped here (before sphinx_highlight.js reads them, at DOMContentLoaded) unless the page was
//    opened from a result link (book_search.js marks that click in sessionStorage).
// 6. The chapter list opens at the current chapter. On a narrow screen the theme shows the sidebar as a
//    dialog scrolled to its top, and a reader deep in the book saw the first chapters with the current
//    one off-screen (issue 30, item 7): when that dialog opens, the current page's entry is scrolled to
//    its middle.
// 4. Printed lines wrap (book_site.css): each line of a cell's printed output becomes a span of its
//    own, so that a wrapped line's continuation is indented under its start (issue 30, item 1).
(() => {
  "use strict";
  document.documentElement.classList.add("book-js"); // book_site.css: the script chooses a formula's form

  try {
    if (sessionStorage.getItem("book-search-result") !== location.pathname) {
      localStorage.removeItem("sphinx_highlight_terms");
    }
    sessionStorage.removeItem("book-search-result");
  } catch (error) { /* storage refused (private mode): Sphinx keeps its own behaviour */ }

  const forwardToggles = (selector) => {
    const [first, ...others] = document.querySelectorAll(selector);
    for (const button of others) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        first.click();
      });
    }
  };

  // the current page's entry in the chapter list, in the middle of the phone's sidebar dialog when it opens
  const openAtCurrentChapter = () => {
    const modal = document.getElementById("pst-primary-sidebar-modal");
    if (!modal) return;
    new MutationObserver(() => {
      if (!modal.open) return;
      const links = modal.querySelectorAll(".bd-sidenav a.current");
      const here = modal.querySelector('.bd-sidenav a.current[href="#"]') || links[links.length - 1];
      if (here) here.scrollIntoView({ block: "center", behavior: "instant" });
    }).observe(modal, { attributes: true, attributeFilter: ["open"] });
  };

  // ---- figure overlay ---------------------------------------------------------------------------
  let dialog = null;

  const overlay = () => {
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.className = "book-zoom";
    dialog.setAttribute("aria-label", "Enlarged figure");
    const close = document.createElement("button");
    close.type = "button";
    close.className = "book-zoom__close";
    close.setAttribute("aria-label", "Close");
    close.textContent = "×";
    close.addEventListener("click", () => dialog.close());
    const frame = document.createElement("div");
    frame.className = "book-zoom__frame";
    frame.appendChild(document.createElement("img"));
    dialog.append(close, frame);
    // a click beside the figure (on the dimmed page) closes the overlay
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog || event.target === frame) dialog.close();
    });
    document.body.appendChild(dialog);
    return dialog;
  };

  const enlarge = (image) => {
    const box = overlay();
    const big = box.querySelector("img");
    big.src = image.currentSrc || image.src;
    big.alt = image.alt;
    // the designed width (1x) is in the image's style (myst-nb passes pe_lib.show's width on), or
    // its width attribute; the file holds up to twice as many pixels. A phone rendering that a
    // <picture> shows instead (book_figures.py) is a 2x PNG of its own designed width.
    const swapped = image.currentSrc && image.currentSrc !== image.src;
    const designed = swapped ? image.naturalWidth / 2
      : parseFloat(image.style.width) || Number(image.getAttribute("width")) || image.naturalWidth / 2;
    const fits = window.innerWidth - 40; // the frame's padding and the card's
    big.style.width = `${Math.round(Math.max(designed, Math.min(image.naturalWidth, fits)))}px`;
    box.showModal();
    box.querySelector(".book-zoom__close").focus();
  };

  const makeZoomable = (image) => {
    // Sphinx already links a figure shown at a set size to its file (a.image-reference): use that link
    const existing = image.closest("a, button, .book-zoom");
    if (existing && !existing.matches("a.image-reference")) return; // a link elsewhere: leave it alone
    const link = existing || document.createElement("a");
    if (!existing) {
      link.href = image.currentSrc || image.src;
      image.replaceWith(link);
      link.appendChild(image);
    }
    link.classList.add("book-zoom__link");
    link.title = "Enlarge the figure";
    link.addEventListener("click", (event) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return; // a new tab: let it
      event.preventDefault();
      enlarge(image);
      overlay().addEventListener("close", () => link.focus(), { once: true });
    });
  };

  // ---- wide content -----------------------------------------------------------------------------
  const SCROLL_BOXES = [
    ".bd-article div.math > .katex-display",
    ".bd-article div.math > div > .katex-display",
    ".bd-article .pst-scrollable-table-container",
    ".bd-article span.math.book-wide",
  ].join(", ");

  const updateBox = (box) => {
    const more = box.scrollWidth > box.clientWidth + 1;
    box.classList.toggle("book-scroll", more);
    box.classList.toggle("at-start", more && box.scrollLeft <= 1);
    box.classList.toggle("at-end", more && box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
    if (more) box.tabIndex = 0;
    else if (box.tabIndex === 0) box.removeAttribute("tabindex");
  };

  const markWideFormulas = () => {
    for (const math of document.querySelectorAll(".bd-article span.math")) {
      // a formula that was wide at an earlier layout (before the fonts came, in a table that has since
      // grown) loses its scroll box with its cue: the boxes below are updated only while they are wide
      if (math.classList.contains("book-wide")) {
        math.classList.remove("book-wide", "book-scroll", "at-start", "at-end");
        math.removeAttribute("tabindex");
      }
      // the line's width: of the nearest box (a formula glued to its punctuation sits in an inline
      // span.book-nowrap, whose clientWidth is 0)
      let box = math.parentElement;
      while (box && box.clientWidth === 0) box = box.parentElement;
      const line = box ? box.clientWidth : window.innerWidth;
      // KaTeX may break a line between its top-level pieces (.base), never inside one
      const pieces = math.querySelectorAll(".katex-html > .base");
      if (Array.from(pieces).some((piece) => piece.getBoundingClientRect().width > line)) {
        math.classList.add("book-wide");
      }
    }
  };

  // A display formula in two forms (book_math.py): the stacked one where the line does not fit. A formula
  // still a little wider than its box (by up to 3/7 of it) is set up to 30% smaller, so that it fits; a
  // wider one scrolls, with its fade.
  const MIN_FORMULA_SCALE = 0.7;
  const overflows = (box) => box.scrollWidth > box.clientWidth + 1;
  const chooseFormulaForms = () => {
    for (const math of document.querySelectorAll(".bd-article div.math")) {
      const wide = math.querySelector(":scope > .book-formula-wide");
      math.classList.remove("book-stacked");
      math.querySelectorAll(".katex-display > .katex").forEach((k) => k.style.removeProperty("font-size"));
      if (wide && overflows(wide.querySelector(".katex-display"))) math.classList.add("book-stacked");
      const shown = Array.from(math.querySelectorAll(".katex-display")).find((d) => d.offsetParent !== null);
      if (!shown || !overflows(shown)) continue;
      const scale = (shown.clientWidth - 2) / shown.scrollWidth;
      if (scale >= MIN_FORMULA_SCALE) {
        const katex = shown.querySelector(":scope > .katex");
        katex.style.fontSize = `${(parseFloat(getComputedStyle(katex).fontSize) * scale).toFixed(2)}px`;
      }
    }
  };

  const layout = () => {
    chooseFormulaForms();
    markWideFormulas();
    document.querySelectorAll(SCROLL_BOXES).forEach(updateBox);
  };

  const watchScrolling = () => {
    layout();
    document.addEventListener(
      "scroll",
      (event) => {
        if (event.target instanceof Element && event.target.matches(SCROLL_BOXES)) updateBox(event.target);
      },
      { capture: true, passive: true },
    );
    let pending = null;
    window.addEventListener("resize", () => {
      clearTimeout(pending);
      pending = setTimeout(layout, 150);
    });
    // web fonts change the widths once they arrive
    if (document.fonts) document.fonts.ready.then(layout);
  };

  // ---- printed lines ----------------------------------------------------------------------------
  // "a\nb\n" in <pre> becomes <span class="book-line">a\n</span><span class="book-line">b\n</span>; an
  // output whose coloured runs (ANSI) cross a line end is left as it is (it still wraps, unindented).
  const splitPrintedLines = (pre) => {
    if (pre.querySelector(".book-line")) return;
    const lines = [[]];
    for (const node of Array.from(pre.childNodes)) {
      if (node.nodeType === Node.TEXT_NODE) {
        node.textContent.split("\n").forEach((part, i) => {
          if (i) lines.push([]);
          if (part) lines[lines.length - 1].push(document.createTextNode(part));
        });
      } else if (node.textContent.includes("\n")) {
        return;
      } else if (node.textContent) {
        lines[lines.length - 1].push(node.cloneNode(true));
      }
    }
    if (!lines[lines.length - 1].length) lines.pop(); // the newline that ends the output
    pre.replaceChildren(...lines.map((parts) => {
      const line = document.createElement("span");
      line.className = "book-line";
      line.append(...parts, "\n");
      return line;
    }));
  };

  const start = () => {
    document.querySelectorAll(".bd-article .cell_output div.highlight > pre").forEach(splitPrintedLines);
    forwardToggles(".primary-toggle");
    forwardToggles(".secondary-toggle");
    openAtCurrentChapter();
    // a figure is an image output of a cell (possibly in Sphinx's link to its file), or a <figure>
    const figures = ".bd-article .cell_output > img, .bd-article .cell_output > a.image-reference > img, "
      + ".bd-article figure img";
    document.querySelectorAll(figures).forEach(makeZoomable);
    watchScrolling();
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
