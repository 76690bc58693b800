import { currencyOf } from '../../src/domain/money.js';

// The destination table (issue #32): at least 20 destinations across every region, each for one and two items with
// and without 10OFF, with the expected subtotal, discount, shipping, tax by jurisdiction and total in minor units.
// Priced by priceQuote in test/unit/destination-pricing.test.ts and over REST and MCP in test/destination-checkout.test.ts.

// Each row: destination, shipping option, items (1: one 2-pack; 2: one 2-pack and one travel set), 10OFF or not, then
// the expected subtotal, discount, shipping, tax by jurisdiction (federal first) and total, in minor units.
// Worked out apart from the code under test, by these rules (docs/fulfilment-and-tax.md):
//  - US and Canada: tax added on top, per line per jurisdiction, half up. CA-QC, 2-pack + travel set, 10OFF: subtotal
//    16.99 + 25.99 = 42.98; discount 10 % = 4.298 → 4.30, split by base (1.6997 → 1.69, 2.6002 → 2.60, the cent left
//    to the heavier line: 2.61), lines 15.30 and 23.38; GST 5 % 0.765 → 0.77 and 1.169 → 1.17 (1.94), QST 9.975 %
//    1.526175 → 1.53 and 2.332155 → 2.33 (3.86); shipping free (38.68 ≥ 35.00); total 38.68 + 1.94 + 3.86 = 44.48.
//  - EU, UK, Japan: shelf price = catalogue + the region rate, rounded once per unit (EU 11.99 + 21 % = 14.5079 →
//    14.51; travel 18.99 → 22.9779 → 22.98; UK 10.99 → 13.19, 16.99 → 20.39; JP ¥1900 → ¥2090, ¥2900 → ¥3190), tax
//    extracted: DE one 2-pack = 14.51 × 19/119 = 2.3168 → 2.32, Standard shipping 4.95 × 19/119 = 0.7903 → 0.79:
//    tax 3.11 in a total of 14.51 + 4.95 = 19.46.
//  - Shipping: Standard free once goods after discount reach the threshold (JP 2 items with 10OFF: ¥5280 − ¥528 =
//    ¥4752 < ¥5000: ¥600 is charged); Express never free.
export const DESTINATION_TABLE: Array<
  [string, 'standard' | 'express', 1 | 2, boolean, number, number, number, number[], number]
> = [
  ['US-OR', 'standard', 1, false, 1299, 0, 495, [0], 1794],
  ['US-OR', 'standard', 1, true, 1299, 130, 495, [0], 1664],
  ['US-OR', 'standard', 2, false, 3298, 0, 0, [0], 3298],
  ['US-OR', 'standard', 2, true, 3298, 330, 0, [0], 2968],
  ['US-CA', 'standard', 1, false, 1299, 0, 495, [94], 1888],
  ['US-CA', 'standard', 1, true, 1299, 130, 495, [85], 1749],
  ['US-CA', 'standard', 2, false, 3298, 0, 0, [239], 3537],
  ['US-CA', 'standard', 2, true, 3298, 330, 0, [215], 3183],
  ['US-CA', 'express', 1, false, 1299, 0, 1495, [94], 2888],
  ['US-CA', 'express', 1, true, 1299, 130, 1495, [85], 2749],
  ['US-CA', 'express', 2, false, 3298, 0, 1495, [239], 5032],
  ['US-CA', 'express', 2, true, 3298, 330, 1495, [215], 4678],
  ['US-NY', 'standard', 1, false, 1299, 0, 495, [72], 1866],
  ['US-NY', 'standard', 1, true, 1299, 130, 495, [67], 1731],
  ['US-NY', 'standard', 2, false, 3298, 0, 0, [132], 3430],
  ['US-NY', 'standard', 2, true, 3298, 330, 0, [119], 3087],
  ['US-TX', 'standard', 1, false, 1299, 0, 495, [112], 1906],
  ['US-TX', 'standard', 1, true, 1299, 130, 495, [104], 1768],
  ['US-TX', 'standard', 2, false, 3298, 0, 0, [206], 3504],
  ['US-TX', 'standard', 2, true, 3298, 330, 0, [185], 3153],
  ['US-WA', 'standard', 1, false, 1299, 0, 495, [116], 1910],
  ['US-WA', 'standard', 1, true, 1299, 130, 495, [108], 1772],
  ['US-WA', 'standard', 2, false, 3298, 0, 0, [214], 3512],
  ['US-WA', 'standard', 2, true, 3298, 330, 0, [193], 3161],
  ['US-NJ', 'standard', 1, false, 1299, 0, 495, [119], 1913],
  ['US-NJ', 'standard', 1, true, 1299, 130, 495, [110], 1774],
  ['US-NJ', 'standard', 2, false, 3298, 0, 0, [218], 3516],
  ['US-NJ', 'standard', 2, true, 3298, 330, 0, [197], 3165],
  ['US-MN', 'standard', 1, false, 1299, 0, 495, [123], 1917],
  ['US-MN', 'standard', 1, true, 1299, 130, 495, [114], 1778],
  ['US-MN', 'standard', 2, false, 3298, 0, 0, [226], 3524],
  ['US-MN', 'standard', 2, true, 3298, 330, 0, [204], 3172],
  ['DE', 'standard', 1, false, 1451, 0, 495, [311], 1946],
  ['DE', 'standard', 1, true, 1451, 145, 495, [288], 1801],
  ['DE', 'standard', 2, false, 3749, 0, 0, [599], 3749],
  ['DE', 'standard', 2, true, 3749, 375, 0, [539], 3374],
  ['DE', 'express', 1, false, 1451, 0, 1495, [471], 2946],
  ['DE', 'express', 1, true, 1451, 145, 1495, [448], 2801],
  ['DE', 'express', 2, false, 3749, 0, 1495, [838], 5244],
  ['DE', 'express', 2, true, 3749, 375, 1495, [778], 4869],
  ['FR', 'standard', 1, false, 1451, 0, 495, [325], 1946],
  ['FR', 'standard', 1, true, 1451, 145, 495, [301], 1801],
  ['FR', 'standard', 2, false, 3749, 0, 0, [625], 3749],
  ['FR', 'standard', 2, true, 3749, 375, 0, [563], 3374],
  ['IE', 'standard', 1, false, 1451, 0, 495, [364], 1946],
  ['IE', 'standard', 1, true, 1451, 145, 495, [337], 1801],
  ['IE', 'standard', 2, false, 3749, 0, 0, [701], 3749],
  ['IE', 'standard', 2, true, 3749, 375, 0, [631], 3374],
  ['ES', 'standard', 1, false, 1451, 0, 495, [338], 1946],
  ['ES', 'standard', 1, true, 1451, 145, 495, [313], 1801],
  ['ES', 'standard', 2, false, 3749, 0, 0, [651], 3749],
  ['ES', 'standard', 2, true, 3749, 375, 0, [586], 3374],
  ['IT', 'standard', 1, false, 1451, 0, 495, [351], 1946],
  ['IT', 'standard', 1, true, 1451, 145, 495, [325], 1801],
  ['IT', 'standard', 2, false, 3749, 0, 0, [676], 3749],
  ['IT', 'standard', 2, true, 3749, 375, 0, [609], 3374],
  ['NL', 'standard', 1, false, 1451, 0, 495, [338], 1946],
  ['NL', 'standard', 1, true, 1451, 145, 495, [313], 1801],
  ['NL', 'standard', 2, false, 3749, 0, 0, [651], 3749],
  ['NL', 'standard', 2, true, 3749, 375, 0, [586], 3374],
  ['GB', 'standard', 1, false, 1319, 0, 395, [286], 1714],
  ['GB', 'standard', 1, true, 1319, 132, 395, [264], 1582],
  ['GB', 'standard', 2, false, 3358, 0, 0, [560], 3358],
  ['GB', 'standard', 2, true, 3358, 336, 0, [504], 3022],
  ['GB', 'express', 1, false, 1319, 0, 995, [386], 2314],
  ['GB', 'express', 1, true, 1319, 132, 995, [364], 2182],
  ['GB', 'express', 2, false, 3358, 0, 995, [726], 4353],
  ['GB', 'express', 2, true, 3358, 336, 995, [670], 4017],
  ['CA-ON', 'standard', 1, false, 1699, 0, 695, [311], 2705],
  ['CA-ON', 'standard', 1, true, 1699, 170, 695, [289], 2513],
  ['CA-ON', 'standard', 2, false, 4298, 0, 0, [559], 4857],
  ['CA-ON', 'standard', 2, true, 4298, 430, 0, [503], 4371],
  ['CA-AB', 'standard', 1, false, 1699, 0, 695, [120], 2514],
  ['CA-AB', 'standard', 1, true, 1699, 170, 695, [111], 2335],
  ['CA-AB', 'standard', 2, false, 4298, 0, 0, [215], 4513],
  ['CA-AB', 'standard', 2, true, 4298, 430, 0, [194], 4062],
  ['CA-QC', 'standard', 1, false, 1699, 0, 695, [120, 238], 2752],
  ['CA-QC', 'standard', 1, true, 1699, 170, 695, [111, 222], 2557],
  ['CA-QC', 'standard', 2, false, 4298, 0, 0, [215, 428], 4941],
  ['CA-QC', 'standard', 2, true, 4298, 430, 0, [194, 386], 4448],
  ['CA-QC', 'express', 1, false, 1699, 0, 1995, [185, 368], 4247],
  ['CA-QC', 'express', 1, true, 1699, 170, 1995, [176, 352], 4052],
  ['CA-QC', 'express', 2, false, 4298, 0, 1995, [315, 627], 7235],
  ['CA-QC', 'express', 2, true, 4298, 430, 1995, [294, 585], 6742],
  ['CA-BC', 'standard', 1, false, 1699, 0, 695, [120, 168], 2682],
  ['CA-BC', 'standard', 1, true, 1699, 170, 695, [111, 156], 2491],
  ['CA-BC', 'standard', 2, false, 4298, 0, 0, [215, 301], 4814],
  ['CA-BC', 'standard', 2, true, 4298, 430, 0, [194, 271], 4333],
  ['CA-NS', 'standard', 1, false, 1699, 0, 695, [335], 2729],
  ['CA-NS', 'standard', 1, true, 1699, 170, 695, [311], 2535],
  ['CA-NS', 'standard', 2, false, 4298, 0, 0, [602], 4900],
  ['CA-NS', 'standard', 2, true, 4298, 430, 0, [541], 4409],
  ['CA-SK', 'standard', 1, false, 1699, 0, 695, [120, 144], 2658],
  ['CA-SK', 'standard', 1, true, 1699, 170, 695, [111, 134], 2469],
  ['CA-SK', 'standard', 2, false, 4298, 0, 0, [215, 258], 4771],
  ['CA-SK', 'standard', 2, true, 4298, 430, 0, [194, 232], 4294],
  ['JP', 'standard', 1, false, 2090, 0, 600, [245], 2690],
  ['JP', 'standard', 1, true, 2090, 209, 600, [226], 2481],
  ['JP', 'standard', 2, false, 5280, 0, 0, [480], 5280],
  ['JP', 'standard', 2, true, 5280, 528, 600, [487], 5352],
  ['JP', 'express', 1, false, 2090, 0, 1200, [299], 3290],
  ['JP', 'express', 1, true, 2090, 209, 1200, [280], 3081],
  ['JP', 'express', 2, false, 5280, 0, 1200, [589], 6480],
  ['JP', 'express', 2, true, 5280, 528, 1200, [541], 5952],
];

/** A valid postal address for each destination of the table (the REST and MCP `shipping_address`). */
export const ADDRESSES: Record<string, { region?: string; postal_code?: string; city: string; country: string }> = {
  'US-OR': { country: 'US', region: 'OR', postal_code: '97201', city: 'Portland' },
  'US-CA': { country: 'US', region: 'CA', postal_code: '94103', city: 'San Francisco' },
  'US-NY': { country: 'US', region: 'NY', postal_code: '10001', city: 'New York' },
  'US-TX': { country: 'US', region: 'TX', postal_code: '73301', city: 'Austin' },
  'US-WA': { country: 'US', region: 'WA', postal_code: '98101', city: 'Seattle' },
  'US-NJ': { country: 'US', region: 'NJ', postal_code: '07030', city: 'Hoboken' },
  'US-MN': { country: 'US', region: 'MN', postal_code: '55401', city: 'Minneapolis' },
  DE: { country: 'DE', postal_code: '10117', city: 'Berlin' },
  FR: { country: 'FR', postal_code: '75001', city: 'Paris' },
  IE: { country: 'IE', city: 'Dublin' },
  ES: { country: 'ES', postal_code: '28013', city: 'Madrid' },
  IT: { country: 'IT', postal_code: '00184', city: 'Roma' },
  NL: { country: 'NL', postal_code: '1012 JS', city: 'Amsterdam' },
  GB: { country: 'GB', postal_code: 'SW1A 1AA', city: 'London' },
  'CA-ON': { country: 'CA', region: 'ON', postal_code: 'M5V 2T6', city: 'Toronto' },
  'CA-AB': { country: 'CA', region: 'AB', postal_code: 'T2P 1J9', city: 'Calgary' },
  'CA-QC': { country: 'CA', region: 'QC', postal_code: 'H2X 1Y4', city: 'Montréal' },
  'CA-BC': { country: 'CA', region: 'BC', postal_code: 'V6B 1A1', city: 'Vancouver' },
  'CA-NS': { country: 'CA', region: 'NS', postal_code: 'B3H 1A1', city: 'Halifax' },
  'CA-SK': { country: 'CA', region: 'SK', postal_code: 'S4P 3Y2', city: 'Regina' },
  JP: { country: 'JP', postal_code: '100-0001', city: 'Chiyoda-ku, Tokyo' },
};

/** The region a destination's session is created in. */
export function regionOf(destination: string): string {
  const country = destination.split('-')[0]!;
  return { US: 'reg_us', CA: 'reg_ca', GB: 'reg_gb', JP: 'reg_jp' }[country] ?? 'reg_eu';
}

/** A REST session's figures (totals and tax by jurisdiction) in minor units, as the table states them. */
export function restFigures(session: any) {
  const minor = ({ amount, currency }: { amount: number; currency: string }) =>
    Math.round(amount * 10 ** currencyOf(currency).exponent);
  return {
    subtotal: minor(session.totals.subtotal),
    discount: minor(session.totals.discount),
    shipping: minor(session.totals.shipping),
    taxes: session.tax_lines.map((tax: { amount: { amount: number; currency: string } }) => minor(tax.amount)),
    tax: minor(session.totals.tax),
    total: minor(session.totals.total),
  };
}
