// Strings PostgreSQL cannot store: text and jsonb refuse U+0000, and jsonb refuses an unpaired UTF-16 surrogate
// (JSON escapes such as "\ud800" parse into one). A request holding either must be refused with a clear error
// before any query is built from it; found by the hostile-input tests as 500s.
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u; // with the u flag, the range matches only unpaired surrogates

export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);
}

/** The path (keys and indexes) of the first string or object key in `value` that cannot be stored, if any. */
export function unstorableTextAt(value: unknown): Array<string | number> | undefined {
  const path: Array<string | number> = [];
  return holdsUnstorableText(value, path) ? path : undefined;
}

/**
 * Whether `value` holds a string or key that cannot be stored, `path` then leading to it. One path array, extended and
 * cut back as the search goes, rather than a new array and key-value pairs per value: every ACP and UCP request body
 * and every MCP tool's arguments are searched (issue #15).
 */
function holdsUnstorableText(value: unknown, path: Array<string | number>): boolean {
  if (typeof value === 'string') return !isStorableText(value);
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      path.push(index);
      if (holdsUnstorableText(value[index], path)) return true;
      path.pop();
    }
    return false;
  }
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      path.push(key);
      if (!isStorableText(key) || holdsUnstorableText(Reflect.get(value, key), path)) return true;
      path.pop();
    }
  }
  return false;
}
