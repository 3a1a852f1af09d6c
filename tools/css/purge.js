#!/usr/bin/env node
// The theme's style sheets cut to the rules the built site can use (PurgeCSS from npm).
//
//   node purge.js OUTDIR STYLESHEET...
//
// Each STYLESHEET (a path under OUTDIR) keeps the rules whose selectors name something that
// the site's pages or its scripts mention: a class, an id, an element, an attribute or its
// value. The scripts count too, so that what they add while the reader uses a page (the
// theme's sidebars and dark mode, Bootstrap's dropdowns) keeps its style. Unused @font-face,
// @keyframes and custom properties go as well. Each sheet is rewritten in place, without its
// source map (which would no longer match), and its sizes before and after are printed as
// JSON on standard output.
"use strict";
const fs = require("fs");
const path = require("path");
const { PurgeCSS } = require("purgecss");

async function main([outdir, ...sheets]) {
  if (!outdir || sheets.length === 0) throw new Error("usage: node purge.js OUTDIR STYLESHEET...");
  const files = sheets.map((sheet) => path.join(outdir, sheet));
  const results = await new PurgeCSS().purge({
    content: [path.join(outdir, "**/*.html"), path.join(outdir, "_static/**/*.js")],
    css: files,
    fontFace: true,
    keyframes: true,
    variables: true,
  });
  const sizes = {};
  for (const { file, css } of results) {
    const before = fs.statSync(file).size;
    const lean = css.replace(/\/\*# sourceMappingURL=[^*]*\*\/\s*$/, "");
    fs.writeFileSync(file, lean);
    fs.rmSync(`${file}.map`, { force: true });
    sizes[path.relative(outdir, file)] = [before, Buffer.byteLength(lean)];
  }
  process.stdout.write(JSON.stringify(sizes));
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
