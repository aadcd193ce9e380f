import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testPostgresUrl } from '../../tests/support/testDatabase.js'
import { namedStatementPool } from './namedStatementPool.js'

type Tables = { t: { id: number; v: string } }
const schema = `named_${Date.now().toString(36)}`
let pool: pg.Pool
let db: Kysely<Tables>

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: testPostgresUrl })
  await admin.connect()
  await admin.query(`CREATE SCHEMA "${schema}"`)
  await admin.end()
  // One connection, so every query below runs on the connection whose prepared statements we inspect.
  pool = new pg.Pool({ connectionString: testPostgresUrl, max: 1, options: `-c search_path=${schema}` })
  db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: namedStatementPool(pool) }) })
  await db.schema.createTable('t').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('v', 'text').execute()
})

afterAll(async () => {
  await db.destroy()
  const admin = new pg.Client({ connectionString: testPostgresUrl })
  await admin.connect()
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
  await admin.end()
})

const prepared = async () =>
  (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db)).rows

describe('namedStatementPool', () => {
  it('runs parameterised queries as named prepared statements, once per SQL text', async () => {
    await db.insertInto('t').values({ id: 1, v: 'a' }).execute()
    await db.insertInto('t').values({ id: 2, v: 'b' }).execute()
    expect(await db.selectFrom('t').selectAll().where('id', '=', 2).executeTakeFirst()).toEqual({ id: 2, v: 'b' })
    expect(await db.selectFrom('t').selectAll().where('id', '=', 1).executeTakeFirst()).toEqual({ id: 1, v: 'a' })
    const statements = await prepared()
    const select = statements.filter((s) => s.statement.startsWith('select * from "t"'))
    const insert = statements.filter((s) => s.statement.startsWith('insert into "t"'))
    expect(select).toHaveLength(1)
    expect(insert).toHaveLength(1)
    expect(select[0]!.name).toMatch(/^k[0-9a-f]{20}$/)
  })

  it('leaves queries without parameters (DDL) unnamed', async () => {
    await sql`create index t_v on t (v)`.execute(db)
    expect((await prepared()).some((s) => s.statement.includes('create index'))).toBe(false)
  })

  it('falls back to an unnamed query when a table changed shape under a prepared plan', async () => {
    const read = () => db.selectFrom('t').selectAll().where('id', '=', 1).executeTakeFirst()
    expect(await read()).toEqual({ id: 1, v: 'a' })
    await sql`alter table t add column w text default 'w'`.execute(db)
    expect(await read()).toEqual({ id: 1, v: 'a', w: 'w' })
    expect(await read()).toEqual({ id: 1, v: 'a', w: 'w' })
  })
})
