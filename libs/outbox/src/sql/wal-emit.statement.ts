/**
 * The WAL delivery mode's write (README, "WAL delivery mode"): one transactional logical decoding
 * message. PostgreSQL decodes it at its transaction's commit, in commit order, and never if the
 * transaction rolls back; no table, index or row lock is touched. Parameters: prefix, content.
 */
export const WAL_EMIT_STATEMENT = 'SELECT pg_logical_emit_message(true, $1, $2)';
