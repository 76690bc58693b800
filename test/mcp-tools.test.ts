// A cached tool remembers the cache key of arguments it has checked by their JSON text as parsed (src/mcp/tools.ts),
// so a repeated call is neither checked nor canonicalized again. JSON.stringify writes a number JSON cannot hold
// (1e400 parses as Infinity) as null: a tool that accepts null must never answer such a number from null's entry.
import { describe, expect, it } from 'vitest';
import { createReadCache } from '../src/http/caching.js';
import { createLogger } from '../src/log.js';
import type { ObjectSchema } from '../src/mcp/schemas.js';
import { defineTool } from '../src/mcp/tools.js';
import { createValidatorRegistry } from '../src/validators.js';

interface Probe {
  n?: number | null;
}

const log = createLogger('silent');
const readCache = createReadCache();
const tool = defineTool<Probe, Probe>(
  {
    name: 'probe_nullable',
    title: 'Probe',
    description: 'Answers its argument.',
    annotations: { readOnlyHint: true },
    inputSchema: {
      type: 'object',
      properties: { n: { type: ['integer', 'null'], maximum: 10 } },
      additionalProperties: false,
    } as ObjectSchema<Probe>,
    outputSchema: { type: 'object', properties: { n: {} } } as ObjectSchema<Probe>,
    run: (args) => Promise.resolve({ n: args.n ?? null }),
  },
  createValidatorRegistry(),
  readCache,
);

describe('the cache key remembered by the arguments’ text', () => {
  it('answers a repeated call, and one of the same meaning in other text, from the entry', async () => {
    await tool.call({ n: 1 }, () => log);
    const stored = tool.cached!({ n: 1 });
    expect(JSON.parse(stored!.toString()).structuredContent).toEqual({ n: 1 });
    expect(tool.cached!({ n: 1 })).toBe(stored);
    expect(tool.cached!({ n: 1.0 })).toBe(stored);
    expect(tool.cached!({ n: 2 })).toBeUndefined();
  });

  it('never takes a number JSON cannot hold (Infinity, written null) for null', async () => {
    await tool.call({ n: null }, () => log);
    expect(JSON.parse(tool.cached!({ n: null })!.toString()).structuredContent).toEqual({ n: null });
    expect(tool.cached!({ n: null })).toBeDefined();
    // Refused by the schema (above the maximum), as the general chain refuses it.
    expect(tool.cached!({ n: Infinity })).toBeUndefined();
    expect(JSON.parse(await tool.call({ n: Infinity }, () => log)).isError).toBe(true);
  });
});
