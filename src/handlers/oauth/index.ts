// The authorization server: discovery metadata and the agent guide (static, cacheable), registration, tokens, revocation.
import { readFileSync } from 'node:fs';
import type { Config } from '../../config.js';
import type { Deps } from '../../deps.js';
import { representationOf, sendRepresentation } from '../../http/caching.js';
import type { OperationHandlers } from '../../http/openapi.js';
import { projectPath } from '../../paths.js';
import * as oauth from '../../services/oauth.js';

type OAuthHandlers = Pick<
  OperationHandlers,
  | 'getAuthorizationServerMetadata'
  | 'getProtectedResourceMetadata'
  | 'getAgentAuthGuide'
  | 'registerClient'
  | 'issueToken'
  | 'revokeToken'
>;

/** The Markdown guide with this deployment's URLs filled in, so its requests can be copied as they are. */
function loadAuthGuide(config: Config): string {
  return readFileSync(projectPath('docs', 'agent-auth.md'), 'utf8')
    .replaceAll('{{AGENT_BASE_URL}}', config.agentBaseUrl)
    .replaceAll('{{BASE_URL}}', config.baseUrl);
}

export function oauthHandlers(deps: Deps): OAuthHandlers {
  // Built once: they depend only on the configuration.
  const serverMetadata = representationOf(oauth.authorizationServerMetadata(deps.config));
  const resourceMetadata = representationOf(oauth.protectedResourceMetadata(deps.config));
  const guide = representationOf(loadAuthGuide(deps.config), 'text/markdown; charset=utf-8');
  return {
    getAuthorizationServerMetadata(_input, ctx) {
      sendRepresentation(ctx, serverMetadata);
    },
    getProtectedResourceMetadata(_input, ctx) {
      sendRepresentation(ctx, resourceMetadata);
    },
    getAgentAuthGuide(_input, ctx) {
      sendRepresentation(ctx, guide);
    },
    async registerClient({ body }) {
      return { status: 201, body: await oauth.registerClient(deps, body) };
    },
    async issueToken({ body }, ctx) {
      const token = await oauth.issueToken(deps, ctx.get('Authorization'), body);
      ctx.set('Pragma', 'no-cache'); // RFC 6749 section 5.1, for HTTP/1.0 caches that ignore Cache-Control
      return { status: 200, body: token };
    },
    async revokeToken({ body }, ctx) {
      await oauth.revokeToken(deps, ctx.get('Authorization'), body);
      return { status: 200, body: null }; // RFC 7009: 200 with no content
    },
  };
}
