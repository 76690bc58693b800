// API versions of the checkout endpoints and announced retirements, listed once. GET /changelog publishes both;
// the versioning middleware applies them to requests.

export interface ApiVersion {
  version: string; // YYYY-MM-DD
  released: string;
  changes: string[];
}

/** A route or field scheduled for removal. Requests it applies to get Deprecation/Sunset headers. */
export interface Deprecation {
  subject: string; // e.g. "POST /checkout_sessions/{id}/complete" or "field payment_provider.note"
  method: string; // the request method it applies to, or "*"
  path: RegExp; // the request paths it applies to
  deprecatedAt: string; // ISO date the deprecation took effect
  sunsetAt: string; // ISO date of removal; at least 90 days after deprecatedAt
  description: string;
}

export const API_VERSIONS: ApiVersion[] = [
  {
    version: '2026-07-16',
    released: '2026-07-16',
    changes: [
      'Checkout sessions: create, get, complete (always 422 delegated_payment_not_supported) and cancel.',
      'Totals per line and per session in major units, with discount allocation and tax per line.',
      'Idempotency-Key on session creation; promo codes reported in messages when they do not apply.',
      'Added 2026-11-24 (additive, no new version): sessions a human paid become orders. Status `completed`, an `order` object {id, order_number, status, permalink_url} and totals as charged; cancelling a completed session answers 409 session_completed.',
      'Added 2026-11-27 (additive, no new version): a destination. Create takes an optional `shipping_address` and `shipping_option` (standard or express); POST /checkout_sessions/{id} sets or changes them (400 invalid_address naming the field, the session unchanged; 409 session_completed or session_canceled). Sessions show `totals_estimated`, `tax_included` and, with an address, `shipping_address`, `shipping_options`, `shipping_option`, `shipping_tax` and `tax_lines` (tax by jurisdiction). Only a session given an address is priced differently: tax at the destination, by jurisdiction; in the EU, the UK and Japan its amounts include tax (`tax_included: true`, total = subtotal − discount + shipping).',
    ],
  },
];

/** Nothing is being retired today. Add an entry here to announce a retirement (at least 90 days ahead). */
export const DEPRECATIONS: Deprecation[] = [];

const MIN_SUNSET_NOTICE_DAYS = 90;

export type VersionResolution = { ok: true; version: string } | { ok: false; reason: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

export function currentVersion(versions: ApiVersion[] = API_VERSIONS): string {
  return versions[versions.length - 1]!.version;
}

/** The newest version on or before the requested date; omitted means the current one. */
export function resolveApiVersion(
  requested: string | undefined,
  versions: ApiVersion[] = API_VERSIONS,
): VersionResolution {
  if (requested === undefined || requested.trim() === '') return { ok: true, version: currentVersion(versions) };
  const date = requested.trim();
  if (!isCalendarDate(date))
    return { ok: false, reason: `API-Version must be a date (YYYY-MM-DD), got "${requested}".` };
  const applicable = versions.filter((entry) => entry.version <= date);
  if (applicable.length === 0)
    return { ok: false, reason: `API-Version ${date} predates the first version, ${versions[0]!.version}.` };
  return { ok: true, version: applicable[applicable.length - 1]!.version };
}

export function deprecationsFor(method: string, path: string, deprecations: Deprecation[]): Deprecation[] {
  return deprecations.filter((entry) => (entry.method === '*' || entry.method === method) && entry.path.test(path));
}

/** RFC 9745 Deprecation: a structured-field date, `@<epoch seconds>`. */
export function deprecationHeader(entry: Deprecation): string {
  return `@${Math.floor(Date.parse(`${entry.deprecatedAt}T00:00:00Z`) / 1000)}`;
}

/** RFC 8594 Sunset: an HTTP-date. */
export function sunsetHeader(entry: Deprecation): string {
  return new Date(`${entry.sunsetAt}T00:00:00Z`).toUTCString();
}

function noticeDays(entry: Deprecation): number {
  return Math.round((Date.parse(entry.sunsetAt) - Date.parse(entry.deprecatedAt)) / 86_400_000);
}

/** The spec's promise: nothing is retired with less than 90 days of Deprecation/Sunset notice. Checked at start. */
export function checkNoticePeriods(deprecations: Deprecation[]): Deprecation[] {
  for (const entry of deprecations) {
    if (!(noticeDays(entry) >= MIN_SUNSET_NOTICE_DAYS)) {
      throw new Error(
        `Retirement of ${entry.subject} gives ${noticeDays(entry)} days of notice; at least ${MIN_SUNSET_NOTICE_DAYS} are required.`,
      );
    }
  }
  return deprecations;
}
