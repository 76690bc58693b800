#!/usr/bin/env node
// Builds the HTML reference served at /docs (dist/docs.html) from the published contract, self-contained: a reader's
// browser asks nothing of any other host (no telemetry, no logo from Redocly's CDN), and every sidebar link also
// works opened in a new tab.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const docsSource = join(root, 'codegen', 'openapi.published.json');
export const docsOutput = join(root, 'dist', 'docs.html');
/** What the page is made from: a newer one of these means the page is stale. */
export const docsInputs = [docsSource, fileURLToPath(import.meta.url), join(root, 'redocly.yaml')];

// Redoc fetches its "API docs by Redocly" logo from this CDN; the page carries the wordmark itself instead.
const CDN_LOGOS = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];
const LOGO = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="18" viewBox="0 0 64 18">' +
    '<text x="0" y="14" font-family="sans-serif" font-size="14" font-weight="600" fill="#0044d4">Redocly</text></svg>',
)}`;

const SERVER_RENDERED = /(<div id="redoc">)([\s\S]*?)(<\/div>\s*<script type="module">)/;

/**
 * The page routes by the URL's fragment (Redoc's default hash router: `/docs#/section/money`), but
 * `redocly build-docs` pre-renders the sidebar for a router at the site root (`/section/money`), and hydration keeps
 * those hrefs: opened in a new tab they left the page for the API's 404. The pre-rendered links get the hash form
 * the browser renders itself.
 */
function hashRoutedLinks(html) {
  const match = SERVER_RENDERED.exec(html);
  if (!match) throw new Error('build-docs: the pre-rendered <div id="redoc"> was not found; check the Redocly output');
  const markup = match[2].replace(/href="\/(?!\/)/g, 'href="#/');
  return html.replace(SERVER_RENDERED, (_whole, open, _markup, close) => open + markup + close);
}

function inlineLogo(html) {
  let page = html;
  for (const url of CDN_LOGOS) {
    if (!page.includes(url)) throw new Error(`build-docs: Redoc no longer loads ${url}; check what it loads instead`);
    page = page.replaceAll(url, LOGO);
  }
  return page;
}

export function buildDocs() {
  execFileSync(
    join(root, 'node_modules', '.bin', 'redocly'),
    ['build-docs', docsSource, '--output', docsOutput, '--inlineBundle', '--title', 'Storefront Commerce API'],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  writeFileSync(docsOutput, inlineLogo(hashRoutedLinks(readFileSync(docsOutput, 'utf8'))));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildDocs();
  console.log(`docs: wrote ${docsOutput}`);
}
