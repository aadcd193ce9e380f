import type { Kysely, Migration } from 'kysely'

// Tables of the batch domain. Owned by that domain; filled in by its issue.
export interface BatchTables {}

export const migration: Migration = {
  async up(_db: Kysely<any>): Promise<void> {},
  async down(_db: Kysely<any>): Promise<void> {},
}
