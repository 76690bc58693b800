#!/usr/bin/env node
// What the published document (/openapi.json, committed as codegen/openapi.published.json) gives the tools its
// consumers run on it; CI runs this after Spectral (`npm run lint:published`). Exits 1 on any problem:
// - @apidevtools/swagger-parser (the validator inside orval and many pipelines) must find it valid;
// - openapi-typescript and @hey-api/openapi-ts each generate from it into a temporary folder, and each must emit one
//   operation (one SDK method) per operation of the document, named by its operationId, once: none for an alias
//   (`x-alias-of` in openapi/), which publish.mjs folds into the operation it repeats.
// `node codegen/check-consumers.mjs <document>` checks another document (the bundled one, with its aliases, fails).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createClient } from '@hey-api/openapi-ts';
import openapiTS, { astToString } from 'openapi-typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const documentPath = resolve(process.argv[2] ?? join(root, 'codegen', 'openapi.published.json'));
const bundled = JSON.parse(readFileSync(join(root, 'codegen', 'openapi.json'), 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const operationIds = (document) =>
  Object.values(document.paths).flatMap((item) =>
    METHODS.filter((method) => item[method]).map((method) => item[method].operationId),
  );
const published = JSON.parse(readFileSync(documentPath, 'utf8'));
const expected = operationIds(published);
const aliases = Object.values(bundled.paths).flatMap((item) =>
  METHODS.filter((method) => item[method]?.['x-alias-of']).map((method) => item[method].operationId),
);

const problems = [];
const count = (names, name) => names.filter((found) => found === name).length;

/** Each expected operationId exactly once among `names`, no alias, nothing else. */
function oneEach(tool, names) {
  for (const id of expected) if (count(names, id) !== 1) problems.push(`${tool}: ${count(names, id)} × ${id}`);
  for (const id of aliases) if (names.includes(id)) problems.push(`${tool}: emits the alias ${id}`);
  for (const name of new Set(names)) if (!expected.includes(name)) problems.push(`${tool}: unexpected ${name}`);
  console.log(`${tool}: ${names.length} operations for the document's ${expected.length}`);
}

try {
  await SwaggerParser.validate(documentPath);
  console.log('@apidevtools/swagger-parser: valid');
} catch (error) {
  problems.push(`@apidevtools/swagger-parser: ${error.message}`);
}

// openapi-typescript: one member of `operations` per operation, each referenced by one path item's method.
const types = astToString(await openapiTS(new URL(`file://${documentPath}`)));
const members = types.split('\nexport interface operations {\n')[1]?.split('\n}\n')[0] ?? '';
oneEach(
  'openapi-typescript',
  [...members.matchAll(/^ {4}"?([\w-]+)"?: \{$/gm)].map((match) => match[1]),
);
const references = [...types.matchAll(/: operations\["([\w-]+)"\];/g)].map((match) => match[1]);
for (const id of expected)
  if (count(references, id) !== 1) problems.push(`openapi-typescript: ${count(references, id)} paths use ${id}`);

// @hey-api/openapi-ts: one exported SDK function per operation.
const output = mkdtempSync(join(tmpdir(), 'hey-api-'));
try {
  await createClient({
    input: documentPath,
    output,
    plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
    logs: { level: 'silent', file: false },
  });
  const sdk = readFileSync(join(output, 'sdk.gen.ts'), 'utf8');
  oneEach(
    '@hey-api/openapi-ts',
    [...sdk.matchAll(/^export const (\w+) = </gm)].map((match) => match[1]),
  );
} finally {
  rmSync(output, { recursive: true, force: true });
}

if (problems.length) {
  console.error(`${documentPath}:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
