#!/usr/bin/env node
// Builds the HTML reference served at /docs (dist/docs.html) from the published contract, self-contained.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const docsSource = join(root, 'codegen', 'openapi.published.json');
export const docsOutput = join(root, 'dist', 'docs.html');

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
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildDocs();
  console.log(`docs: wrote ${docsOutput}`);
}
