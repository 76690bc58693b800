#!/usr/bin/env node
/* global URL */
// storefront-conformance URL [--fixture FILE] [--json FILE] [--junit FILE] … (docs/conformance.md).
// Runs the runner's TypeScript source through tsx, as `npm run conformance` does, so the command always runs the code
// of this checkout; where dev dependencies are not installed (no tsx), the build that `npm ci` makes through `prepare`.
const source = new URL('../src/conformance/cli.ts', import.meta.url);
let register;
try {
  ({ register } = await import('tsx/esm/api'));
} catch {
  register = undefined;
}
if (register) {
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/src/conformance/cli.js', import.meta.url).href);
}
