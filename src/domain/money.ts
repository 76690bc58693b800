// Money is an integer number of minor units inside the service (dinero.js does the arithmetic, with each currency's
// ISO 4217 exponent). Major units appear only at the API boundary, through toMajorUnits.
import {
  allocate,
  dinero,
  halfUp,
  multiply,
  toDecimal,
  toSnapshot,
  transformScale,
  type Dinero,
  type DineroCurrency,
} from 'dinero.js';
import * as currencies from 'dinero.js/currencies';

export type MinorUnits = number;

const BASIS_POINTS_SCALE = 4; // 1 basis point = 0.0001

export function currencyOf(code: string): DineroCurrency<number> {
  const currency = (currencies as Record<string, DineroCurrency<number>>)[code.toUpperCase()];
  if (!currency) throw new Error(`Unknown ISO 4217 currency: ${code}`);
  return currency;
}

function money(amount: MinorUnits, currencyCode: string): Dinero<number> {
  if (!Number.isSafeInteger(amount)) throw new Error(`Money amounts are integer minor units, got ${amount}`);
  return dinero({ amount, currency: currencyOf(currencyCode) });
}

function minorOf(value: Dinero<number>): MinorUnits {
  return toSnapshot(value).amount;
}

/** The API's representation: a number of major units with at most the currency's digits (1299 usd → 12.99). */
export function toMajorUnits(amount: MinorUnits, currencyCode: string): number {
  return Number(toDecimal(money(amount, currencyCode)));
}

/** `amount × basisPoints / 10000`, rounded once, half up, to the currency's minor unit. */
export function applyRate(amount: MinorUnits, basisPoints: number, currencyCode: string): MinorUnits {
  const { exponent } = currencyOf(currencyCode);
  const scaled = multiply(money(amount, currencyCode), { amount: basisPoints, scale: BASIS_POINTS_SCALE });
  return minorOf(transformScale(scaled, exponent, halfUp));
}

/** Splits `amount` across `weights` in proportion, in whole minor units that sum exactly to `amount`. */
export function allocateByWeight(amount: MinorUnits, weights: MinorUnits[], currencyCode: string): MinorUnits[] {
  if (weights.length === 0) return [];
  if (weights.every((weight) => weight === 0)) return weights.map((_, index) => (index === 0 ? amount : 0));
  return allocate(money(amount, currencyCode), weights).map(minorOf);
}
