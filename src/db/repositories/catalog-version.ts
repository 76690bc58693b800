// The catalogue's version (migration 007): one counter, bumped at the commit of any change to what a create reads.

/**
 * Whether something priced at `pricedAt` (an SQL expression: the catalogue version of the earlier read it was priced
 * from, or null when priced from its own read) may be stored: null, or still the current version. Evaluated by the
 * statement that stores it, so nothing committed between that read and the store is missed.
 */
export const stillPricedAt = (pricedAt: string) =>
  `(select coalesce(${pricedAt} = version, true) from catalog_version)`;
