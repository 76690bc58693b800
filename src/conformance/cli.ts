// npm run conformance -- --base-url URL [--protocol ucp|acp] [--lenient] [--profile-url URL]
// Exits 1 when any check fails.
import { parseArgs } from 'node:util';
import { runConformance } from './runner.js';

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    protocol: { type: 'string' },
    lenient: { type: 'boolean', default: false },
    'profile-url': { type: 'string' },
  },
});
const baseUrl = values['base-url'];
if (!baseUrl || (values.protocol !== undefined && values.protocol !== 'ucp' && values.protocol !== 'acp')) {
  console.error('usage: npm run conformance -- --base-url URL [--protocol ucp|acp] [--lenient] [--profile-url URL]');
  process.exit(2);
}
const result = await runConformance({
  baseUrl,
  protocol: values.protocol as 'ucp' | 'acp' | undefined,
  lenient: values.lenient,
  profileUrl: values['profile-url'],
});
process.exit(result.fail === 0 ? 0 : 1);
