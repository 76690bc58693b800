// The authorization server: discovery metadata and the agent guide (static, cacheable), registration, tokens, revocation.
import { readFileSync } from 'node:fs';
import type { operations } from '../../../codegen/types.js';
import type { Config } from '../../config.js';
import type { Deps } from '../../deps.js';
import { representationOf, sendRepresentation } from '../../http/caching.js';
import type { OperationHandlers } from '../../http/openapi.js';
import { projectPath } from '../../paths.js';
import * as oauth from '../../services/oauth.js';

type Body<Op extends keyof operations> = operations[Op]['requestBody'] extends { content: infer C }
  ? C[keyof C]
  : never;

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
    getAuthorizationServerMetadata(_c, ctx) {
      sendRepresentation(ctx, serverMetadata);
    },
    getProtectedResourceMetadata(_c, ctx) {
      sendRepresentation(ctx, resourceMetadata);
    },
    getAgentAuthGuide(_c, ctx) {
      sendRepresentation(ctx, guide);
    },
    async registerClient(c, ctx) {
      const client = await oauth.registerClient(deps, c.request.requestBody as Body<'registerClient'>);
      ctx.status = 201;
      ctx.body = client;
    },
    async issueToken(c, ctx) {
      ctx.body = await oauth.issueToken(deps, ctx.get('Authorization'), c.request.requestBody as Body<'issueToken'>);
      ctx.set('Pragma', 'no-cache'); // RFC 6749 section 5.1, for HTTP/1.0 caches that ignore Cache-Control
    },
    async revokeToken(c, ctx) {
      await oauth.revokeToken(deps, ctx.get('Authorization'), c.request.requestBody as Body<'revokeToken'>);
      ctx.body = null; // RFC 7009: 200 with no content
      ctx.status = 200;
    },
  };
}
