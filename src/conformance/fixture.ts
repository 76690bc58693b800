// The merchant fixture (--fixture FILE): what the runner cannot discover on its own. Every key is optional and unknown
// keys are ignored; a key of the wrong shape is dropped with a note, so its checks skip with the reason instead of
// the run crashing. docs/conformance.md documents it, docs/conformance-fixture.example.json is an example.
import { readFileSync } from 'node:fs';

export interface FixtureItem {
  id: string;
  quantity: number;
}

export interface Fixture {
  items?: FixtureItem[];
  promo_codes?: { valid?: string[]; invalid?: string[] };
  buyer?: { email?: string; first_name?: string; last_name?: string };
  /** UCP postal-address fields. */
  address?: Record<string, string>;
  acp?: { bearer_token: string } | { client_id: string; client_secret: string; token_url: string; scope?: string };
  /** A UCP order the operator made through a paid checkout, the platform profile it was made under, its checkout. */
  ucp?: UcpOrderFixture;
}

export interface UcpOrderFixture {
  order_id: string;
  /** The platform profile URL the order was made under (merchants show an order to its platform only). */
  profile?: string;
  /** The checkout that became the order: the order's checkout_id must be it. */
  checkout_id?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string') ? value : undefined;
const stringFields = (value: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((key) => typeof value[key] === 'string').map((key) => [key, value[key] as string]));

const ADDRESS_FIELDS = [
  'street_address',
  'extended_address',
  'address_locality',
  'address_region',
  'postal_code',
  'address_country',
  'first_name',
  'last_name',
  'phone_number',
];

/** The fixture's known keys, each checked for shape; `notes` says what was dropped and why. */
export function parseFixture(raw: unknown, notes: string[] = []): Fixture {
  const fixture: Fixture = {};
  if (raw === undefined) return fixture;
  if (!isObject(raw)) {
    notes.push('fixture: not a JSON object, ignored');
    return fixture;
  }
  if (raw.items !== undefined) {
    const items = Array.isArray(raw.items)
      ? raw.items.filter(
          (item): item is FixtureItem =>
            isObject(item) &&
            typeof item.id === 'string' &&
            Number.isInteger(item.quantity) &&
            Number(item.quantity) > 0,
        )
      : [];
    if (items.length) fixture.items = items.map(({ id, quantity }) => ({ id, quantity }));
    else notes.push('fixture: items is not a list of {id, quantity ≥ 1}, ignored');
  }
  if (raw.promo_codes !== undefined) {
    if (isObject(raw.promo_codes)) {
      const valid = strings(raw.promo_codes.valid);
      const invalid = strings(raw.promo_codes.invalid);
      fixture.promo_codes = { ...(valid?.length ? { valid } : {}), ...(invalid?.length ? { invalid } : {}) };
    } else notes.push('fixture: promo_codes is not {valid, invalid}, ignored');
  }
  if (isObject(raw.buyer)) fixture.buyer = stringFields(raw.buyer, ['email', 'first_name', 'last_name']);
  if (isObject(raw.address)) fixture.address = stringFields(raw.address, ADDRESS_FIELDS);
  if (raw.acp !== undefined) {
    const acp = raw.acp;
    if (isObject(acp) && typeof acp.bearer_token === 'string') fixture.acp = { bearer_token: acp.bearer_token };
    else if (
      isObject(acp) &&
      typeof acp.client_id === 'string' &&
      typeof acp.client_secret === 'string' &&
      typeof acp.token_url === 'string'
    )
      fixture.acp = {
        client_id: acp.client_id,
        client_secret: acp.client_secret,
        token_url: acp.token_url,
        ...(typeof acp.scope === 'string' ? { scope: acp.scope } : {}),
      };
    else notes.push('fixture: acp is neither {bearer_token} nor {client_id, client_secret, token_url, scope}, ignored');
  }
  if (raw.ucp !== undefined) {
    const ucp = raw.ucp;
    if (isObject(ucp) && typeof ucp.order_id === 'string' && ucp.order_id)
      fixture.ucp = { order_id: ucp.order_id, ...stringFields(ucp, ['profile', 'checkout_id']) };
    else notes.push('fixture: ucp is not {order_id, profile?, checkout_id?}, ignored');
  }
  return fixture;
}

export function readFixture(file: string, notes: string[] = []): Fixture {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read the fixture ${file}: ${(error as Error).message}`, { cause: error });
  }
  return parseFixture(raw, notes);
}
