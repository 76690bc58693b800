// Where a session's goods go: a postal address, checked before anything is priced from it. Pure: the caller supplies
// the countries the store ships to (region_countries); the codes come from ISO 3166 (the iso-3166 package: ISO
// 3166-1 alpha-2 countries, ISO 3166-2 subdivisions). Every problem names the field it is about, so each surface can
// report it in its own terms (docs/fulfilment-and-tax.md).
import { iso31661 } from 'iso-3166/1.js';
import { iso31661Alpha3ToAlpha2 } from 'iso-3166/1-a3-to-1-a2.js';
import { iso31662 } from 'iso-3166/2.js';
import { isStorableText } from './text.js';

/** An address as a caller sends it: free text, any case, codes or names. */
export interface DestinationInput {
  recipientName?: string | null;
  line1?: string | null;
  line2?: string | null;
  city?: string | null;
  /** The subdivision: its ISO 3166-2 code with or without the country (`QC`, `CA-QC`) or its ISO name (`Quebec`). */
  region?: string | null;
  postalCode?: string | null;
  /** ISO 3166-1 alpha-2 (alpha-3 is read as its alpha-2). */
  country?: string | null;
}

/** A checked address in canonical form: codes upper case, postal codes in their national layout. */
export interface Destination {
  recipientName: string;
  line1: string;
  line2: string | null;
  city: string;
  /** The full ISO 3166-2 code (`CA-QC`), or null where none was given and none is required. */
  region: string | null;
  postalCode: string | null;
  country: string;
}

export type DestinationField = keyof DestinationInput;

export type DestinationProblemCode =
  | 'required'
  | 'too_long'
  | 'invalid_text'
  | 'unknown_country'
  | 'not_shipped'
  | 'unknown_region'
  | 'invalid_postal_code'
  | 'postal_code_region_mismatch';

export interface DestinationProblem {
  field: DestinationField;
  code: DestinationProblemCode;
  /** One sentence that starts with the field's name. */
  message: string;
}

export type DestinationCheck = { ok: true; destination: Destination } | { ok: false; problems: DestinationProblem[] };

const MAX_LENGTH: Record<Exclude<DestinationField, 'country' | 'region'>, number> = {
  recipientName: 200,
  line1: 200,
  line2: 200,
  city: 100,
  postalCode: 16,
};

const ASSIGNED_COUNTRIES = new Set(iso31661.map((country) => country.alpha2));

/** Countries whose addresses need a subdivision: tax depends on it (US state sales tax, Canadian PST and HST). */
const REGION_REQUIRED = new Set(['US', 'CA']);

/**
 * Subdivisions outside the tax territory the store prices for, so not shipped to: US territories (their own tax
 * systems); EU-member territories outside the EU VAT area (Canary Islands, Ceuta, Melilla, the French overseas
 * departments and collectivities, the Caribbean parts of the Kingdom of the Netherlands).
 */
const NOT_SHIPPED_REGIONS = new Set([
  ...['AS', 'GU', 'MP', 'PR', 'UM', 'VI'].map((code) => `US-${code}`),
  ...['CN', 'GC', 'TF', 'CE', 'ML'].map((code) => `ES-${code}`),
  ...['971', '972', '973', '974', '976', 'BL', 'MF', 'NC', 'PF', 'PM', 'TF', 'WF', 'CP'].map((code) => `FR-${code}`),
  ...['AW', 'CW', 'SX', 'BQ1', 'BQ2', 'BQ3'].map((code) => `NL-${code}`),
]);

/**
 * The same territories (and a few without a subdivision of their own) found by postal code, since the region is
 * optional outside the US and Canada: Spain's 35/38 (Canary Islands), 51 (Ceuta), 52 (Melilla); France's 97/98
 * (overseas); Germany's Büsingen am Hochrhein and Heligoland; Italy's Livigno and Campione d'Italia (all outside the
 * EU VAT area); the UK's JE and GY (the Channel Islands, outside the UK's VAT area).
 */
const NOT_SHIPPED_POSTAL_CODES: Record<string, RegExp> = {
  ES: /^(35|38|51|52)/,
  FR: /^9[78]/,
  DE: /^(78266|27498)$/,
  IT: /^(23041|22061)$/,
  // Jersey and Guernsey (their own GST; the Isle of Man is inside the UK's VAT area).
  GB: /^(JE|GY)\d/,
};

interface PostalForm {
  /** Matches the canonical form (upper case, as `canonical` makes it). */
  pattern: RegExp;
  required: boolean;
  canonical(code: string): string;
  example: string;
}

const upper = (code: string) => code.toUpperCase();
/** Outward and inward parts with one space between (UK and Canadian codes), however the caller spaced them. */
const spacedBefore = (inward: number) => (code: string) => {
  const compact = code.toUpperCase().replace(/\s+/g, '');
  return `${compact.slice(0, -inward)} ${compact.slice(-inward)}`;
};

/** The national forms, exactly as each postal administration defines them (no lookup of whether a code is in use). */
const POSTAL_FORMS: Record<string, PostalForm> = {
  // ZIP or ZIP+4.
  US: { pattern: /^\d{5}(-\d{4})?$/, required: true, canonical: upper, example: '97201 or 97201-1234' },
  // Canada Post: letter digit letter, digit letter digit; D F I O Q U never used, W Z never first.
  CA: {
    pattern: /^[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] \d[ABCEGHJ-NPRSTV-Z]\d$/,
    required: true,
    canonical: spacedBefore(3),
    example: 'H2X 1Y4',
  },
  // The UK government data standard's postcode pattern (BS 7666), plus GIR 0AA.
  GB: {
    pattern:
      /^(GIR 0AA|[A-PR-UWYZ](\d{1,2}|[A-HK-Y]\d{1,2}|\d[A-HJKPSTUW]|[A-HK-Y]\d[ABEHMNPRV-Y]) \d[ABD-HJLNP-UW-Z]{2})$/,
    required: true,
    canonical: spacedBefore(3),
    example: 'SW1A 1AA',
  },
  // Japan Post: seven digits, written NNN-NNNN.
  JP: {
    pattern: /^\d{3}-\d{4}$/,
    required: true,
    canonical: (code) => (/^\d{7}$/.test(code) ? `${code.slice(0, 3)}-${code.slice(3)}` : code),
    example: '100-0001',
  },
  // Deutsche Post: five digits, 01001–99998 (no code starts 00).
  DE: { pattern: /^(0[1-9]|[1-9]\d)\d{3}$/, required: true, canonical: upper, example: '10115' },
  // La Poste: five digits (Corsica's 20xxx included).
  FR: { pattern: /^\d{5}$/, required: true, canonical: upper, example: '75001' },
  // Five digits, the first two the province (01–52).
  ES: { pattern: /^(0[1-9]|[1-4]\d|5[0-2])\d{3}$/, required: true, canonical: upper, example: '28013' },
  // CAP: five digits.
  IT: { pattern: /^\d{5}$/, required: true, canonical: upper, example: '00184' },
  // PostNL: four digits (no leading 0), a space, two letters (never SA, SD or SS).
  NL: {
    pattern: /^[1-9]\d{3} (?!SA|SD|SS)[A-Z]{2}$/,
    required: true,
    canonical: spacedBefore(2),
    example: '1012 AB',
  },
  // Eircode: routing key (D6W or a letter and two digits), a space, four characters; many addresses are delivered
  // without one, so it is optional.
  IE: {
    pattern: /^([AC-FHKNPRTV-Y]\d{2}|D6W) [0-9AC-FHKNPRTV-Y]{4}$/,
    required: false,
    canonical: spacedBefore(4),
    example: 'D02 X285',
  },
};

/** Canada Post's first letter of a postal code: the province or territory it serves. */
const CANADIAN_POSTAL_DISTRICTS: Record<string, string[]> = {
  A: ['CA-NL'],
  B: ['CA-NS'],
  C: ['CA-PE'],
  E: ['CA-NB'],
  G: ['CA-QC'],
  H: ['CA-QC'],
  J: ['CA-QC'],
  K: ['CA-ON'],
  L: ['CA-ON'],
  M: ['CA-ON'],
  N: ['CA-ON'],
  P: ['CA-ON'],
  R: ['CA-MB'],
  S: ['CA-SK'],
  T: ['CA-AB'],
  V: ['CA-BC'],
  X: ['CA-NT', 'CA-NU'],
  Y: ['CA-YT'],
};

interface Subdivision {
  code: string;
  name: string;
}

// Each country's subdivisions, indexed once as the module loads (about a millisecond): exact-size frozen slices of the
// package's own table (about 5,000 subdivisions, some 1.7 MiB of heap, loaded anyway), which lists a country's entries
// together, so the index adds some 70 KiB of references (less than the per-country copies a lazy memo made) and
// nothing in it changes.
const SUBDIVISIONS: ReadonlyMap<string, readonly Subdivision[]> = (() => {
  const index = new Map<string, readonly Subdivision[]>();
  const countryOf = (code: string) => code.slice(0, code.indexOf('-'));
  for (let start = 0, end = 1; start < iso31662.length; end += 1) {
    const country = countryOf(iso31662[start]!.code);
    if (end < iso31662.length && countryOf(iso31662[end]!.code) === country) continue;
    const run = iso31662.slice(start, end);
    const earlier = index.get(country); // a country listed in two places: its runs joined
    index.set(country, Object.freeze(earlier ? [...earlier, ...run] : run));
    start = end;
  }
  return index;
})();
const NO_SUBDIVISIONS: readonly Subdivision[] = Object.freeze([]);

function subdivisionsOf(country: string): readonly Subdivision[] {
  if (!ASSIGNED_COUNTRIES.has(country)) return NO_SUBDIVISIONS;
  return SUBDIVISIONS.get(country) ?? NO_SUBDIVISIONS;
}

const folded = (text: string) => text.normalize('NFC').toLocaleLowerCase('en');

/** The full ISO 3166-2 code `region` stands for in `country`, if any. */
export function subdivisionOf(country: string, region: string): string | undefined {
  const subdivisions = subdivisionsOf(country);
  const code = region.toUpperCase();
  const full = code.startsWith(`${country}-`) ? code : `${country}-${code}`;
  const byCode = subdivisions.find((subdivision) => subdivision.code === full);
  if (byCode) return byCode.code;
  const name = folded(region);
  return subdivisions.find((subdivision) => folded(subdivision.name) === name)?.code;
}

/** The subdivisions of `country` an address may name and be shipped to (its ISO 3166-2 codes less the exclusions). */
export function shippableSubdivisions(country: string): string[] {
  return subdivisionsOf(country)
    .map((subdivision) => subdivision.code)
    .filter((code) => !NOT_SHIPPED_REGIONS.has(code));
}

/** Whether addresses in `country` must name a subdivision. */
export function regionRequired(country: string): boolean {
  return REGION_REQUIRED.has(country);
}

/** A caller's text inside a message: quoted, escaped, cut short (the message is read by people and agents). */
function quoted(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

function problem(field: DestinationField, code: DestinationProblemCode, detail: string): DestinationProblem {
  return { field, code, message: `${field}: ${detail}` };
}

/** The trimmed text of a free-text field, or a problem; null when absent or blank. */
function textField(
  input: DestinationInput,
  field: Exclude<DestinationField, 'country' | 'region'>,
  problems: DestinationProblem[],
): string | null {
  const raw = input[field];
  if (raw === undefined || raw === null) return null;
  const text = raw.trim();
  if (!isStorableText(text) || /[\p{Cc}]/u.test(text)) {
    problems.push(problem(field, 'invalid_text', 'holds control characters'));
    return null;
  }
  if (text.length > MAX_LENGTH[field]) {
    problems.push(problem(field, 'too_long', `is longer than ${MAX_LENGTH[field]} characters`));
    return null;
  }
  return text === '' ? null : text;
}

/** A country as typed (ISO 3166-1 alpha-2 or alpha-3, any case) as its assigned alpha-2 code; undefined otherwise. */
export function countryCodeOf(text: string | null | undefined): string | undefined {
  const typed = (text ?? '').trim().toUpperCase();
  const code = Object.hasOwn(iso31661Alpha3ToAlpha2, typed) ? iso31661Alpha3ToAlpha2[typed]! : typed;
  return ASSIGNED_COUNTRIES.has(code) ? code : undefined;
}

/**
 * Checks an address against ISO 3166 and the national postal code forms, and that the store ships there.
 * `shipsTo` holds the ISO 3166-1 alpha-2 codes (any case) of the countries the store ships to.
 */
export function checkDestination(input: DestinationInput, shipsTo: Iterable<string>): DestinationCheck {
  const problems: DestinationProblem[] = [];
  const shipped = new Set([...shipsTo].map((code) => code.toUpperCase()));

  const recipientName = textField(input, 'recipientName', problems);
  const line1 = textField(input, 'line1', problems);
  const line2 = textField(input, 'line2', problems);
  const city = textField(input, 'city', problems);
  const rawPostalCode = textField(input, 'postalCode', problems);
  for (const [field, value] of [
    ['recipientName', recipientName],
    ['line1', line1],
    ['city', city],
  ] as const)
    if (value === null && !problems.some((found) => found.field === field))
      problems.push(problem(field, 'required', 'is required'));

  // Alpha-3 read as its alpha-2 (UCP's postal address still allows it, for backward compatibility).
  const typedCountry = (input.country ?? '').trim().toUpperCase();
  const countryText = Object.hasOwn(iso31661Alpha3ToAlpha2, typedCountry)
    ? iso31661Alpha3ToAlpha2[typedCountry]!
    : typedCountry;
  let country: string | null = null;
  if (countryText === '') problems.push(problem('country', 'required', 'is required'));
  else if (!/^[A-Z]{2}$/.test(countryText) || !ASSIGNED_COUNTRIES.has(countryText))
    problems.push(
      problem('country', 'unknown_country', `${quoted(countryText)} is not an ISO 3166-1 alpha-2 country code`),
    );
  else if (!shipped.has(countryText))
    problems.push(problem('country', 'not_shipped', `the store does not ship to ${countryText}`));
  else country = countryText;

  // The region and postal code are read against a known, shipped country only.
  let region: string | null = null;
  let postalCode: string | null = null;
  if (country !== null) {
    const regionText = (input.region ?? '').trim();
    if (regionText === '') {
      if (regionRequired(country)) problems.push(problem('region', 'required', `is required for ${country}`));
    } else {
      const code = subdivisionOf(country, regionText);
      if (code === undefined)
        problems.push(problem('region', 'unknown_region', `${quoted(regionText)} is not a subdivision of ${country}`));
      else if (NOT_SHIPPED_REGIONS.has(code))
        problems.push(problem('region', 'not_shipped', `the store does not ship to ${code}`));
      else region = code;
    }

    const form = POSTAL_FORMS[country];
    if (rawPostalCode === null) {
      if (form?.required && !problems.some((found) => found.field === 'postalCode'))
        problems.push(problem('postalCode', 'required', `is required for ${country}`));
    } else if (form) {
      const canonical = form.canonical(rawPostalCode);
      if (!form.pattern.test(canonical))
        problems.push(
          problem(
            'postalCode',
            'invalid_postal_code',
            `${quoted(rawPostalCode)} is not a ${country} postal code (e.g. ${form.example})`,
          ),
        );
      else if (NOT_SHIPPED_POSTAL_CODES[country]?.test(canonical))
        problems.push(problem('postalCode', 'not_shipped', `the store does not ship to ${country} ${canonical}`));
      else if (country === 'CA' && region !== null && !CANADIAN_POSTAL_DISTRICTS[canonical[0]!]!.includes(region))
        problems.push(
          problem(
            'postalCode',
            'postal_code_region_mismatch',
            `${quoted(canonical)} is not a postal code of ${region}`,
          ),
        );
      else postalCode = canonical;
    } else postalCode = rawPostalCode.toUpperCase();
  }

  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    destination: {
      recipientName: recipientName!,
      line1: line1!,
      line2,
      city: city!,
      region,
      postalCode,
      country: country!,
    },
  };
}
