// The bundled contract (codegen/openapi.json, built from openapi/ by `npm run codegen`): the HTTP layer routes and
// validates by it, the MCP tools take their schemas from it, the tests check every response against it.
import { readFileSync } from 'node:fs';
import type { Document } from 'openapi-backend';
import { projectPath } from './paths.js';

export function loadDocument(): Document {
  return JSON.parse(readFileSync(projectPath('codegen', 'openapi.json'), 'utf8')) as Document;
}
