// The layering, enforced on every import the compiler sees, type imports included (ESLint's import-x/no-cycle
// ignores `import type`, so it cannot see a circle made of types). `npm run lint:deps` runs it; CI fails on any
// violation.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circle of imports, type imports included: one of its modules belongs in a lower layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'src/domain holds the rules and their types; it imports nothing from storage, use cases or bindings.',
      from: { path: '^src/domain/' },
      to: { path: '^src/(db|services|http|handlers|mcp|protocols|conformance)/' },
    },
    {
      name: 'services-see-no-web',
      severity: 'error',
      comment: 'Use cases return outcomes; the web layer, handlers and MCP bindings render them.',
      from: { path: '^src/services/' },
      to: { path: '^src/(http|handlers|mcp)/' },
    },
    {
      name: 'deps-and-ports-see-no-web',
      severity: 'error',
      comment: 'What services are built from (src/deps.ts) and the shared shapes (src/ports.ts) carry no HTTP types.',
      from: { path: '^src/(deps|ports)[.]ts$' },
      to: { path: '^src/(services|http|handlers|mcp|protocols)/' },
    },
    {
      name: 'db-below-services',
      severity: 'error',
      comment: 'Storage sits under the use cases and knows nothing of them or of the web.',
      from: { path: '^src/db/' },
      to: { path: '^src/(services|http|handlers|mcp)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are dependencies too: a circle of types is still a circle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
