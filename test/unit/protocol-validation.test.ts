// Untrusted input is validated in time linear in its size (issue #29, finding 2): the validators of request bodies,
// tool arguments and platform profiles stop at the first error. Collecting every error of a failing array, as they did,
// costs more than quadratic time in its length: 36 kB of empty objects held the event loop for 8 s. The time itself is
// the benchmark's (bench/stalls.ts); here, the work: one error reported, not one per item.
import { describe, expect, it } from 'vitest';
import { REQUEST_SCHEMAS, requestProblem } from '../../src/protocols/requests.js';
import { protocolSchemaProblems, protocolValidators, schemaByRef } from '../../src/protocols/schemas.js';
import { withInformativeFields } from '../../src/services/ucp-profiles.js';

const validators = protocolValidators();

const empties = (count: number) => Array.from({ length: count }, () => ({}));

describe('validation of untrusted input stops at the first error', () => {
  it('an ACP update of 12,000 empty fulfillment groups: one error, at the first group', () => {
    const body = { fulfillment_groups: empties(12_000) };
    const validate = schemaByRef(validators, 'request:acp.update', REQUEST_SCHEMAS['acp.update']);
    expect(validate(body)).toBe(false);
    expect(validate.errors).toHaveLength(1);
    expect(requestProblem(validators, 'acp.update', body)).toEqual({
      kind: 'missing',
      path: '$.fulfillment_groups[0].id',
      message: '$.fulfillment_groups[0].id is required.',
    });
  });

  it('a UCP line array whose every line fails: the first failing line, once', () => {
    const body = { line_items: [{ item: { id: 'variant_a' }, quantity: 1 }, ...empties(99)] };
    const validate = schemaByRef(validators, 'request:ucp.update', REQUEST_SCHEMAS['ucp.update']);
    expect(validate(body)).toBe(false);
    expect(validate.errors).toHaveLength(1);
    expect(requestProblem(validators, 'ucp.update', body)?.path).toBe('$.line_items[1].item');
  });

  it('a platform profile whose checkout capability is 8,000 empty objects: one problem, named by its path', () => {
    const profile = { ucp: { version: '2026-04-08', capabilities: { 'dev.ucp.shopping.checkout': empties(8_000) } } };
    const problems = protocolSchemaProblems(validators, 'ucp.platform_profile', profile);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe('/ucp/capabilities/dev.ucp.shopping.checkout/0');
  });

  it('still finds a top-level field a closed request does not have before what it lacks (`items` for `line_items`)', () => {
    expect(
      requestProblem(validators, 'acp.create', { items: [{ id: 'variant_a', quantity: 1 }], currency: 'usd' }),
    ).toEqual({
      kind: 'unknown',
      path: '$.items',
      message: '$.items is not a field of this request.',
    });
  });
});

describe('a platform profile without its informative fields', () => {
  it('is filled in, naming the first five fields filled and counting the rest (work bounded by the profile, not by names)', () => {
    const entries = Array.from({ length: 10_000 }, () => ({ version: '2026-04-08' }));
    const profile = { ucp: { version: '2026-04-08', capabilities: { 'dev.ucp.shopping.checkout': entries } } };
    const { profile: filled, filled: named, missing } = withInformativeFields(profile);
    expect(missing).toBe(20_000);
    expect(named).toEqual([
      "$.ucp.capabilities['dev.ucp.shopping.checkout'][0].spec",
      "$.ucp.capabilities['dev.ucp.shopping.checkout'][0].schema",
      "$.ucp.capabilities['dev.ucp.shopping.checkout'][1].spec",
      "$.ucp.capabilities['dev.ucp.shopping.checkout'][1].schema",
      "$.ucp.capabilities['dev.ucp.shopping.checkout'][2].spec",
    ]);
    const list = (filled as typeof profile).ucp.capabilities['dev.ucp.shopping.checkout'] as Array<
      Record<string, unknown>
    >;
    expect(list).toHaveLength(10_000);
    for (const entry of [list[0]!, list[9_999]!])
      expect(Object.keys(entry).sort()).toEqual(['schema', 'spec', 'version']);
    // Entries that have them are kept as they are.
    const complete = { version: '2026-04-08', spec: 'https://ucp.dev/s', schema: 'https://ucp.dev/j' };
    const kept = withInformativeFields({ ucp: { capabilities: { a: [complete] } } });
    expect(kept.missing).toBe(0);
    expect((kept.profile as any).ucp.capabilities.a[0]).toBe(complete);
  });
});
