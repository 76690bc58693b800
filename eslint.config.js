// ESLint (flat config): typescript-eslint's recommended rules, no import cycles, and the layer rule of
// docs/architecture.md: the domain imports nothing from the other layers, not even types (it is typed by the
// contract's generated types and its own records); services import nothing from HTTP, MCP or the handlers, types included;
// the conformance runner nothing of the store. Cycles counting type imports, which import-x/no-cycle cannot see, are
// dependency-cruiser's (.dependency-cruiser.cjs, `npm run lint:deps`).
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const layer = (from, forbidden, why, { allowTypeImports = true } = {}) => ({
  files: [`src/${from}/**/*.ts`],
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: forbidden.map((name) => ({
          group: [`**/${name}/**`, `../${name}/**`, `**/${name}.js`],
          message: why,
          allowTypeImports,
        })),
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'codegen/**', 'sdk/dist/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // CommonJS configuration files (.dependency-cruiser.cjs).
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } } },
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver()],
    },
    rules: {
      'import-x/no-cycle': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  layer(
    'domain',
    ['http', 'db', 'services', 'handlers', 'mcp', 'deps'],
    'src/domain is pure: it imports nothing from the other layers, types included (records it shapes are its own).',
    { allowTypeImports: false },
  ),
  layer('services', ['http', 'handlers', 'mcp'], 'Services know nothing of HTTP or MCP, not even types.', {
    allowTypeImports: false,
  }),
  layer(
    'conformance',
    ['http', 'db', 'services', 'handlers', 'mcp', 'domain', 'protocols', 'deps', 'config', 'paths', 'service'],
    'The conformance runner judges any merchant: it imports nothing of this store (its schemas come from protocols/).',
    { allowTypeImports: false },
  ),
);
