// The request's flat header list (src/http/response-headers.ts): a name set again replaces the earlier header in place,
// whatever its case, as Node's setHeader does; names that only share a length or a first letter stay apart.
import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { answersFlat, ResponseHeaders, withFlush, writesFlat } from '../../src/http/response-headers.js';

/** A response that records what the list writes to it. */
function recordingResponse() {
  const written: { status?: number; headers?: string[]; set: Array<[string, string]> } = { set: [] };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => written.set.push([name, value]),
    hasHeader: (name: string) => written.set.some(([set]) => set.toLowerCase() === name.toLowerCase()),
    writeHead: (status: number, headers: string[]) => {
      written.status = status;
      written.headers = [...headers];
    },
    end: () => undefined,
  } as unknown as ServerResponse;
  return { res, written };
}

function answered(list: ResponseHeaders, written: ReturnType<typeof recordingResponse>['written']): string[] {
  list.answer(200, Buffer.from('{}'));
  list.finish({ method: 'GET', writable: true });
  return written.headers!;
}

describe('the flat header list', () => {
  it('replaces a header set again under another case, in its place', () => {
    const { res, written } = recordingResponse();
    const list = new ResponseHeaders(res, ['X-Request-Id', 'a', 'Cache-Control', 'no-store', 'Vary', 'Origin']);
    list.set('cache-control', 'public, max-age=60');
    list.set('VARY', 'Origin, Accept');
    expect(answered(list, written)).toEqual([
      'X-Request-Id',
      'a',
      'cache-control',
      'public, max-age=60',
      'VARY',
      'Origin, Accept',
    ]);
  });

  it('keeps apart names of one length, or one first letter, that are not the same name', () => {
    const { res, written } = recordingResponse();
    const list = new ResponseHeaders(res, ['ETag', '"1"', 'Referrer-Policy', 'no-referrer']);
    list.set('Vary', 'Origin'); // the length of ETag
    list.set('RateLimit-Limit', '600'); // the length of Referrer-Policy, and its first letter
    list.set('Retry-After', '1'); // its first letter only
    expect(list.has('etag')).toBe(true);
    expect(list.has('ratelimit-limit')).toBe(true);
    expect(list.has('Age')).toBe(false);
    expect(answered(list, written)).toEqual([
      'ETag',
      '"1"',
      'Referrer-Policy',
      'no-referrer',
      'Vary',
      'Origin',
      'RateLimit-Limit',
      '600',
      'Retry-After',
      '1',
    ]);
  });

  it('sets every header on the response, in order, once flushed, and later ones directly', () => {
    const { res, written } = recordingResponse();
    const list = new ResponseHeaders(res, ['X-Request-Id', 'a', 'Cache-Control', 'no-store']);
    list.flush();
    list.set('Age', '3');
    expect(written.set).toEqual([
      ['X-Request-Id', 'a'],
      ['Cache-Control', 'no-store'],
      ['Age', '3'],
    ]);
    expect(list.pending).toBe(false);
  });
});

describe('a pipeline with the flat list', () => {
  const errors = () => undefined;
  const cors = writesFlat(() => undefined);
  const readCache = answersFlat(() => undefined);
  const bodyReader = () => undefined;

  it('flushes the list before the first step that is not flat', () => {
    const steps = withFlush([errors, cors, readCache, bodyReader], 'GET /x');
    expect(steps).toHaveLength(5);
    expect(steps.slice(0, 3)).toEqual([errors, cors, readCache]);
    expect(steps[4]).toBe(bodyReader);
    expect([errors, cors, readCache, bodyReader]).not.toContain(steps[3]);
  });

  it('refuses a step that answers from the list after the list is flushed', () => {
    expect(() => withFlush([errors, cors, bodyReader, readCache], 'GET /x')).toThrow(
      'GET /x: a step that answers from the header list comes after a step that is not flat',
    );
  });
});
