/** Rows of `/llm` keys and `/coreagent` for `src/handlers/errorCatalogue.ts`. */
export const llmErrorRows: Record<string, { status: number }> = {
  llm_key_not_found: { status: 404 },
}
