// Bearer-token authentication and scope enforcement for the /agent surface (issue #4 fills this in).
import type { Deps } from '../deps.js';
import type { ContractOptions } from './openapi.js';

export function agentAuthentication(_deps: Deps): Pick<ContractOptions, 'securityHandlers' | 'afterAuthentication' | 'unauthorized'> {
  return {};
}
