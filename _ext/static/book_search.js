// Search results show a snippet of each page's text, cut from the page source, where equations are
// still TeX (\(...\) and \[...\]). Cut each snippet at formula boundaries so that no formula is left
// half open, then typeset it with the site's own MathJax. `window.bookSearchTypesetting` settles when
// every snippet shown so far is typeset (the browser tests wait for it).
(() => {
  const DELIMITER = /\\\(|\\\)|\\\[|\\\]/g;

  const balance = (text) => {
    let open = null;
    let start = 0;
    for (const match of text.matchAll(DELIMITER)) {
      const opening = match[0] === "\\(" || match[0] === "\\[";
      if (opening && open === null) open = match.index;
      else if (!opening && open === null) start = match.index + 2;  // the snippet began inside a formula
      else if (!opening) open = null;
    }
    let end = text.length;
    if (open !== null && open >= start) end = open;  // the snippet ends inside a formula
    return (start > 0 ? "..." : "") + text.slice(start, end).trim() + (end < text.length ? " ..." : "");
  };

  window.bookSearchTypesetting = Promise.resolve();
  if (typeof Search === "undefined") return;
  const makeSearchSummary = Search.makeSearchSummary;
  Search.makeSearchSummary = (htmlText, keywords, anchor) => {
    const summary = makeSearchSummary(htmlText, keywords, anchor);
    if (!summary) return summary;
    summary.textContent = balance(summary.textContent);
    summary.classList.add("mathjax_process");
    if (window.MathJax && MathJax.startup) {
      window.bookSearchTypesetting = window.bookSearchTypesetting
        .then(() => MathJax.startup.promise)
        .then(() => MathJax.typesetPromise([summary]));
    }
    return summary;
  };
})();
