// UCP order events as a platform receives them: a receiver on 127.0.0.1 (the `config.webhook_url` of the runner's
// platform profile when the operator asks for order events) and the verification a platform does on each delivery
// (UCP signatures.md: RFC 9421 HTTP Message Signatures over the covered components UCP requires, and RFC 9530
// `Content-Digest` of the body), with an ES256 key the business publishes in its profile (`signing_keys` on
// 2026-04-08, `keys` since 2026-08-25). This store's own tests verify the events it sends with the same function.
//
// node:crypto verifies the signature (JWK import, ES256 with IEEE P1363 encoding) and structured-headers (RFC 8941)
// parses the three headers: with both, verifying is the signature base and one `verify`, so no RFC 9421 library is
// added for it.
import { createHash, createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseDictionary, serializeInnerList, type InnerList } from 'structured-headers';

/** One delivery as received: its headers (lower-case names) and the body's exact bytes as text. */
export interface ReceivedDelivery {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
}

/** The components UCP requires a webhook signature to cover. */
export const UCP_WEBHOOK_COMPONENTS = ['@method', '@authority', '@path', 'ucp-agent', 'content-digest', 'content-type'];

/**
 * What is wrong with a UCP webhook delivered to `url` ([] when it verifies): the body's `Content-Digest` (sha-256),
 * the `Signature-Input` covering UCP's required components, and the ES256 `Signature` under the key `keyid` names
 * among `keys`.
 */
export function ucpWebhookProblems(delivery: ReceivedDelivery, url: string, keys: JsonWebKey[]): string[] {
  const header = (name: string) => String(delivery.headers[name] ?? '');
  let dictionaries;
  try {
    dictionaries = {
      digest: parseDictionary(header('content-digest')),
      input: parseDictionary(header('signature-input')),
      signature: parseDictionary(header('signature')),
    };
  } catch (error) {
    return [`a signature header is not a structured-field dictionary: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  const digest = dictionaries.digest.get('sha-256')?.[0];
  if (!(digest instanceof ArrayBuffer)) problems.push('no Content-Digest sha-256');
  else if (!createHash('sha256').update(delivery.raw).digest().equals(Buffer.from(digest)))
    problems.push('Content-Digest sha-256 is not the digest of the body received');
  // The first signature whose label both headers carry (any label: RFC 9421 does not fix one).
  const label = [...dictionaries.input.keys()].find((name) => dictionaries.signature.has(name));
  const input = label === undefined ? undefined : (dictionaries.input.get(label) as InnerList);
  const signature = label === undefined ? undefined : dictionaries.signature.get(label)?.[0];
  if (!Array.isArray(input?.[0]) || !(signature instanceof ArrayBuffer)) {
    problems.push('no Signature-Input and Signature of one label');
    return problems;
  }
  const components = input[0].map(([name]) => String(name));
  const missing = UCP_WEBHOOK_COMPONENTS.filter((name) => !components.includes(name));
  if (missing.length) problems.push(`the signature does not cover ${missing.join(', ')}`);
  const target = new URL(url);
  const values: Record<string, string> = { '@method': 'POST', '@authority': target.host, '@path': target.pathname };
  // A covered header the delivery lacks makes the signature base fail (RFC 9421 §2.5), never an empty value.
  const absent = components.filter((name) => values[name] === undefined && delivery.headers[name] === undefined);
  if (absent.length) {
    problems.push(`the signature covers ${absent.join(', ')}, which the delivery does not carry`);
    return problems;
  }
  const keyid = input[1].get('keyid');
  const jwk = keys.find((key) => key.kid === keyid);
  if (!jwk) {
    problems.push(`keyid ${String(keyid)} is none of the keys the business profile publishes`);
    return problems;
  }
  // UCP signs with ES256: a key of another type is no key for it, whatever it would verify.
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || (jwk.alg !== undefined && jwk.alg !== 'ES256')) {
    problems.push(`key ${String(keyid)} is not an ES256 key (EC P-256)`);
    return problems;
  }
  const lines = components.map((name) => `"${name}": ${values[name] ?? header(name).trim()}`);
  const base = [...lines, `"@signature-params": ${serializeInnerList(input)}`].join('\n');
  let verified: boolean;
  try {
    verified = verify(
      'sha256',
      Buffer.from(base),
      { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature),
    );
  } catch (error) {
    problems.push(`key ${String(keyid)} cannot verify: ${(error as Error).message}`);
    return problems;
  }
  if (!verified) problems.push(`the ES256 signature does not verify under key ${String(keyid)}`);
  return problems;
}

/** The keys a business profile publishes for webhook signatures (2026-08-25 `keys`, 2026-04-08 `signing_keys`). */
export function publishedKeys(profile: unknown): JsonWebKey[] {
  const object = (profile ?? {}) as { keys?: unknown; signing_keys?: unknown };
  const keys = Array.isArray(object.keys) ? object.keys : Array.isArray(object.signing_keys) ? object.signing_keys : [];
  return keys.filter((key): key is JsonWebKey => typeof key === 'object' && key !== null);
}

export interface EventReceiver {
  /** The webhook URL to declare in a platform profile. */
  url: string;
  received: Array<ReceivedDelivery & { body: unknown }>;
  /** Resolves once an event arrived and `quietMs` passed without another, or at `deadline` (ms since the epoch). */
  settle(deadline: number, quietMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Receives order events on 127.0.0.1 (any POST is taken as one and answered 200). */
export async function receiveOrderEvents(): Promise<EventReceiver> {
  const received: EventReceiver['received'] = [];
  let last = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST') {
        response.writeHead(405).end();
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      received.push({ headers: request.headers, raw, body });
      last = Date.now();
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/order-events`,
    received,
    async settle(deadline, quietMs = 2_000) {
      while (Date.now() < deadline && !(received.length && Date.now() - last >= quietMs))
        await new Promise((resolve) => setTimeout(resolve, 100));
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
