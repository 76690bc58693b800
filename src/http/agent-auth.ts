// Bearer-token authentication and scope enforcement for the /agent surface, in two steps. `resolveBearer` (a step of
// the agent pipeline, before the limiter) looks the token up once and leaves the grant on the request; the contract's
// security check only reads it, and `requireScopes` enforces the scopes each operation's `security` lists in the
// OpenAPI document. Tokens are looked up on every request, so revocation takes effect at once.
import type { Operation } from 'openapi-backend';
import type { Deps } from '../deps.js';
import { bearerChallenge, formatScope, hasScopes, parseBearerToken } from '../domain/auth.js';
import { ForbiddenScope, Unauthorized } from '../domain/errors.js';
import { agentUrls, findActiveGrant } from '../services/oauth.js';
import type { AppMiddleware } from './context.js';
import type { ContractOptions } from './openapi.js';

/** The security scheme of the /agent API in the contract (components.securitySchemes). */
const AGENT_SCHEME = 'agentToken';

type SecurityRequirement = Record<string, string[]>;

/** The scope sets that would each satisfy the operation, one per requirement naming the agent scheme. */
function agentScopeRequirements(operation: Operation): string[][] {
  const requirements = (operation.security ?? []) as SecurityRequirement[];
  return requirements
    .filter((requirement) => AGENT_SCHEME in requirement)
    .map((requirement) => requirement[AGENT_SCHEME]!);
}

/**
 * Resolves a bearer token to its grant (`ctx.state.grant`), or to nothing when it is unknown, expired or revoked. A
 * lookup that fails (the database is away) is kept and reported by the security handler, so the request is still
 * counted by the limiter that follows and an unknown path still answers 404.
 */
export function resolveBearer(deps: Deps): AppMiddleware {
  return async (ctx, next) => {
    const token = parseBearerToken(ctx.get('Authorization'));
    if (token !== undefined) {
      try {
        ctx.state.grant = await findActiveGrant(deps, token);
      } catch (error) {
        ctx.state.bearerFailure = error;
      }
    }
    await next();
  };
}

export function agentAuthentication(
  deps: Deps,
): Pick<ContractOptions, 'securitySchemes' | 'afterAuthentication' | 'unauthorized'> {
  const { resourceMetadata } = agentUrls(deps.config);

  return {
    securitySchemes: {
      [AGENT_SCHEME]: (ctx) => ctx.state.grant !== undefined,
    },

    /** requireScopes: a valid token without one of the operation's scope sets is 403 insufficient_scope. */
    afterAuthentication(operation, ctx) {
      const { grant } = ctx.state;
      const requirements = agentScopeRequirements(operation);
      if (!grant || requirements.length === 0 || requirements.some((scopes) => hasScopes(grant.scopes, scopes))) return;
      const scope = formatScope(requirements[0]!);
      throw new ForbiddenScope(
        scope,
        `This operation needs the scope "${scope}", which the token was not granted.`,
        bearerChallenge({ error: 'insufficient_scope', scope, resourceMetadata }),
      );
    },

    unauthorized(ctx) {
      // A token that could not be looked up (an unreachable database) surfaces as that failure, not as a 401.
      if (ctx.state.bearerFailure) throw ctx.state.bearerFailure;
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
