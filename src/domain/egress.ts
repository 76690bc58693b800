// Which addresses a request to a URL a client names may reach (platform profiles, agent webhooks): public unicast
// addresses only, unless the operator named the host (EGRESS_ALLOWED_HOSTS, for tests and local runs). Pure: the
// resolving and connecting are src/services/egress.ts's.
import ipaddr from 'ipaddr.js';

/**
 * Whether `address` (an IP address as DNS answers it) is public: ipaddr.js's `unicast`, after unwrapping an
 * IPv4-mapped IPv6 address. Everything else is refused: loopback, RFC 1918, link-local, 0.0.0.0/8, CGNAT, multicast,
 * reserved and documentation ranges, IPv6 loopback, ULA and link-local, and the IPv6 forms that carry an IPv4 address
 * to a gateway (NAT64, 6to4, Teredo).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/**
 * The IP address a URL's hostname spells, if it is one. WHATWG URL has already normalised every IPv4 spelling
 * (`2130706433`, `127.1`, `0x7f.0.0.1` are `127.0.0.1`) and brackets IPv6 (`[::ffff:7f00:1]`).
 */
export function literalAddressOf(hostname: string): string | undefined {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  return ipaddr.IPv4.isValidFourPartDecimal(hostname) ? hostname : undefined;
}

/** Names that are loopback by definition (RFC 6761): refused without asking DNS. */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The operator's allow-list, as URL hostnames (src/config.ts normalises each entry the same way). */
export type AllowedHosts = ReadonlySet<string>;

/**
 * Whether a URL's host is refused before any DNS lookup: a literal non-public address, or a loopback name, that the
 * operator did not name. A name that resolves to a non-public address is refused when resolved.
 */
export function isRefusedHost(url: URL, allowed: AllowedHosts): boolean {
  if (allowed.has(url.hostname)) return false;
  const literal = literalAddressOf(url.hostname);
  return literal === undefined ? isLoopbackName(url.hostname) : !isPublicAddress(literal);
}
