#!/usr/bin/env node
// TeX to SVG at build time, for the decks (MathJax 3 from npm, no browser, no network).
// Reads a JSON list of {tex, display} from standard input and writes {css, svgs} as JSON to
// standard output: MathJax's stylesheet for its SVG output (it hides the MathML from the
// eye), and the SVG containers (with hidden MathML for screen readers). A formula
// that MathJax cannot read is an error that names it: the deck must not show raw LaTeX.
"use strict";
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { SVG } = require("mathjax-full/js/output/svg.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

function converter() {
  const adaptor = liteAdaptor();
  AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
  const tex = new TeX({ packages: AllPackages, formatError: (jax, err) => { throw err; } });
  const svg = new SVG({ fontCache: "local" });
  const doc = mathjax.document("", { InputJax: tex, OutputJax: svg });
  const convert = (item) => adaptor.outerHTML(doc.convert(item.tex, { display: !!item.display }));
  convert.css = () => adaptor.textContent(svg.styleSheet(doc));
  return convert;
}

function main() {
  const chunks = [];
  process.stdin.on("data", (chunk) => chunks.push(chunk));
  process.stdin.on("end", () => {
    const items = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const convert = converter();
    const out = items.map((item) => {
      try {
        return convert(item);
      } catch (error) {
        process.stderr.write(`cannot typeset ${JSON.stringify(item.tex)}: ${error.message}\n`);
        process.exit(1);
      }
    });
    process.stdout.write(JSON.stringify({ css: convert.css(), svgs: out }));
  });
}

main();
