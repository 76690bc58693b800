// The published contract as this instance serves it: codegen/openapi.published.json (see codegen/publish.mjs) with the
// configured public addresses in place of the server variables, so generated clients and the docs' server panel
// carry BASE_URL and AGENT_BASE_URL, and the OAuth token URL points at the agent origin.
import { readFileSync } from 'node:fs';
import type { Config } from '../../config.js';
import { projectPath } from '../../paths.js';

type Json = Record<string, any>;
interface Server {
  url: string;
  description?: string;
  variables?: Record<string, { default: string }>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function publishedDocument(config: Pick<Config, 'baseUrl' | 'agentBaseUrl'>): Json {
  const document = JSON.parse(readFileSync(projectPath('codegen', 'openapi.published.json'), 'utf8')) as Json;
  const urls: Record<string, string> = { base_url: config.baseUrl, agent_base_url: config.agentBaseUrl };
  const substitute = ({ variables, ...server }: Server): Server => ({
    ...server,
    url: server.url.replace(/\{(\w+)\}/g, (whole, name: string) => urls[name] ?? variables?.[name]?.default ?? whole),
  });
  document.servers = ((document.servers ?? []) as Server[]).map(substitute);
  for (const item of Object.values(document.paths ?? {}) as Json[]) {
    if (item.servers) item.servers = (item.servers as Server[]).map(substitute);
    for (const method of METHODS)
      if (item[method]?.servers) item[method].servers = (item[method].servers as Server[]).map(substitute);
  }
  for (const scheme of Object.values(document.components?.securitySchemes ?? {}) as Json[]) {
    for (const flow of Object.values(scheme.flows ?? {}) as Json[]) {
      for (const key of ['tokenUrl', 'authorizationUrl', 'refreshUrl'])
        if (typeof flow[key] === 'string' && flow[key].startsWith('/')) flow[key] = config.agentBaseUrl + flow[key];
    }
  }
  return document;
}
