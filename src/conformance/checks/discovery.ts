// Discovery: /.well-known/ucp (UCP business profile: services, transports, versions, capabilities) and
// /.well-known/acp.json (ACP discovery document). What they advertise decides what the rest of the run tests; the
// versions found, and which one is tested, are stated before any check runs.
import type { Answer, HttpClient, Json } from '../client.js';
import { describeAnswer } from '../client.js';
import type { ProtocolPlan } from '../report.js';
import { knownVersions, type SchemaSets } from '../schemas.js';
import { expectThat, skip, type Check } from './check.js';

export interface UcpDiscovery {
  answer?: Answer;
  /** Why the document could not be read (unreachable, 404, not JSON). */
  problem?: string;
  plan: ProtocolPlan;
  /** The business profile of the tested version (the main one, or the one named in supported_versions). */
  profile?: Json;
  profileAnswer?: Answer;
  endpoints: { rest?: string; mcp?: string; other: string[] };
  /** Capability name → its entry at the tested version. */
  capabilities: Map<string, Json>;
}

export interface AcpDiscovery {
  answer?: Answer;
  problem?: string;
  plan: ProtocolPlan;
  apiBase?: string;
  transports: string[];
  extensions: Set<string>;
  services: Set<string>;
  currency: string;
}

/** An advertised URL on another origin than the one the user gave is tested on the user's origin (with a note). */
export function rebase(url: string, base: string, notes: string[]): string {
  let advertised: URL;
  try {
    advertised = new URL(url, base);
  } catch {
    return url;
  }
  const target = new URL(base);
  if (advertised.origin === target.origin) return advertised.href.replace(/\/+$/, '');
  const moved = `${target.origin}${advertised.pathname}`.replace(/\/+$/, '');
  const note = `${advertised.origin} is advertised; testing its paths on ${target.origin} (the URL given)`;
  if (!notes.includes(note)) notes.push(note);
  return moved;
}

async function readDocument(client: HttpClient, url: string): Promise<{ answer?: Answer; problem?: string }> {
  try {
    const answer = await client.request(url, { headers: { Accept: 'application/json' } });
    if (answer.status === 404) return { answer, problem: `${url} answers 404: the merchant does not offer it` };
    if (answer.status !== 200) return { answer, problem: `${url} answers ${describeAnswer(answer)}` };
    if (typeof answer.body !== 'object' || answer.body === null)
      return { answer, problem: `${url} is not a JSON object: ${describeAnswer(answer)}` };
    return { answer };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}

const newestKnown = (advertised: string[], known: string[]) => known.find((version) => advertised.includes(version));

export async function discoverUcp(client: HttpClient, base: string, notes: string[]): Promise<UcpDiscovery> {
  const known = knownVersions('ucp');
  const empty = { endpoints: { other: [] }, capabilities: new Map() };
  const { answer, problem } = await readDocument(client, `${base}/.well-known/ucp`);
  if (problem) return { answer, problem, plan: { protocol: 'ucp', advertised: [], known, reason: problem }, ...empty };
  const ucp: Json = answer!.body.ucp ?? {};
  const supported: Record<string, string> =
    typeof ucp.supported_versions === 'object' && ucp.supported_versions ? ucp.supported_versions : {};
  const advertised = [...new Set([ucp.version, ...Object.keys(supported)].filter((v) => typeof v === 'string'))];
  const tested = newestKnown(advertised, known);
  const plan: ProtocolPlan = { protocol: 'ucp', advertised, known, tested };
  if (!tested) {
    plan.reason = `version mismatch: the merchant speaks ${advertised.join(', ') || 'no version'}, this runner knows ${known.join(', ')}`;
    return { answer, plan, ...empty };
  }
  let profile: Json = answer!.body;
  let profileAnswer = answer;
  if (tested !== ucp.version) {
    // An older version the merchant still supports has a profile of its own (business_schema.supported_versions).
    const other = await readDocument(client, rebase(supported[tested]!, base, notes));
    if (other.problem) {
      plan.tested = undefined;
      plan.reason = `the profile of ${tested} (${supported[tested]}): ${other.problem}`;
      return { answer, plan, ...empty };
    }
    profile = other.answer!.body;
    profileAnswer = other.answer;
  }
  const services: Json[] = Array.isArray(profile.ucp?.services?.['dev.ucp.shopping'])
    ? profile.ucp.services['dev.ucp.shopping']
    : [];
  const endpoints: UcpDiscovery['endpoints'] = { other: [] };
  for (const service of services) {
    if ((service.version ?? profile.ucp.version) !== tested || typeof service.endpoint !== 'string') continue;
    if (service.transport === 'rest' && !endpoints.rest) endpoints.rest = rebase(service.endpoint, base, notes);
    else if (service.transport === 'mcp' && !endpoints.mcp) endpoints.mcp = rebase(service.endpoint, base, notes);
    else endpoints.other.push(String(service.transport));
  }
  const capabilities = new Map<string, Json>();
  for (const [name, entries] of Object.entries<Json>(profile.ucp?.capabilities ?? {})) {
    const entry = Array.isArray(entries) ? entries.find((candidate) => candidate?.version === tested) : undefined;
    if (entry) capabilities.set(name, entry);
    else notes.push(`UCP capability ${name} is not advertised at ${tested}: not tested`);
  }
  return { answer, plan, profile, profileAnswer, endpoints, capabilities };
}

export async function discoverAcp(client: HttpClient, base: string, notes: string[]): Promise<AcpDiscovery> {
  const known = knownVersions('acp');
  const empty = { transports: [], extensions: new Set<string>(), services: new Set<string>(), currency: 'usd' };
  const { answer, problem } = await readDocument(client, `${base}/.well-known/acp.json`);
  if (problem) return { answer, problem, plan: { protocol: 'acp', advertised: [], known, reason: problem }, ...empty };
  const body: Json = answer!.body;
  const advertised = [
    ...new Set(
      [
        body.protocol?.version,
        ...(Array.isArray(body.protocol?.supported_versions) ? body.protocol.supported_versions : []),
      ].filter((v) => typeof v === 'string'),
    ),
  ];
  const tested = newestKnown(advertised, known);
  const plan: ProtocolPlan = { protocol: 'acp', advertised, known, tested };
  if (!tested)
    plan.reason = `version mismatch: the merchant speaks ${advertised.join(', ') || 'no version'}, this runner knows ${known.join(', ')}`;
  const transports: string[] = Array.isArray(body.transports) ? body.transports : ['rest'];
  const extensions = new Set<string>(
    (Array.isArray(body.capabilities?.extensions) ? body.capabilities.extensions : [])
      .map((extension: Json) => (typeof extension === 'string' ? extension : extension?.name))
      .filter((name: unknown): name is string => typeof name === 'string'),
  );
  const services = new Set<string>(
    (Array.isArray(body.capabilities?.services) ? body.capabilities.services : []).filter(
      (name: unknown): name is string => typeof name === 'string',
    ),
  );
  const apiBase = typeof body.api_base_url === 'string' ? rebase(body.api_base_url, base, notes) : undefined;
  const currencies = body.capabilities?.supported_currencies;
  const currency = Array.isArray(currencies) && typeof currencies[0] === 'string' ? currencies[0] : 'usd';
  return { answer, plan, apiBase, transports, extensions, services, currency };
}

export interface DiscoveryContext {
  ucp: UcpDiscovery;
  acp: AcpDiscovery;
  /** The run's compiled schemas. */
  schemaSets: SchemaSets;
  onSchemaErrors: (count: number) => void;
}

function validDocument(context: DiscoveryContext, protocol: 'ucp' | 'acp', answer: Answer, schema: string, body: Json) {
  const version = (protocol === 'ucp' ? context.ucp : context.acp).plan.tested!;
  const problems = context.schemaSets(protocol, version).problems(schema, body);
  context.onSchemaErrors(problems.length);
  expectThat(
    problems.length === 0,
    `a document valid against ${protocol.toUpperCase()} ${version} ${schema}`,
    answer,
    `${problems.length} schema errors, first: ${problems[0]?.path} ${problems[0]?.message}`,
  );
}

export const discoveryChecks: Check<DiscoveryContext>[] = [
  {
    id: 'discovery.ucp.profile',
    title: '/.well-known/ucp is a valid business profile with a dev.ucp.shopping service at the tested version',
    spec: 'UCP {version}, overview › Discovery (https://ucp.dev/{version}/specification/overview/)',
    async run(context) {
      const { ucp } = context;
      if (ucp.problem && ucp.answer?.status !== 404)
        expectThat(false, '200 with a JSON business profile', ucp.answer, ucp.problem);
      if (!ucp.plan.tested) skip(ucp.plan.reason ?? 'UCP is not tested');
      validDocument(context, 'ucp', ucp.profileAnswer!, 'business_profile', ucp.profile);
      expectThat(
        ucp.endpoints.rest || ucp.endpoints.mcp,
        `a dev.ucp.shopping service (rest or mcp) with an endpoint at ${ucp.plan.tested}`,
        ucp.profileAnswer,
      );
    },
  },
  {
    id: 'discovery.acp.document',
    title: '/.well-known/acp.json is a valid discovery document with api_base_url',
    spec: 'ACP {version}, json-schema › DiscoveryResponse (/.well-known/acp.json)',
    async run(context) {
      const { acp } = context;
      if (acp.problem && acp.answer?.status !== 404)
        expectThat(false, '200 with a JSON discovery document', acp.answer, acp.problem);
      if (!acp.plan.tested) skip(acp.plan.reason ?? 'ACP is not tested');
      validDocument(context, 'acp', acp.answer!, 'DiscoveryResponse', acp.answer!.body);
      expectThat(acp.apiBase, 'api_base_url', acp.answer);
    },
  },
];
