// The one way out to an address a client names (platform profiles, agent webhooks, anything later): http(s) only, the
// host refused before any lookup when it spells a non-public address or a loopback name, the name resolved once and
// refused when any of its addresses is not public, and the connection made to exactly the addresses that were checked
// (Node's `lookup` hook: no second resolution a rebinding DNS server could answer differently). No redirects are
// followed, the whole exchange has a deadline and the response body a size cap. Hosts the operator names
// (EGRESS_ALLOWED_HOSTS) may resolve to private addresses: tests and local runs. What failed is told to the caller
// for its logs; callers answer their clients with one message whatever it was, so nothing here is a port scanner.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPublicAddress, isRefusedHost, type AllowedHosts } from '../domain/egress.js';
import type { Tracing } from '../tracing.js';

/** Why a request did not get an answer: for logs, never for the client. */
export type EgressFailure = 'refused' | 'unreachable' | 'timeout' | 'too_large';

export type EgressOutcome =
  | { ok: true; status: number; headers: IncomingHttpHeaders; body: Buffer }
  | { ok: false; failure: EgressFailure; detail: string };

export interface EgressRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Deadline for the whole exchange: lookup, connect, send, the answer and its body. */
  timeoutMs: number;
  /** The answer's body is read up to this many bytes (more fails `too_large`); 0: the status alone is wanted. */
  maxResponseBytes: number;
}

/** Resolves a name to every address it has (dns.lookup with `all`); injectable so rebinding can be tested. */
export type Resolver = (hostname: string, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, callback) =>
  dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => callback(error, addresses ?? []));

class RefusedAddress extends Error {
  override name = 'RefusedAddress';
}

export interface Egress {
  send(url: string, request: EgressRequest): Promise<EgressOutcome>;
}

/**
 * The egress guard; `allowedHosts` may resolve to non-public addresses (src/config.ts normalises them). With `tracing`,
 * each exchange is a client span, child of the active one, and carries its `traceparent` (and `tracestate`).
 */
export function createEgress(
  allowedHosts: Iterable<string>,
  resolve: Resolver = systemResolver,
  tracing?: Tracing,
): Egress {
  const allowed: AllowedHosts = new Set(allowedHosts);

  /** Node's lookup for one connection: the resolved addresses, checked, are the ones the socket connects to. */
  const guardedLookup =
    (privateAllowed: boolean): LookupFunction =>
    (hostname, options, callback) => {
      resolve(hostname, (error, resolved) => {
        if (error) return callback(error, '');
        const addresses = options.family ? resolved.filter((address) => address.family === options.family) : resolved;
        if (!privateAllowed && resolved.some((address) => !isPublicAddress(address.address)))
          return callback(new RefusedAddress(`${hostname} resolves to a non-public address`), '');
        const [first] = addresses;
        if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      });
    };

  function send(raw: string, request: EgressRequest): Promise<EgressOutcome> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return Promise.resolve({ ok: false, failure: 'refused', detail: 'not an absolute URL' });
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      return Promise.resolve({ ok: false, failure: 'refused', detail: `scheme ${url.protocol}` });
    if (isRefusedHost(url, allowed))
      return Promise.resolve({ ok: false, failure: 'refused', detail: `${url.hostname} is not a public address` });
    const { method, body, timeoutMs, maxResponseBytes } = request;
    const transport = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const span = tracing?.startSpan(method, {
      kind: 'client',
      attributes: {
        'http.request.method': method,
        'server.address': url.hostname,
        'url.scheme': url.protocol.slice(0, -1),
        'url.path': url.pathname,
      },
    });
    const headers = span
      ? { ...request.headers, ...tracing!.within(span, () => tracing!.outboundHeaders()) }
      : request.headers;
    return new Promise<EgressOutcome>((settle) => {
      let settled = false;
      const finish = (outcome: EgressOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        if (outcome.ok) span?.setAttribute('http.response.status_code', outcome.status);
        span?.end(outcome.ok ? undefined : Object.assign(new Error(outcome.detail), { name: outcome.failure }));
        settle(outcome);
      };
      const fail = (failure: EgressFailure, detail: string) => {
        finish({ ok: false, failure, detail });
        outgoing.destroy();
      };
      const outgoing = transport(url, {
        method,
        headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        // A connection of its own, closed after the exchange: no pooled socket outlives the check of its address.
        agent: false,
        lookup: guardedLookup(allowed.has(url.hostname)),
      });
      const deadline = setTimeout(() => fail('timeout', `no answer within ${timeoutMs} ms`), timeoutMs);
      outgoing.on('error', (error) =>
        error instanceof RefusedAddress ? fail('refused', error.message) : fail('unreachable', error.message),
      );
      outgoing.on('response', (incoming) => {
        const answer = { ok: true as const, status: incoming.statusCode ?? 0, headers: incoming.headers };
        if (maxResponseBytes === 0) {
          finish({ ...answer, body: Buffer.alloc(0) });
          outgoing.destroy();
          return;
        }
        if (Number(incoming.headers['content-length']) > maxResponseBytes)
          return fail('too_large', `declared ${incoming.headers['content-length']} bytes`);
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) return fail('too_large', `over ${maxResponseBytes} bytes`);
          chunks.push(chunk);
        });
        incoming.on('end', () => finish({ ...answer, body: Buffer.concat(chunks) }));
        incoming.on('error', (error) => fail('unreachable', error.message));
      });
      outgoing.end(body);
    });
  }

  return { send };
}
