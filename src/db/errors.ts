/** Maps driver errors of both dialects to the few kinds the services care about. */
export type DbErrorKind = 'unique' | 'foreign_key' | 'other'

export function dbErrorKind(err: unknown): DbErrorKind {
  const code = (err as { code?: unknown } | null)?.code
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
    return 'unique'
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return 'foreign_key'
  return 'other'
}

export const isUniqueViolation = (err: unknown): boolean => dbErrorKind(err) === 'unique'
