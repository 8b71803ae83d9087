// The search page's result snippets, made from the text of each page and with typeset formulas.
//
// Sphinx cuts each snippet from the whole <main> element of the result page, which in this theme
// starts with the header buttons and ends with the page's table of contents, so snippets quoted the
// navigation instead of the text. Here the text is taken from the article only, and every formula
// (typeset at build time by KaTeX) becomes its TeX source between \( \). The snippet is cut at
// formula boundaries, so that no formula is left half open, and its formulas are typeset again with
// the site's own KaTeX. `window.bookSearchTypesetting` settles when every snippet shown so far is
// typeset (the browser tests wait for it).
//
// Ranking: Sphinx scores a page by where a word occurs (in any heading 15, in the text 5), not by how
// often, and a page's own title counts like any heading. The chapter about RoPE, titled "What is a
// rotary position embedding?", came after pages that name RoPE once in a heading, and chapter 9, "Why
// a base of 10000?", after pages with 10000 in a section heading. Here a page whose own title has a
// word of the query gains two headings' weight, and the page a word is about (it uses the word far
// more than any other page: `window.bookSearchFocus`, search_focus.js, written by the build) gains
// a heading's and a mention's. An acronym the glossary defines ("RoPE: ..." under "rotary position
// embedding", `window.bookSearchAliases`) counts as in a page's title when all the words it stands
// for are.
(() => {
  "use strict";
  // a click on a result: the page it opens may highlight the search words (book_site.js drops them elsewhere)
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element && event.target.closest("#search-results a[href]");
    if (!link) return;
    try {
      sessionStorage.setItem("book-search-result", new URL(link.href, location.href).pathname);
    } catch (error) { /* storage refused */ }
  }, true);
  const DELIMITER = /\\\(|\\\)|\\\[|\\\]/g;

  // The article's text, formulas as \( TeX \): what a snippet is cut from.
  const articleText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    // prose only: code, printed output, players and explorers are no snippet (issue 19, item 9)
    doc.querySelectorAll(".headerlink, script, style, .eqno, .cell_input, .cell_output pre, div.highlight, pre, .pe-player, .pe-explorer")
      .forEach((el) => el.remove());
    doc.querySelectorAll(".katex").forEach((math) => {
      const tex = math.querySelector('annotation[encoding="application/x-tex"]');
      math.replaceWith(doc.createTextNode(tex ? ` \\(${tex.textContent.trim()}\\) ` : ""));
    });
    const article = doc.querySelector("article.bd-article") || doc.querySelector('[role="main"]');
    if (!article) return "";
    const part = anchor ? article.querySelector(anchor) : null;
    return (part || article).textContent.replace(/\s+/g, " ");
  };

  // Cut a snippet so that it neither starts nor ends inside a formula.
  const balance = (text) => {
    let open = null;
    let start = 0;
    for (const match of text.matchAll(DELIMITER)) {
      const opening = match[0] === "\\(" || match[0] === "\\[";
      if (opening && open === null) open = match.index;
      else if (!opening && open === null) start = match.index + 2; // the snippet began inside a formula
      else if (!opening) open = null;
    }
    let end = text.length;
    if (open !== null && open >= start) end = open; // the snippet ends inside a formula
    return (start > 0 ? "..." : "") + text.slice(start, end).trim() + (end < text.length ? " ..." : "");
  };

  // Replace the text of `element` by text and typeset formulas.
  const typeset = (element) => {
    const text = element.textContent;
    element.textContent = "";
    let last = 0;
    for (const match of text.matchAll(/\\\(([\s\S]*?)\\\)/g)) {
      element.append(text.slice(last, match.index));
      const math = document.createElement("span");
      math.className = "math";
      try {
        katex.render(match[1], math, { throwOnError: true, output: "htmlAndMathml" });
      } catch (err) {
        math.textContent = match[1]; // never seen on this site: the build typeset the same TeX
      }
      element.append(math);
      last = match.index + match[0].length;
    }
    element.append(text.slice(last));
  };

  window.bookSearchTypesetting = Promise.resolve();
  if (typeof Search === "undefined") return;
  Search.htmlToText = articleText;

  let queryTerms = new Set(); // the stemmed words of the current query
  const parseQuery = Search._parseQuery;
  Search._parseQuery = (query) => {
    const parsed = parseQuery(query);
    queryTerms = parsed[1];
    return parsed;
  };
  const focus = window.bookSearchFocus || {};
  const aliases = window.bookSearchAliases || {};
  const stemmer = typeof Stemmer === "undefined" ? null : new Stemmer();
  const titleWords = (docname) => {
    const index = Search._index;
    const title = (index.titles[index.docnames.indexOf(docname)] || "").replace(/<[^>]*>/g, " ");
    return new Set(splitQuery(title.toLowerCase()).map((w) => (stemmer ? stemmer.stemWord(w) : w)));
  };
  const baseScore = Scorer.score;
  Scorer.score = (result) => {
    const [docname, , anchor] = result;
    let score = baseScore ? baseScore(result) : result[4];
    if (anchor) return score; // a result for a section: Sphinx's score
    const terms = [...queryTerms];
    const inTitle = titleWords(docname);
    const named = (term) => inTitle.has(term) || (term in aliases && aliases[term].every((w) => inTitle.has(w)));
    if (terms.some(named)) score += 2 * Scorer.title;
    if (terms.some((term) => focus[term] === docname)) score += Scorer.title + Scorer.term;
    return score;
  };
  const makeSearchSummary = Search.makeSearchSummary;
  Search.makeSearchSummary = (htmlText, keywords, anchor) => {
    const summary = makeSearchSummary(htmlText, keywords, anchor);
    if (!summary) return summary;
    summary.textContent = balance(summary.textContent);
    if (window.katex) typeset(summary);
    return summary;
  };
})();
