// The published contract (/openapi.json, /docs): the bundled document as its consumers need it. The bundled
// codegen/openapi.json stays strict: the service routes and validates requests with it and the tests validate every
// response against it. What changes here, for whatever operations the document holds:
// - an operation marked `x-alias-of: <operationId>` (another spelling of the same path) is folded into the operation it
//   repeats: still served and named in that operation's description, but generators emit one method per capability;
// - everything reachable from a response is opened for additive change (the spec: "fields are added and never
//   removed"): no `additionalProperties`/`unevaluatedProperties: false`, string enums become `x-extensible-enum`, and
//   `oneOf` becomes `anyOf` (branches that are open may overlap); request schemas stay strict;
// - server variables lose their `description` (@apidevtools/swagger-parser, inside orval and many pipelines, rejects
//   it); the service substitutes the configured URLs when it serves the document (src/handlers/operations).

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const clone = (value) => JSON.parse(JSON.stringify(value));

function pointerGet(document, ref) {
  return ref
    .slice(2)
    .split('/')
    .reduce((node, key) => node?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], document);
}

function refsIn(node, found = new Set()) {
  if (node && typeof node === 'object') {
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) found.add(node.$ref);
    for (const value of Object.values(node)) refsIn(value, found);
  }
  return found;
}

function* operations(document) {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) if (item[method]) yield { path, item, method, operation: item[method] };
  }
}

function foldAliases(document) {
  const byId = new Map([...operations(document)].map((entry) => [entry.operation.operationId, entry]));
  for (const { path, item, method, operation } of [...operations(document)]) {
    const target = operation['x-alias-of'];
    if (!target) continue;
    const canonical = byId.get(target);
    if (!canonical) throw new Error(`${operation.operationId}: x-alias-of names no operation: ${target}`);
    const note = `Also served at \`${method.toUpperCase()} ${path}\` (the same operation; generate clients from this one).`;
    canonical.operation.description = canonical.operation.description
      ? `${canonical.operation.description.trimEnd()}\n\n${note}\n`
      : note;
    delete item[method];
    if (!METHODS.some((m) => item[m])) delete document.paths[path];
  }
}

/** Opens one schema (and every schema nested in it) for additive change. */
function openSchema(node) {
  if (Array.isArray(node)) return node.forEach(openSchema);
  if (!node || typeof node !== 'object') return;
  if (node.additionalProperties === false) delete node.additionalProperties;
  if (node.unevaluatedProperties === false) delete node.unevaluatedProperties;
  if (Array.isArray(node.oneOf)) {
    node.anyOf = node.oneOf;
    delete node.oneOf;
  }
  if (Array.isArray(node.enum) && node.enum.every((value) => typeof value === 'string')) {
    node['x-extensible-enum'] = node.enum;
    delete node.enum;
    if (!node.type) node.type = 'string';
  }
  for (const [key, value] of Object.entries(node))
    if (key !== 'examples' && key !== 'example' && key !== 'x-extensible-enum') openSchema(value);
}

function openResponses(document) {
  const roots = new Set();
  const requestRoots = new Set();
  for (const { item, operation } of operations(document)) {
    for (const response of Object.values(operation.responses ?? {})) {
      refsIn(response, roots);
      if (response.$ref) continue;
      for (const media of Object.values(response.content ?? {})) if (media.schema) openSchema(media.schema);
      for (const header of Object.values(response.headers ?? {})) if (header.schema) openSchema(header.schema);
    }
    refsIn([operation.requestBody ?? {}, operation.parameters ?? [], item.parameters ?? []], requestRoots);
  }
  const reach = (start) => {
    const seen = new Set();
    const todo = [...start];
    while (todo.length) {
      const ref = todo.pop();
      if (seen.has(ref)) continue;
      seen.add(ref);
      todo.push(...refsIn(pointerGet(document, ref)));
    }
    return seen;
  };
  const requests = reach(requestRoots);
  for (const ref of reach(roots)) {
    if (requests.has(ref)) throw new Error(`${ref} is used by both a request and a response: give each its own schema`);
    const target = pointerGet(document, ref);
    if (ref.startsWith('#/components/schemas/')) openSchema(target);
    else if (ref.startsWith('#/components/responses/'))
      for (const media of Object.values(target.content ?? {})) openSchema(media.schema);
    else if (ref.startsWith('#/components/headers/')) openSchema(target.schema);
  }
}

function plainServerVariables(document) {
  const servers = [
    document.servers ?? [],
    ...Object.values(document.paths ?? {}).map((item) => item.servers ?? []),
    ...[...operations(document)].map(({ operation }) => operation.servers ?? []),
  ];
  for (const list of servers)
    for (const server of list)
      for (const variable of Object.values(server.variables ?? {})) delete variable.description;
}

/** The published document for a bundled one (which is left untouched). */
export function publish(bundled) {
  const document = clone(bundled);
  foldAliases(document);
  openResponses(document);
  plainServerVariables(document);
  return document;
}
