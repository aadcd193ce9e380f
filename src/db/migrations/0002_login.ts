import type { Kysely, Migration } from 'kysely'

// Tables of the login domain. Owned by that domain; filled in by its issue.
export interface LoginTables {}

export const migration: Migration = {
  async up(_db: Kysely<any>): Promise<void> {},
  async down(_db: Kysely<any>): Promise<void> {},
}
