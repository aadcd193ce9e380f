import type { InsertResult } from 'kysely'
import { isUniqueViolation } from './isUniqueViolation.js'

/**
 * Runs an `INSERT … ON CONFLICT DO NOTHING` that claims a unique key: true when this statement inserted the
 * row, false when the key was already taken — by a committed row (nothing inserted) or by a concurrent or other
 * unique key the conflict clause does not cover (a unique violation).
 */
export async function insertedOnce(insert: { executeTakeFirst(): Promise<InsertResult> }): Promise<boolean> {
  try {
    const result = await insert.executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
  } catch (error) {
    if (isUniqueViolation(error)) return false
    throw error
  }
}
