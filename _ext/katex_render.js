// Typesets TeX with KaTeX for the Sphinx extension book_site.py, which runs this once per build.
// Protocol: one JSON object per line on stdin, {"tex": "...", "display": true|false}; one JSON
// object per line on stdout, in the same order: {"html": "..."} or {"error": "..."}. A formula that
// KaTeX cannot parse, or that uses LaTeX KaTeX only accepts non-strictly, is an error: the build
// reports it with the page and fails (-W), instead of shipping a red formula.
"use strict";
const readline = require("readline");
const katex = require("katex");

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let answer;
  try {
    const { tex, display } = JSON.parse(line);
    const html = katex.renderToString(tex, {
      displayMode: Boolean(display),
      output: "htmlAndMathml", // HTML for the eye, MathML for screen readers
      throwOnError: true,
      strict: "error",
      trust: false,
    });
    answer = { html };
  } catch (err) {
    answer = { error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
