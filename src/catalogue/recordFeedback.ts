import type { EventSink } from './EventSink.js'

export type FeedbackInput = { message: string; page?: string | undefined; rating?: number | undefined }

/**
 * Feedback from `/feedback.html` (`POST /feedback`) becomes a `feedback.submitted` catalogue event whose actor
 * is the sender's wallet, so operators read it where they read everything else (`/insight/`, the log).
 */
export async function recordFeedback(sink: EventSink, wallet: string, input: FeedbackInput): Promise<{ event_id: string; kind: 'feedback.submitted' }> {
  const event = await sink.emit({
    kind: 'feedback.submitted',
    actor: wallet.toLowerCase(),
    payload: { wallet: wallet.toLowerCase(), message: input.message, page: input.page ?? null, rating: input.rating ?? null },
  })
  return { event_id: event.event_id, kind: 'feedback.submitted' }
}
