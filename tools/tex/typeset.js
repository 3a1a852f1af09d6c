#!/usr/bin/env node
// TeX typeset at build time (MathJax 3 from npm, no browser, no network), for the book's
// pages (CommonHTML, as MathJax draws it in a browser) and the decks (SVG).
//
//   node typeset.js chtml FONT_URL   |   node typeset.js svg
//
// Reads a JSON list of {tex, display} from standard input and writes {css, html} as JSON to
// standard output: MathJax's stylesheet for what it drew (for CommonHTML, the glyphs used,
// with its web fonts at FONT_URL), and each formula's container, with the hidden MathML that
// screen readers read. A formula that MathJax cannot read is an error that names it: no page
// may show raw LaTeX.
"use strict";
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { CHTML } = require("mathjax-full/js/output/chtml.js");
const { SVG } = require("mathjax-full/js/output/svg.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

function outputJax(kind, fontURL) {
  if (kind === "chtml") return new CHTML({ fontURL: fontURL, adaptiveCSS: true });
  if (kind === "svg") return new SVG({ fontCache: "local" });
  throw new Error(`unknown output ${JSON.stringify(kind)}: chtml or svg`);
}

// In a browser MathJax scales its glyphs so that their x-height matches the text's: on the
// book's pages it measured 127.3% (an x-height of 9 px in a 16 px font, against 0.442 em for
// its TeX fonts). Under Node nothing can be measured: the pages get that scale.
const PAGE_SCALE = 9 / 16 / 0.442;

function converter(kind, fontURL) {
  const adaptor = liteAdaptor();
  AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
  const tex = new TeX({ packages: AllPackages, formatError: (jax, err) => { throw err; } });
  const output = outputJax(kind, fontURL);
  const doc = mathjax.document("", { InputJax: tex, OutputJax: output });
  const scale = kind === "chtml" ? PAGE_SCALE : 1;
  const convert = (item) =>
    adaptor.outerHTML(doc.convert(item.tex, { display: !!item.display, scale: scale }));
  convert.css = () => adaptor.textContent(output.styleSheet(doc));
  return convert;
}

function typesetAll(items, convert) {
  return items.map((item) => {
    try {
      return convert(item);
    } catch (error) {
      process.stderr.write(`cannot typeset ${JSON.stringify(item.tex)}: ${error.message}\n`);
      process.exit(1);
    }
  });
}

function main() {
  const [kind, fontURL] = process.argv.slice(2);
  const chunks = [];
  process.stdin.on("data", (chunk) => chunks.push(chunk));
  process.stdin.on("end", () => {
    const items = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const convert = converter(kind, fontURL || "");
    const html = typesetAll(items, convert);
    process.stdout.write(JSON.stringify({ css: convert.css(), html: html }));
  });
}

main();
