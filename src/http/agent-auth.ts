// Bearer-token authentication and scope enforcement for the /agent surface. The OpenAPI document is the one place
// scopes are declared: each operation's `security` lists the `agentToken` scopes it needs, and this module enforces
// them (openapi-backend runs the security handler but never checks scopes). Tokens are looked up on every request.
import type { Context } from 'openapi-backend';
import type { Deps } from '../deps.js';
import { bearerChallenge, formatScope, hasScopes, parseBearerToken } from '../domain/auth.js';
import { ForbiddenScope, Unauthorized } from '../domain/errors.js';
import { agentUrls, findActiveGrant, type Grant } from '../services/oauth.js';
import type { AppContext } from './context.js';
import type { ContractOptions } from './openapi.js';
import { isBearerAgentRequest } from './rate-limit.js';

/** The security scheme of the /agent API in the contract (components.securitySchemes). */
const AGENT_SCHEME = 'agentToken';

type SecurityRequirement = Record<string, string[]>;

/** The scope sets that would each satisfy the operation, one per requirement naming the agent scheme; none if unprotected. */
function agentScopeRequirements(operation: Context['operation'] | undefined): string[][] {
  const requirements = (operation?.security ?? []) as SecurityRequirement[];
  return requirements.filter((requirement) => AGENT_SCHEME in requirement).map((requirement) => requirement[AGENT_SCHEME]!);
}

/** The grant the security handler stored for this request, when the token was valid. */
function grantOf(c: Context): Grant | undefined {
  const result = c.security?.[AGENT_SCHEME] as Grant | { error: unknown } | false | undefined;
  return result && 'clientId' in result ? result : undefined;
}

export function agentAuthentication(deps: Deps): Pick<ContractOptions, 'securityHandlers' | 'afterAuthentication' | 'unauthorized' | 'afterRouting'> {
  const { resourceMetadata } = agentUrls(deps.config);
  const countByAddress = (ctx: AppContext) => deps.rateLimiter.consume(ctx, `ip:${ctx.ip}`);

  return {
    securityHandlers: {
      async [AGENT_SCHEME](_c, ctx): Promise<Grant | false> {
        // The address limiter already counted requests without a bearer header; the rest are counted here, once:
        // per client when the token is valid, per address when it is not (or when the lookup fails).
        if (!isBearerAgentRequest(ctx)) return false;
        const token = parseBearerToken(ctx.get('Authorization'));
        const grant = token === undefined ? undefined : await findActiveGrant(deps, token).catch(async (error: unknown) => {
          await countByAddress(ctx);
          throw error;
        });
        await deps.rateLimiter.consume(ctx, grant ? `client:${grant.clientId}` : `ip:${ctx.ip}`);
        if (!grant) return false;
        ctx.state.clientId = grant.clientId;
        return grant;
      },
    },

    afterRouting(c, ctx) {
      // A bearer request that reaches no agent-protected operation (an unknown /agent path, a wrong method) skipped the
      // address limiter and meets no security handler: count it here.
      if (isBearerAgentRequest(ctx) && agentScopeRequirements(c.operation).length === 0) return countByAddress(ctx);
    },

    afterAuthentication(c) {
      const grant = grantOf(c);
      const requirements = agentScopeRequirements(c.operation);
      if (!grant || requirements.some((scopes) => hasScopes(grant.scopes, scopes))) return;
      const scope = formatScope(requirements[0]!);
      throw new ForbiddenScope(
        scope,
        `This operation needs the scope "${scope}", which the token was not granted.`,
        bearerChallenge({ error: 'insufficient_scope', scope, resourceMetadata }),
      );
    },

    unauthorized(c, ctx) {
      // The security handler's own failures (429, an unreachable database) surface as themselves, not as a 401.
      const failure = (c.security?.[AGENT_SCHEME] as { error?: unknown } | undefined)?.error;
      if (failure) throw failure;
      if (!ctx.get('Authorization')) {
        throw new Unauthorized(
          'unauthorized',
          'This endpoint needs a bearer token: send Authorization: Bearer <ACCESS_TOKEN>. Get one from the token endpoint.',
          bearerChallenge({ resourceMetadata }),
        );
      }
      throw new Unauthorized(
        'invalid_token',
        'The access token is expired, revoked, unknown or malformed; request a new one from the token endpoint.',
        bearerChallenge({ error: 'invalid_token', resourceMetadata }),
      );
    },
  };
}
