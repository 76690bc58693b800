// The typed client SDK: openapi-fetch over the types generated from the contract. What an integrator gets is what the
// integration tests use.
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from '../codegen/types.js';

export type { components, operations, paths };
export type StorefrontClient = Client<paths>;

export function createStorefrontClient(options: ClientOptions & { baseUrl: string }): StorefrontClient {
  return createClient<paths>(options);
}
