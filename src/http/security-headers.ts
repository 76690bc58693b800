/** Defaults for every response; HTML pages set their own, looser Content-Security-Policy. */
export const SECURITY_HEADERS: ReadonlyArray<[name: string, value: string]> = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
];
