// The one JSON-RPC core of the three MCP servers (/catalog/mcp, /checkout/mcp and UCP's /ucp/mcp): a tools-only
// server, stateless, one JSON-RPC message in and at most one answer out, in MCP 2026-07-28 (per-request _meta,
// server/discover; see eraOf) or in a handshake revision, 2025-11-25 or 2025-06-18 (initialize, ping). It classifies
// the message, picks its revision, dispatches, and writes the JSON-RPC error objects; where the surfaces differ (which
// messages are invalid and how that is said, how a bad tools/call is refused, what HTTP status an error travels
// with), a variant says so: MCP_VARIANT here, UCP's in src/mcp/ucp-server.ts. A server is built once per process
// from its tools (initialize, tools/list and server/discover results serialized once); nothing of a request outlives
// it. docs/mcp.md names the specification sections this follows.
// Hand-written rather than the SDK's Server and transport: those keep a connection per client and answer through it,
// while these answer stateless JSON over HTTP, UCP's errors carry the REST status (which SDK tools cannot answer), and
// a cached tool call is answered from stored bytes without parsing or serializing anything. The SDK's types are used.
import type {
  CallToolResult,
  ErrorCode,
  InitializeResult,
  JSONRPCErrorResponse,
  ListToolsResult,
  RequestId,
  Tool as ToolListing,
} from '@modelcontextprotocol/sdk/types.js';
import { SurfaceError } from '../domain/errors.js';
import type { Logger } from '../log.js';

/**
 * The modern revision (2026-07-28): no initialize; every request names its version and capabilities in its `_meta`
 * and, on HTTP, in the MCP-Protocol-Version header; `server/discover` says what the server speaks.
 */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** The handshake revisions an initialize can negotiate, newest first: a client asking for another gets the first. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18'] as const;
/** Every revision these servers speak, newest first (server/discover's supportedVersions). */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION, ...LEGACY_PROTOCOL_VERSIONS];

/** The reserved `_meta` keys of a 2026-07-28 request and result (basic/index.mdx, "General fields: _meta"). */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';

// JSON-RPC 2.0 error codes (the SDK's ErrorCode, as constants: its enum is a runtime import of all its schemas).
export const PARSE_ERROR = -32700 satisfies ErrorCode.ParseError;
export const INVALID_REQUEST = -32600 satisfies ErrorCode.InvalidRequest;
export const METHOD_NOT_FOUND = -32601 satisfies ErrorCode.MethodNotFound;
export const INVALID_PARAMS = -32602 satisfies ErrorCode.InvalidParams;
export const INTERNAL_ERROR = -32603 satisfies ErrorCode.InternalError;
// The codes MCP 2026-07-28 reserves for itself (basic/index.mdx, "Error Codes").
export const HEADER_MISMATCH = -32020;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** How long a client may hold tools/list and server/discover results (2026-07-28 caching): the tools never change. */
const LIST_TTL_MS = 3_600_000;

/** The error of a request naming a version these servers do not speak (with HTTP 400 on every surface). */
export function unsupportedProtocolVersion(requested: unknown): RpcError {
  return new RpcError(UNSUPPORTED_PROTOCOL_VERSION, 'Unsupported protocol version', {
    status: 400,
    data: { supported: SUPPORTED_PROTOCOL_VERSIONS, requested },
  });
}

export type JsonRpcId = RequestId;

/**
 * A JSON-RPC error as answered (the JSON-RPC surfaces' error in src/domain/errors.ts's hierarchy): its error object,
 * typed by the MCP SDK's JSON-RPC schema, and the HTTP status and headers it travels with.
 */
export class RpcError extends SurfaceError {
  constructor(
    readonly code: number,
    message: string,
    readonly options: { data?: Record<string, unknown>; status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }

  get status(): number {
    return this.options.status ?? 200;
  }

  /** The JSON-RPC error object. */
  get object(): JSONRPCErrorResponse['error'] {
    const { data } = this.options;
    return { code: this.code, message: this.message, ...(data && { data }) };
  }
}

/** What one message gets: a JSON answer with its HTTP status and headers, or nothing (202). */
export type Answer =
  | { kind: 'response'; status: number; json: string; headers: Record<string, string> }
  | { kind: 'accepted' }
  /** A message that is no JSON-RPC 2.0 request or notification: answered with no id, as the variant says. */
  | { kind: 'invalid'; status: number; json: string; headers: Record<string, string> };

/** A tool as the core serves it: its tools/list entry and its call (a tool result as JSON text, or a thrown error). */
export interface RpcTool<Context> {
  readonly name: string;
  readonly listing: ToolListing;
  call(args: unknown, context: Context): Promise<string>;
  /** A cached result for these arguments as UTF-8 JSON, when one is held (never runs the tool). */
  cached?(args: unknown): Buffer | undefined;
}

/**
 * What the request's HTTP headers mirror of its body (Streamable HTTP 2026-07-28, "Request Metadata"): the
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name headers as sent, absent when not sent.
 */
export interface MirroredHeaders {
  protocolVersion?: string;
  method?: string;
  name?: string;
}

export interface RpcServer<Context> {
  /**
   * `context` is what the tools need of the request; for the MCP servers, the request's logger, asked for lazily.
   * `headers` are what a 2026-07-28 request's headers must agree with (none for a legacy request).
   */
  answer(message: object, context: Context, headers?: MirroredHeaders): Promise<Answer>;
  /**
   * The response to a tools/call of a tool whose result the read cache holds for these arguments, as the parts of its
   * JSON to send one after another (the result's UTF-8 bytes among them, never copied); for any other message,
   * undefined (then `answer` must be asked). Present when a tool is cached.
   */
  cachedAnswer?(message: object, headers?: MirroredHeaders): ReadonlyArray<Buffer | string> | undefined;
}

/** The catalog and checkout servers: their tools log through the request's logger, asked for only when needed. */
export type McpServer = RpcServer<() => Logger>;

/** How a surface applies JSON-RPC and says what is wrong: the only place the servers differ. */
export interface RpcVariant<Context> {
  /** Whether a client's response (a message with no method) is accepted, 202, or invalid. */
  acceptsClientResponses: boolean;
  /** Whether params that are not an object make a message invalid, or are read as no params. */
  requiresObjectParams: boolean;
  /** The error a message that is not a JSON-RPC 2.0 request or notification is answered with (no id). */
  invalidMessage: RpcError;
  methodNotFound(method: string): RpcError;
  /** What an initialize without the client's protocolVersion is answered with; without it, none is required. */
  missingProtocolVersion?: RpcError;
  /**
   * Why a tools/call cannot reach a tool (`tool` is undefined when `name` names none of `toolNames`): an error, or a
   * tool result's JSON; undefined to call the tool, which checks its arguments itself. Asked only when the call names
   * no tool or its arguments are not an object: a call of a tool with an object is never refused here.
   */
  refuseToolCall(call: {
    name: unknown;
    args: unknown;
    tool: unknown;
    toolNames: string[];
  }): RpcError | string | undefined;
  /** Any other failure a tool throws, as the error answered; without it, the failure propagates (a server error). */
  failure?(error: unknown, context: Context): RpcError;
}

export interface RpcServerDefinition<Context> {
  name: string;
  title?: string;
  version: string;
  /** What the server is for and how its tools fit together, for the agent. */
  instructions?: string;
  tools: Array<RpcTool<Context>>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (id: unknown): id is JsonRpcId => typeof id === 'string' || Number.isInteger(id);

/** One message by JSON-RPC 2.0: a request, a notification, a client's response, or none of them. */
export type Classified =
  | { kind: 'request'; id: JsonRpcId; method: string; params: Record<string, unknown>; objectParams: boolean }
  | { kind: 'notification'; objectParams: boolean }
  | { kind: 'response' }
  | { kind: 'invalid' };

/** What `message` is; `objectParams` is false when params are present but not an object (they are then read as {}). */
export function classify(message: unknown): Classified {
  if (!isObject(message) || message.jsonrpc !== '2.0') return { kind: 'invalid' };
  if (typeof message.method === 'string') {
    const objectParams = message.params === undefined || isObject(message.params);
    if (!('id' in message)) return { kind: 'notification', objectParams };
    if (!isId(message.id)) return { kind: 'invalid' };
    const params = isObject(message.params) ? message.params : {};
    return { kind: 'request', id: message.id, method: message.method, params, objectParams };
  }
  const isResponse = isId(message.id) && ('result' in message ? !('error' in message) : isObject(message.error));
  return isResponse ? { kind: 'response' } : { kind: 'invalid' };
}

/** How `variant` treats a classified message: the request to answer, accepted, or invalid. */
export function admitted(
  classified: Classified,
  variant: Pick<RpcVariant<unknown>, 'acceptsClientResponses' | 'requiresObjectParams'>,
): Extract<Classified, { kind: 'request' }> | 'accepted' | 'invalid' {
  switch (classified.kind) {
    case 'invalid':
      return 'invalid';
    case 'response':
      return variant.acceptsClientResponses ? 'accepted' : 'invalid';
    case 'notification':
      return classified.objectParams || !variant.requiresObjectParams ? 'accepted' : 'invalid';
    case 'request':
      return classified.objectParams || !variant.requiresObjectParams ? classified : 'invalid';
  }
}

/** A response up to its result, which follows it, then `}`. */
function responseHead(id: JsonRpcId): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
}

const CLOSING_BRACE = Buffer.from('}');

function response(id: JsonRpcId, resultJson: string): Answer {
  return { kind: 'response', status: 200, json: `${responseHead(id)}${resultJson}}`, headers: {} };
}

/** A JSON-RPC error response's text; `id` is null when no id could be read. */
export function errorJson(id: JsonRpcId | null, error: RpcError): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: error.object });
}

/** The answer of `error`; `id` is null when no id could be read. */
export function errorAnswer(id: JsonRpcId | null, error: RpcError): Answer {
  return { kind: 'response', status: error.status, json: errorJson(id, error), headers: error.options.headers ?? {} };
}

/** The refusal of a message `variant` takes for no JSON-RPC 2.0 request or notification. */
function invalidAnswer(variant: RpcVariant<unknown>): Answer {
  const error = variant.invalidMessage;
  return { kind: 'invalid', status: error.status, json: errorJson(null, error), headers: error.options.headers ?? {} };
}

/** The MCP servers' variant: JSON-RPC's own errors, always with HTTP 200 but for an invalid message (400). */
export const MCP_VARIANT: RpcVariant<unknown> = {
  acceptsClientResponses: true,
  requiresObjectParams: true,
  invalidMessage: new RpcError(PARSE_ERROR, 'Parse error: the body is not a JSON-RPC 2.0 message.', { status: 400 }),
  methodNotFound: (method) => new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}.`),
  missingProtocolVersion: new RpcError(INVALID_PARAMS, 'Invalid params: protocolVersion is required.'),
  refuseToolCall({ name, args, tool, toolNames }) {
    if (typeof name !== 'string') return new RpcError(INVALID_PARAMS, 'Invalid params: name is required.');
    if (args !== undefined && !isObject(args))
      return new RpcError(INVALID_PARAMS, 'Invalid params: arguments must be an object.');
    if (tool) return undefined;
    // An unknown tool is the agent's mistake to correct, so it is told as a tool result it reads, not a protocol error.
    const result: CallToolResult = {
      isError: true,
      content: [{ type: 'text', text: `Unknown tool ${name}; this server's tools are ${toolNames.join(', ')}.` }],
    };
    return JSON.stringify(result);
  },
};

/** How one request is served: by a handshake revision (initialize, then plain requests), or by 2026-07-28. */
type Era = { modern: false } | { modern: true };
const LEGACY: Era = { modern: false };
const MODERN: Era = { modern: true };

/** A header value that may be Base64-wrapped (`=?base64?…?=`, Streamable HTTP 2026-07-28 "Value Encoding"), decoded. */
function decodedHeader(value: string): string {
  const wrapped = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  return wrapped ? Buffer.from(wrapped[1]!, 'base64').toString('utf8') : value;
}

function headerMismatch(message: string): RpcError {
  return new RpcError(HEADER_MISMATCH, `Header mismatch: ${message}`, { status: 400 });
}

/**
 * Which revision serves `request`, or why it cannot be served. A request is 2026-07-28's when its `_meta` names a
 * protocol version, when its MCP-Protocol-Version header is 2026-07-28, or when it is server/discover (which only that
 * revision has); initialize is always the handshake. A 2026-07-28 request must carry its version and capabilities in
 * `_meta` (else -32602), name a version spoken here (else -32022), and its headers must mirror its body (else -32020),
 * each with HTTP 400 (basic/index.mdx "_meta"; transports/streamable-http.mdx "Server Validation").
 */
function eraOf(request: { method: string; params: Record<string, unknown> }, headers: MirroredHeaders): Era | RpcError {
  if (request.method === 'initialize') return LEGACY;
  const meta = isObject(request.params._meta) ? request.params._meta : {};
  const version = meta[PROTOCOL_VERSION_META_KEY];
  if (
    version === undefined &&
    headers.protocolVersion !== MODERN_PROTOCOL_VERSION &&
    request.method !== 'server/discover'
  )
    return LEGACY;
  if (typeof version !== 'string')
    return new RpcError(INVALID_PARAMS, `Invalid params: _meta["${PROTOCOL_VERSION_META_KEY}"] is required.`, {
      status: 400,
    });
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return unsupportedProtocolVersion(version);
  if (headers.protocolVersion !== version)
    return headerMismatch(
      `MCP-Protocol-Version header ${headers.protocolVersion === undefined ? 'is missing' : `'${headers.protocolVersion}' does not match`} body value '${version}'.`,
    );
  // A handshake revision named per request: served as that revision (its headers agree, which is all it asks).
  if (version !== MODERN_PROTOCOL_VERSION) return LEGACY;
  if (!isObject(meta[CLIENT_CAPABILITIES_META_KEY]))
    return new RpcError(INVALID_PARAMS, `Invalid params: _meta["${CLIENT_CAPABILITIES_META_KEY}"] is required.`, {
      status: 400,
    });
  if (headers.method !== request.method)
    return headerMismatch(
      `Mcp-Method header ${headers.method === undefined ? 'is missing' : `'${headers.method}' does not match`} body value '${request.method}'.`,
    );
  if (request.method === 'tools/call') {
    const name = headers.name === undefined ? undefined : decodedHeader(headers.name);
    if (name !== request.params.name)
      return headerMismatch(
        `Mcp-Name header ${name === undefined ? 'is missing' : `'${name}' does not match`} body value '${String(request.params.name)}'.`,
      );
  }
  return MODERN;
}

export function createRpcServer<Context>(
  definition: RpcServerDefinition<Context>,
  variant: RpcVariant<Context>,
): RpcServer<Context> {
  const { name, title, version, instructions, tools } = definition;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const toolNames = tools.map((tool) => tool.name);
  const serverInfo = { name, ...(title !== undefined && { title }), version };
  // Only tools, and a fixed set of them: no listChanged notification could ever be sent.
  const capabilities = { tools: {} };
  /** initialize's result per handshake revision: the client's, when spoken here. */
  const initializeJson = new Map(
    LEGACY_PROTOCOL_VERSIONS.map((protocolVersion) => {
      const result: InitializeResult = {
        protocolVersion,
        capabilities,
        serverInfo,
        ...(instructions !== undefined && { instructions }),
      };
      return [protocolVersion as string, JSON.stringify(result)];
    }),
  );
  const toolsList: ListToolsResult = { tools: tools.map((tool) => tool.listing) };
  const toolsListJson = JSON.stringify(toolsList);
  // 2026-07-28: every result says it is complete and who answered it (basic/index.mdx "ResultType", "_meta"); list
  // and discover results say how long they stay fresh, for anyone (server/utilities/caching.mdx).
  const modernHead = `{"resultType":"complete","_meta":${JSON.stringify({ [SERVER_INFO_META_KEY]: serverInfo })}`;
  /** A result as 2026-07-28 answers it: `result` (a JSON object) with resultType and _meta first. */
  const modern = (result: string): string => (result === '{}' ? `${modernHead}}` : `${modernHead},${result.slice(1)}`);
  const cacheHints = `"ttlMs":${LIST_TTL_MS},"cacheScope":"public"`;
  const modernToolsListJson = modern(`{${cacheHints},${toolsListJson.slice(1)}`);
  const discoverJson = modern(
    JSON.stringify({
      supportedVersions: SUPPORTED_PROTOCOL_VERSIONS,
      capabilities,
      ...(instructions !== undefined && { instructions }),
      ttlMs: LIST_TTL_MS,
      cacheScope: 'public',
    }),
  );
  const modernHeadBytes = Buffer.from(`${modernHead},`);

  /** The tool a tools/call asks for, or the answer refusing it. */
  function toolOf(params: Record<string, unknown>): RpcTool<Context> | RpcError | string {
    const { name: toolName, arguments: args } = params;
    const tool = typeof toolName === 'string' ? byName.get(toolName) : undefined;
    if (tool && (args === undefined || isObject(args))) return tool;
    const refused = variant.refuseToolCall({ name: toolName, args, tool, toolNames });
    if (refused !== undefined) return refused;
    if (!tool) throw new Error(`The variant let a call of unknown tool ${String(toolName)} through`);
    return tool;
  }

  async function callTool(id: JsonRpcId, params: Record<string, unknown>, context: Context, era: Era): Promise<Answer> {
    const tool = toolOf(params);
    if (tool instanceof RpcError) return errorAnswer(id, tool);
    const result = (json: string) => response(id, era.modern ? modern(json) : json);
    if (typeof tool === 'string') return result(tool);
    try {
      return result(await tool.call(params.arguments, context));
    } catch (error) {
      const failure = error instanceof RpcError ? error : variant.failure?.(error, context);
      if (!failure) throw error;
      return errorAnswer(id, failure);
    }
  }

  /** What callTool would answer, when it is a cached result: the same checks, then a lookup that never runs a tool. */
  function cachedAnswer(message: object, headers: MirroredHeaders = {}): ReadonlyArray<Buffer | string> | undefined {
    const request = admitted(classify(message), variant);
    if (typeof request !== 'object' || request.method !== 'tools/call') return undefined;
    const era = eraOf(request, headers);
    if (era instanceof RpcError) return undefined;
    const tool = toolOf(request.params);
    if (typeof tool !== 'object' || tool instanceof RpcError || !tool.cached) return undefined;
    const result = tool.cached(request.params.arguments);
    // The result is sent as it is, never decoded, encoded or copied again (joined into one buffer it was a 4 kB
    // allocation and copy per cached call); a 2026-07-28 answer puts its head before the result's own fields.
    if (result === undefined) return undefined;
    if (!era.modern) return [responseHead(request.id), result, CLOSING_BRACE];
    return [responseHead(request.id), modernHeadBytes, result.subarray(1), CLOSING_BRACE];
  }

  /** Answers `request` by `era`'s rules. */
  async function dispatch(request: Extract<Classified, { kind: 'request' }>, context: Context, era: Era) {
    const { id, method, params } = request;
    if (era.modern)
      switch (method) {
        case 'server/discover':
          return response(id, discoverJson);
        case 'tools/list':
          return response(id, modernToolsListJson);
        case 'tools/call':
          return callTool(id, params, context, era);
        default: {
          // 2026-07-28 has no ping and no initialize; a method not served is a 404 on HTTP (streamable-http.mdx).
          const error = variant.methodNotFound(method);
          return errorAnswer(id, new RpcError(error.code, error.message, { ...error.options, status: 404 }));
        }
      }
    switch (method) {
      case 'initialize': {
        if (variant.missingProtocolVersion && typeof params.protocolVersion !== 'string')
          return errorAnswer(id, variant.missingProtocolVersion);
        // The client's revision when spoken here; else the newest handshake revision, and the client decides.
        const asked = initializeJson.get(params.protocolVersion as string);
        return response(id, asked ?? initializeJson.get(LEGACY_PROTOCOL_VERSIONS[0])!);
      }
      case 'ping':
        return response(id, '{}');
      case 'tools/list':
        return response(id, toolsListJson);
      case 'tools/call':
        return callTool(id, params, context, era);
      default:
        return errorAnswer(id, variant.methodNotFound(method));
    }
  }

  return {
    ...(tools.some((tool) => tool.cached) && { cachedAnswer }),
    async answer(message, context, headers = {}) {
      const request = admitted(classify(message), variant);
      if (request === 'invalid') return invalidAnswer(variant);
      if (request === 'accepted') return { kind: 'accepted' };
      const era = eraOf(request, headers);
      if (era instanceof RpcError) return errorAnswer(request.id, era);
      return dispatch(request, context, era);
    },
  };
}

export interface McpServerDefinition extends RpcServerDefinition<() => Logger> {
  title: string;
  instructions: string;
}

/** A catalog or checkout MCP server. */
export function createMcpServer(definition: McpServerDefinition): McpServer {
  return createRpcServer(definition, MCP_VARIANT);
}
