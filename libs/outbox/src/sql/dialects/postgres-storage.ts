/**
 * Half of each page left free at insert: a claim's lease update (owner, token, expiry, attempts: no
 * indexed column) then finds room for the row's new version on its own page and stays a HOT
 * update, which writes no index entries. With full pages every lease wrote an entry into each of
 * the table's indexes, which the claims then walked past (BENCHMARKS.md, "Half-empty pages").
 */
export const OUTBOX_STORAGE = 'fillfactor = 50';
