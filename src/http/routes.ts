// The one router. Every route the service answers is registered here once, at start, with its pipeline compiled from
// its surface's steps (src/http/surfaces.ts): the contract's operations (each ending in its validation and handler,
// src/http/openapi.ts), the ACP and UCP bindings' routes (src/http/acp.ts, ucp.ts), and the MCP endpoints. A path a
// route serves answers any other method with its surface's 405; a path no route serves, its surface's 404 (the
// surface of the longest prefix that names one; the public reads surface for the rest). Paths are matched as Koa reads
// them, without their trailing slashes, their parameters percent-decoded; a path that is not valid percent-encoding
// names no route.
import FindMyWay from 'find-my-way';
import compose from 'koa-compose';
import type { AppContext, AppMiddleware, MatchedRoute } from './context.js';
import { MethodNotAllowed, UnknownEndpoint } from '../domain/errors.js';
import { isDecodable } from './errors.js';
import { operationStep, type Contract } from './openapi.js';
import type { BindingAnswer, BindingRoute, ProtocolBinding } from './protocol-io.js';
import type { ProtocolBindings } from './protocols.js';
import { limitByAddress } from './rate-limit.js';
import {
  protocolErrors,
  surfaceOf,
  surfacePaths,
  surfaces,
  type RouteSpec,
  type Surface,
  type SurfaceParts,
} from './surfaces.js';
import type { McpServer } from '../mcp/rpc.js';
import { serveMcp } from '../mcp/transport.js';
import type { Metrics } from '../metrics.js';

export interface RouteParts extends SurfaceParts {
  contract: Contract;
  /** The protocol bindings that are on; a binding switched off leaves its paths to the reads surface (a 404). */
  protocols: ProtocolBindings;
  /** The MCP servers by path. */
  mcpServers: Record<string, McpServer>;
}

/** A route's compiled steps, run for one request. */
type Pipeline = (ctx: AppContext) => Promise<void>;

/** What one path (template) answers: a pipeline per method, or one for every method, and its misses. */
interface PathRoutes {
  methods: Map<string, Pipeline>;
  /** The pipeline of an endpoint that judges every method itself (MCP). */
  any?: Pipeline;
  /** Another method: the surface's 405, naming the methods served. */
  notAllowed: Pipeline;
  /** A parameter that is empty or not valid percent-encoding: the surface's 404. */
  notFound: Pipeline;
  /** The surface that answers the path's 404 and 405. */
  misses: Surface;
  /**
   * Whether a parameter that is not valid percent-encoding is passed on as sent (a protocol binding looks such an id
   * up, and finds no session) rather than naming no route.
   */
  takesUndecodable?: boolean;
}

/** Serves a request: finds its route and runs the route's compiled pipeline. */
export type RouteRequest = Pipeline;

/** A path as Koa reads it, without trailing slashes (the root stays `/`). */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end--;
  return end === path.length ? path : path.slice(0, end);
}

const unknownEndpoint: AppMiddleware = (ctx) => {
  throw new UnknownEndpoint(ctx.method, ctx.path);
};

function methodNotAllowed(allowed: string[]): AppMiddleware {
  return (ctx) => {
    throw new MethodNotAllowed(ctx.method, ctx.path, allowed);
  };
}

/** The `http_route` of a request no route serves (a bounded label, whatever the path). */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * The surface's steps that mean something for this route, then `last`, inside the surface's error rendering. The
 * pipeline names its route on the request's state first (its template; none for a path no route serves), for the
 * request's span, and, when metrics are kept, the route's duration recorder, labelled with its template or `unmatched`
 * (`matched` false: a path no route serves), which the door (src/http/server.ts) tells how the request ended.
 */
function compileWith(
  metrics: Metrics | undefined,
  surface: Surface,
  spec: RouteSpec,
  last: AppMiddleware,
  matched = true,
): Pipeline {
  const steps: AppMiddleware[] = [surface.errors];
  for (const step of surface.steps) {
    const middleware = step(spec);
    if (middleware) steps.push(middleware);
  }
  steps.push(last);
  const run = compose(steps) as Pipeline;
  const operationId = spec.operation?.operationId;
  const route: MatchedRoute = {
    template: matched ? spec.path : undefined,
    operationId,
    recorder: metrics?.route(surface.name, matched ? spec.path : UNMATCHED_ROUTE, matched ? operationId : undefined),
  };
  return (ctx) => {
    ctx.state.route = route;
    return run(ctx);
  };
}

/** GET answers HEAD too (RFC 9110); the methods an Allow header names. */
function allowedMethods(methods: Iterable<string>): string[] {
  const allowed = [...methods].filter((method) => method !== 'HEAD');
  return allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
}

/** A binding's surface: its error rendering, its opening headers, and (unless the route counts itself) the limiter. */
function bindingSurface(name: string, binding: ProtocolBinding, parts: RouteParts, counted: boolean): Surface {
  const opening: AppMiddleware = (ctx, next) => {
    for (const [name, value] of binding.opening(ctx)) ctx.set(name, value);
    return next();
  };
  const byAddress = limitByAddress(parts.limiter);
  return {
    name,
    errors: protocolErrors(binding),
    steps: [() => opening, () => (counted ? byAddress : undefined)],
  };
}

function bindingAnswer(answer: BindingAnswer): AppMiddleware {
  return (ctx) => answer(ctx, ctx.state.params ?? {});
}

export function compileRoutes(parts: RouteParts): RouteRequest {
  const table = surfaces(parts);
  const compile = compileWith.bind(undefined, parts.deps.metrics);
  const paths = new Map<string, PathRoutes>();

  /** The routes of a path, created with its surface's misses on first use. */
  function pathRoutes(path: string, misses: Surface): PathRoutes {
    let routes = paths.get(path);
    if (!routes) {
      const miss = { method: undefined, path, readsBody: false };
      const notFound = compile(misses, miss, unknownEndpoint, false);
      routes = { methods: new Map(), notAllowed: notFound, notFound, misses };
      paths.set(path, routes);
    }
    return routes;
  }

  // The contract's operations.
  for (const route of parts.contract.routes) {
    const { operation } = route;
    const method = operation.method.toUpperCase();
    const surface = table[surfaceOf(method, operation.path)];
    const spec = { method, path: operation.path, operation, readsBody: Boolean(operation.requestBody) };
    const pipeline = compile(surface, spec, operationStep(parts.contract, route));
    const routes = pathRoutes(operation.path, table[surfaceOf('GET', operation.path)]);
    routes.methods.set(method, pipeline);
    if (method === 'GET') routes.methods.set('HEAD', pipeline);
  }

  // The protocol bindings' routes.
  for (const [name, binding] of Object.entries(parts.protocols) as Array<[string, ProtocolBinding]>) {
    const counted = bindingSurface(name, binding, parts, true);
    for (const route of binding.routes as BindingRoute[]) {
      const surface = route.counted === false ? bindingSurface(name, binding, parts, false) : counted;
      const routes = pathRoutes(route.path, counted);
      routes.takesUndecodable = true;
      if ('any' in route.methods) {
        const spec = { method: undefined, path: route.path, readsBody: false };
        routes.any = compile(surface, spec, bindingAnswer(route.methods.any));
        continue;
      }
      for (const [method, answer] of Object.entries(route.methods)) {
        const pipeline = compile(surface, { method, path: route.path, readsBody: false }, bindingAnswer(answer));
        routes.methods.set(method, pipeline);
        if (method === 'GET') routes.methods.set('HEAD', pipeline);
      }
    }
    for (const path of binding.paths) {
      if (!paths.has(path)) pathRoutes(path, counted);
    }
  }

  // The MCP endpoints: the transport judges every method (preflights, 405s) itself.
  for (const [path, server] of Object.entries(parts.mcpServers)) {
    const surface = table[surfaceOf('POST', path)];
    const routes = pathRoutes(path, surface);
    routes.any = compile(surface, { method: undefined, path, readsBody: false }, (ctx) =>
      serveMcp(ctx, parts.deps, server),
    );
  }

  // Each surface's prefixes, so that a path no route serves is answered in its surface's shape.
  for (const { path, surface } of surfacePaths()) {
    if (!paths.has(path)) pathRoutes(path, table[surface]);
  }

  // A served path's other methods: its surface's 405, after the steps a request to it takes.
  for (const [path, routes] of paths) {
    if (routes.methods.size === 0) continue;
    const spec = { method: undefined, path, readsBody: false };
    routes.notAllowed = compile(routes.misses, spec, methodNotAllowed(allowedMethods(routes.methods.keys())));
  }

  const router = FindMyWay({ maxParamLength: 65_536 });
  for (const [path, routes] of paths) router.on('GET', path.replace(/\{([^}]+)\}/g, ':$1'), () => {}, routes);
  const everywhereElse = compile(
    table.reads,
    { method: undefined, path: '/', readsBody: false },
    unknownEndpoint,
    false,
  );

  return (ctx) => {
    const path = withoutTrailingSlashes(ctx.path);
    const decodable = !path.includes('%') || isDecodable(path);
    const found = router.find('GET', decodable ? path : encodeURI(path));
    if (!found) return everywhereElse(ctx);
    const routes = found.store as PathRoutes;
    // Matched as its percent-encoded spelling, an undecodable parameter is its text as sent.
    if (!decodable && !routes.takesUndecodable) return routes.notFound(ctx);
    let empty = false;
    for (const name in found.params) if (found.params[name] === '') empty = true;
    if (empty) return routes.notFound(ctx);
    ctx.state.params = found.params as Record<string, string>;
    if (routes.any) return routes.any(ctx);
    return (routes.methods.get(ctx.method) ?? routes.notAllowed)(ctx);
  };
}
