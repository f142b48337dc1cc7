/** PostgreSQL's `unique_violation` (SQLSTATE 23505), from pg or PGlite: the row another writer already made. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
