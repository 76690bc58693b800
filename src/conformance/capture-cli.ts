// npm run conformance:capture -- --base-url URL [--profile-url URL]
// Exits 1 when any captured response breaks its protocol schema.
import { parseArgs } from 'node:util';
import { captureSessions } from './capture.js';

const { values } = parseArgs({ options: { 'base-url': { type: 'string' }, 'profile-url': { type: 'string' } } });
if (!values['base-url']) {
  console.error('usage: npm run conformance:capture -- --base-url URL [--profile-url URL]');
  process.exit(2);
}
const result = await captureSessions({ baseUrl: values['base-url'], profileUrl: values['profile-url'] });
process.exit(result.errors === 0 ? 0 : 1);
