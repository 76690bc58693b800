// What every ACP check is given: the API base from /.well-known/acp.json, the version to send in API-Version, the
// bearer token (from the fixture), the items, and where the sessions received are collected for the totals check.
import { randomUUID } from 'node:crypto';
import { describeAnswer, type Answer, type HttpClient, type Json } from '../client.js';
import type { Fixture, FixtureItem } from '../fixture.js';
import type { SchemaSet } from '../schemas.js';
import { CheckFailure, skip } from './check.js';

export interface AcpContext {
  client: HttpClient;
  schemas: SchemaSet;
  version: string;
  apiBase: string;
  /** The bearer token, or undefined with `tokenReason` saying why there is none. */
  token?: string;
  tokenReason?: string;
  extensions: Set<string>;
  /** The discovery document's capabilities.services (e.g. checkout, carts). */
  services: Set<string>;
  /** The currency to ask for: the first of the discovery document's supported_currencies (else usd). */
  currency: string;
  items: FixtureItem[];
  itemsReason?: string;
  fixture: Fixture;
  sessions: Json[];
  onSchemaErrors: (count: number) => void;
}

export const acpSpec = (section: string) =>
  `ACP {version}, openapi.agentic_checkout.yaml › ${section} (https://github.com/agentic-commerce-protocol/agentic-commerce-protocol/tree/main/spec/{version})`;

export function acpToken(context: AcpContext): string {
  if (!context.token) skip(context.tokenReason ?? 'no ACP credentials');
  return context.token;
}

export function acpLines(context: AcpContext, extraQuantity = 0): Json[] {
  if (!context.items.length) skip(context.itemsReason ?? 'no items to buy');
  return context.items.map((item) => ({ id: item.id, quantity: item.quantity + extraQuantity }));
}

export function acpCreateBody(context: AcpContext, extra: Json = {}): Json {
  const buyer = context.fixture.buyer;
  return {
    line_items: acpLines(context),
    currency: context.currency,
    ...(buyer?.email ? { buyer } : {}),
    capabilities: {},
    ...extra,
  };
}

export interface AcpCallOptions {
  /** Header overrides; null removes the header. */
  headers?: Record<string, string | null>;
  rawBody?: string;
  /** The schema of a 2xx body (default: CheckoutSession, or CheckoutSessionWithOrder with an order). */
  schema?: string;
}

/**
 * One ACP REST call with the usual headers; validates the body (CheckoutSession for 2xx, Error otherwise) and keeps
 * every session received.
 */
export async function acpCall(
  context: AcpContext,
  method: string,
  path: string,
  body?: Json,
  options: AcpCallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    ...(context.token ? { Authorization: `Bearer ${context.token}` } : {}),
    'API-Version': context.version,
    'Request-Id': randomUUID(),
    Accept: 'application/json',
    ...(method === 'POST' ? { 'Idempotency-Key': randomUUID(), 'Content-Type': 'application/json' } : {}),
  };
  for (const [name, value] of Object.entries(options.headers ?? {}))
    if (value === null) delete headers[name];
    else headers[name] = value;
  const answer = await context.client.request(`${context.apiBase}${path}`, {
    method,
    headers,
    body: options.rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const sessionSchema = answer.body?.order ? 'CheckoutSessionWithOrder' : 'CheckoutSession';
  const schema = answer.status < 300 ? (options.schema ?? sessionSchema) : 'Error';
  if (answer.status < 500 && answer.status !== 401 && answer.status !== 429) {
    const problems = context.schemas.problems(schema, answer.body);
    if (problems.length) {
      context.onSchemaErrors(problems.length);
      throw new CheckFailure(
        `expected a ${method} ${path} body valid against ACP ${context.version} ${schema}, got ${describeAnswer(answer)}; ${problems.length} schema errors, first: ${problems[0]!.path} ${problems[0]!.message}`,
      );
    }
  }
  if (answer.status < 300 && !options.schema && typeof answer.body?.id === 'string') context.sessions.push(answer.body);
  return answer;
}
