import { hashToken } from '../../auth/LoginService.js'
import { recordFeedback } from '../../catalogue/recordFeedback.js'
import { readJournal } from '../../journal/readJournal.js'
import type { Handler } from '../types.js'
import { requireWallet, sessionTokenOf } from './session.js'

/** `GET /store/uploads`: the caller's paid uploads (designed; the `/storage/` page). */
export const listMyUploads: Handler = async (ctx) => {
  const wallet = requireWallet(ctx)
  const limit = (ctx.query.limit as number | undefined) ?? 50
  return { status: 200, body: { wallet: wallet.toLowerCase(), uploads: await ctx.services.storage.listUploads(wallet, limit) }, headers: { 'Cache-Control': 'no-store' } }
}

/** `GET /users/me/journal`: the caller's sign-ins, quota, cost calls and uploads (designed; `/journal`). */
export const getMyJournal: Handler = async (ctx) => {
  const wallet = requireWallet(ctx)
  const { db, quota, storage } = ctx.services
  const token = sessionTokenOf(ctx)
  const body = await readJournal({ db, quota, uploads: (w, limit) => storage.listUploads(w, limit) }, wallet, token ? hashToken(token) : undefined)
  return { status: 200, body, headers: { 'Cache-Control': 'no-store' } }
}

/** `POST /feedback`: the `/feedback.html` form, stored as a `feedback.submitted` catalogue event (designed). */
export const submitFeedback: Handler = async (ctx) => {
  const wallet = requireWallet(ctx)
  const input = ctx.body as { message: string; page?: string; rating?: number }
  return { status: 201, body: await recordFeedback(ctx.services.catalogue, wallet, input) }
}
