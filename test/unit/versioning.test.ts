import { describe, expect, it } from 'vitest';
import {
  checkNoticePeriods,
  deprecationHeader,
  resolveApiVersion,
  sunsetHeader,
  type ApiVersion,
} from '../../src/domain/versioning.js';

const versions: ApiVersion[] = [
  { version: '2026-07-16', released: '2026-07-16', changes: [] },
  { version: '2027-01-10', released: '2027-01-10', changes: [] },
];

describe('resolveApiVersion', () => {
  it('applies the current version when none is asked for', () => {
    expect(resolveApiVersion(undefined, versions)).toEqual({ ok: true, version: '2027-01-10' });
  });

  it('selects the newest version on or before the requested date', () => {
    expect(resolveApiVersion('2026-07-16', versions)).toEqual({ ok: true, version: '2026-07-16' });
    expect(resolveApiVersion('2026-12-31', versions)).toEqual({ ok: true, version: '2026-07-16' });
    expect(resolveApiVersion('2027-01-10', versions)).toEqual({ ok: true, version: '2027-01-10' });
    expect(resolveApiVersion('2030-01-01', versions)).toEqual({ ok: true, version: '2027-01-10' });
  });

  it.each(['2026-07-15', '1999-01-01', '2026-13-01', '2026-02-30', '16-07-2026', 'latest', '2026-7-16'])(
    'rejects %s',
    (requested) => {
      expect(resolveApiVersion(requested, versions).ok).toBe(false);
    },
  );
});

describe('retirement headers', () => {
  const entry = {
    subject: 's',
    method: '*',
    path: /x/,
    deprecatedAt: '2026-11-01',
    sunsetAt: '2027-02-01',
    description: 'd',
  };
  it('formats Deprecation as an RFC 9745 date and Sunset as an HTTP-date', () => {
    expect(deprecationHeader(entry)).toBe(`@${Date.UTC(2026, 10, 1) / 1000}`);
    expect(sunsetHeader(entry)).toBe('Mon, 01 Feb 2027 00:00:00 GMT');
  });
});

describe('retirement notice periods', () => {
  const entry = (deprecatedAt: string, sunsetAt: string) => ({
    subject: 'POST /x',
    method: 'POST',
    path: /x/,
    deprecatedAt,
    sunsetAt,
    description: 'd',
  });
  it('accepts 90 days or more of notice', () => {
    expect(checkNoticePeriods([entry('2026-11-01', '2027-01-30'), entry('2026-11-01', '2027-06-01')])).toHaveLength(2);
  });
  it('refuses less than 90 days, or a sunset that is not a date', () => {
    expect(() => checkNoticePeriods([entry('2026-11-01', '2027-01-29')])).toThrow(/89 days/);
    expect(() => checkNoticePeriods([entry('2026-11-01', 'soon')])).toThrow(/at least 90/);
  });
});
