// The published contract as this instance serves it: codegen/openapi.published.json (see codegen/publish.mjs) with the
// configured public addresses in place of the server variables, so generated clients and the docs' server panel
// carry BASE_URL and AGENT_BASE_URL, and the OAuth token URL points at the agent origin.
import { readFileSync } from 'node:fs';
import type { Config } from '../../config.js';
import { projectPath } from '../../paths.js';

interface Server {
  url: string;
  description?: string;
  variables?: Record<string, { default: string }>;
}

/** The URLs of an OAuth flow (security schemes), relative to the agent origin in the document. */
const FLOW_URLS = new Set(['tokenUrl', 'authorizationUrl', 'refreshUrl']);

export function publishedDocument(config: Pick<Config, 'baseUrl' | 'agentBaseUrl'>): unknown {
  const urls: Record<string, string> = { base_url: config.baseUrl, agent_base_url: config.agentBaseUrl };
  const substitute = ({ variables, ...server }: Server): Server => ({
    ...server,
    url: server.url.replace(/\{(\w+)\}/g, (whole, name: string) => urls[name] ?? variables?.[name]?.default ?? whole),
  });
  // `servers` (of the document, a path or an operation) and the flows' URLs are rewritten wherever they occur.
  return JSON.parse(readFileSync(projectPath('codegen', 'openapi.published.json'), 'utf8'), (key, value) => {
    if (key === 'servers' && Array.isArray(value)) return value.map(substitute);
    if (FLOW_URLS.has(key) && typeof value === 'string' && value.startsWith('/')) return config.agentBaseUrl + value;
    return value;
  });
}
