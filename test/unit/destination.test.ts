// Checking a destination address: ISO 3166 codes, the store's countries, national postal code forms, and problems
// that name their field.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkDestination,
  shippableSubdivisions,
  subdivisionOf,
  type DestinationInput,
  type DestinationProblem,
} from '../../src/domain/destination.js';

/** The seed's region_countries. */
const SHIPS_TO = ['us', 'de', 'fr', 'nl', 'ie', 'es', 'it', 'gb', 'ca', 'jp'];

const address = (overrides: DestinationInput): DestinationInput => ({
  recipientName: 'Ada Lovelace',
  line1: '1 Main Street',
  city: 'Springfield',
  ...overrides,
});

const problemsOf = (input: DestinationInput): Array<Pick<DestinationProblem, 'field' | 'code'>> => {
  const check = checkDestination(input, SHIPS_TO);
  return check.ok ? [] : check.problems.map(({ field, code }) => ({ field, code }));
};

describe('checkDestination', () => {
  it.each<[string, DestinationInput, Partial<DestinationInput>]>([
    [
      'Oregon',
      { country: 'us', region: 'or', postalCode: '97201' },
      { country: 'US', region: 'US-OR', postalCode: '97201' },
    ],
    [
      'California by name, ZIP+4',
      { country: 'US', region: 'California', postalCode: '94043-1351' },
      { region: 'US-CA', postalCode: '94043-1351' },
    ],
    [
      'Quebec, code spaced as typed',
      { country: 'CA', region: 'CA-QC', postalCode: 'h2x1y4' },
      { region: 'CA-QC', postalCode: 'H2X 1Y4' },
    ],
    ['Alberta', { country: 'CA', region: 'AB', postalCode: 'T2P 1J9' }, { region: 'CA-AB', postalCode: 'T2P 1J9' }],
    [
      'Germany without a Land',
      { country: 'DE', postalCode: '10115' },
      { country: 'DE', region: null, postalCode: '10115' },
    ],
    ['Germany with a Land', { country: 'de', region: 'BE', postalCode: '10115' }, { region: 'DE-BE' }],
    ['London', { country: 'GB', postalCode: 'sw1a1aa' }, { postalCode: 'SW1A 1AA' }],
    ['Manchester', { country: 'GB', postalCode: 'M1 1AE' }, { postalCode: 'M1 1AE' }],
    [
      'Tokyo, seven digits',
      { country: 'JP', region: '13', postalCode: '1000001' },
      { region: 'JP-13', postalCode: '100-0001' },
    ],
    ['Amsterdam', { country: 'NL', postalCode: '1012ab' }, { postalCode: '1012 AB' }],
    ['Dublin with an Eircode', { country: 'IE', postalCode: 'D02X285' }, { postalCode: 'D02 X285' }],
    ['Ireland without an Eircode', { country: 'IE' }, { postalCode: null }],
    ['Madrid', { country: 'ES', region: 'MD', postalCode: '28013' }, { region: 'ES-MD' }],
    ['Rome, a province', { country: 'IT', region: 'RM', postalCode: '00184' }, { region: 'IT-RM' }],
    ['Paris', { country: 'FR', postalCode: '75001' }, { postalCode: '75001' }],
    ['Germany by its alpha-3 code', { country: 'deu', postalCode: '10115' }, { country: 'DE' }],
  ])('accepts %s, in canonical form', (_, input, expected) => {
    const check = checkDestination(address(input), SHIPS_TO);
    expect(check).toMatchObject({ ok: true, destination: expected });
  });

  it.each<[string, DestinationInput, Array<Pick<DestinationProblem, 'field' | 'code'>>]>([
    ['an unknown country', { country: 'XX' }, [{ field: 'country', code: 'unknown_country' }]],
    [
      'a three-letter non-country',
      { country: 'DEX', postalCode: '10115' },
      [{ field: 'country', code: 'unknown_country' }],
    ],
    ['a country name', { country: 'Germany', postalCode: '10115' }, [{ field: 'country', code: 'unknown_country' }]],
    [
      'a country the store does not ship to',
      { country: 'AT', postalCode: '1010' },
      [{ field: 'country', code: 'not_shipped' }],
    ],
    ['no country', {}, [{ field: 'country', code: 'required' }]],
    [
      'a region not in the country',
      { country: 'US', region: 'QC', postalCode: '97201' },
      [{ field: 'region', code: 'unknown_region' }],
    ],
    [
      'a made-up province',
      { country: 'CA', region: 'ZZ', postalCode: 'T2P 1J9' },
      [{ field: 'region', code: 'unknown_region' }],
    ],
    ['a US address without a state', { country: 'US', postalCode: '97201' }, [{ field: 'region', code: 'required' }]],
    [
      'Puerto Rico (own tax system)',
      { country: 'US', region: 'PR', postalCode: '00901' },
      [{ field: 'region', code: 'not_shipped' }],
    ],
    [
      'the Canary Islands by region',
      { country: 'ES', region: 'CN', postalCode: '35001' },
      [
        { field: 'region', code: 'not_shipped' },
        { field: 'postalCode', code: 'not_shipped' },
      ],
    ],
    [
      'the Canary Islands by postal code',
      { country: 'ES', postalCode: '38001' },
      [{ field: 'postalCode', code: 'not_shipped' }],
    ],
    ['Réunion by postal code', { country: 'FR', postalCode: '97400' }, [{ field: 'postalCode', code: 'not_shipped' }]],
    [
      'Jersey as a UK postcode',
      { country: 'GB', postalCode: 'JE2 3AB' },
      [{ field: 'postalCode', code: 'not_shipped' }],
    ],
    ['Heligoland', { country: 'DE', postalCode: '27498' }, [{ field: 'postalCode', code: 'not_shipped' }]],
    [
      'a short ZIP',
      { country: 'US', region: 'OR', postalCode: '9720' },
      [{ field: 'postalCode', code: 'invalid_postal_code' }],
    ],
    [
      'a Canadian code with a D',
      { country: 'CA', region: 'ON', postalCode: 'K1D 1A1' },
      [{ field: 'postalCode', code: 'invalid_postal_code' }],
    ],
    [
      'an Ontario code in Quebec',
      { country: 'CA', region: 'QC', postalCode: 'K1A 0B1' },
      [{ field: 'postalCode', code: 'postal_code_region_mismatch' }],
    ],
    [
      'a UK code with a bad inward part',
      { country: 'GB', postalCode: 'SW1A 1CA' },
      [{ field: 'postalCode', code: 'invalid_postal_code' }],
    ],
    [
      'a German code starting 00',
      { country: 'DE', postalCode: '00123' },
      [{ field: 'postalCode', code: 'invalid_postal_code' }],
    ],
    [
      'a Japanese code of six digits',
      { country: 'JP', postalCode: '100001' },
      [{ field: 'postalCode', code: 'invalid_postal_code' }],
    ],
    [
      'a Dutch code ending SS',
      { country: 'NL', postalCode: '1012 SS' },
      [{ field: 'postalCode', code: 'invalid_postal_code' }],
    ],
    [
      'a Spanish province 53',
      { country: 'ES', postalCode: '53001' },
      [{ field: 'postalCode', code: 'invalid_postal_code' }],
    ],
    ['a missing postal code', { country: 'JP' }, [{ field: 'postalCode', code: 'required' }]],
  ])('refuses %s, naming the field', (_, input, expected) => {
    expect(problemsOf(address(input))).toEqual(expected);
  });

  it('names every missing part at once, each message starting with its field', () => {
    const check = checkDestination({ country: 'US', region: 'OR', postalCode: '97201', line1: '  ' }, SHIPS_TO);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems.map(({ field, code }) => [field, code])).toEqual([
      ['recipientName', 'required'],
      ['line1', 'required'],
      ['city', 'required'],
    ]);
    for (const problem of check.problems) expect(problem.message.startsWith(`${problem.field}: `)).toBe(true);
  });

  it('refuses control characters and overlong text', () => {
    expect(problemsOf(address({ country: 'DE', postalCode: '10115', line1: 'a\u0000b' }))).toEqual([
      { field: 'line1', code: 'invalid_text' },
    ]);
    expect(problemsOf(address({ country: 'DE', postalCode: '10115', city: 'x'.repeat(101) }))).toEqual([
      { field: 'city', code: 'too_long' },
    ]);
  });

  it('knows the subdivisions: the 50 states and DC, the 13 provinces and territories, the 47 prefectures', () => {
    expect(shippableSubdivisions('US')).toHaveLength(51);
    expect(shippableSubdivisions('US')).toContain('US-DC');
    expect(shippableSubdivisions('CA')).toHaveLength(13);
    expect(shippableSubdivisions('JP')).toHaveLength(47);
    expect(subdivisionOf('CA', 'Quebec')).toBe('CA-QC');
    expect(subdivisionOf('US', 'us-ny')).toBe('US-NY');
    expect(subdivisionOf('US', 'Narnia')).toBeUndefined();
  });

  it('accepts every shippable US and Canadian subdivision, and never throws on any input', () => {
    for (const region of shippableSubdivisions('US'))
      expect(checkDestination(address({ country: 'US', region, postalCode: '10001' }), SHIPS_TO).ok).toBe(true);
    const field = fc.option(fc.string({ maxLength: 30 }), { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({
          recipientName: field,
          line1: field,
          line2: field,
          city: field,
          region: field,
          postalCode: field,
          country: field,
        }),
        (input) => {
          const check = checkDestination(input, SHIPS_TO);
          if (!check.ok) {
            expect(check.problems.length).toBeGreaterThan(0);
            for (const problem of check.problems) expect(problem.message.startsWith(`${problem.field}: `)).toBe(true);
          }
        },
      ),
    );
  });

  it('reads every valid Canadian postal code in any spacing and case as the same code', () => {
    const letters = 'ABCEGHJKLMNPRSTVXY';
    const later = 'ABCEGHJKLMNPRSTVWXYZ';
    const digit = fc.integer({ min: 0, max: 9 });
    fc.assert(
      fc.property(
        fc.constantFrom(...letters),
        digit,
        fc.constantFrom(...later),
        digit,
        fc.constantFrom(...later),
        digit,
        fc.constantFrom('', ' ', '  '),
        (a, b, c, d, e, f, space) => {
          const canonical = `${a}${b}${c} ${d}${e}${f}`;
          const typed = `${a}${b}${c}${space}${d}${e}${f}`.toLowerCase();
          const check = checkDestination(address({ country: 'CA', postalCode: typed, region: null }), SHIPS_TO);
          expect(check).toMatchObject({ ok: false, problems: [{ field: 'region', code: 'required' }] });
          const province =
            {
              A: 'NL',
              B: 'NS',
              C: 'PE',
              E: 'NB',
              G: 'QC',
              H: 'QC',
              J: 'QC',
              R: 'MB',
              S: 'SK',
              T: 'AB',
              V: 'BC',
              X: 'NT',
              Y: 'YT',
            }[a] ?? 'ON';
          const placed = checkDestination(address({ country: 'CA', postalCode: typed, region: province }), SHIPS_TO);
          expect(placed).toMatchObject({ ok: true, destination: { postalCode: canonical } });
        },
      ),
    );
  });
});

describe('checkDestination messages', () => {
  it('quote what the caller sent, escaped and cut short', () => {
    const check = checkDestination(
      address({ country: 'US', region: `Q\n${'x'.repeat(100)}`, postalCode: '97201' }),
      SHIPS_TO,
    );
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems).toEqual([
      {
        field: 'region',
        code: 'unknown_region',
        message: `region: "Q\\n${'x'.repeat(38)}…" is not a subdivision of US`,
      },
    ]);
  });
});
