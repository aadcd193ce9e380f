/** A page of the site: where it is, what it is called, what it does and whether it needs a wallet sign-in. */
export type SitePage = { path: string; label: string; what: string; needs: 'wallet' | 'nothing' }

/**
 * Every page a visitor can open, in the navigation's order. `needs` is the arrival gate's rule (seed 000 §4.1,
 * §4.2): the session pages need a wallet sign-in; the API documents (`/docs.html`, `/doc/`) are public, so partners
 * generate clients from them without a wallet, while the interactive explorer (`/docs`) and the handbook (`/book`)
 * stay behind the session as the tier matrix lists them. tests/browser/homePage.test.ts checks each claim against
 * the gate.
 */
export const SITE_PAGES: readonly SitePage[] = [
  { path: '/storage/', label: 'Storage', needs: 'wallet', what: 'Pay for a file with your wallet and store it on Arweave for good; follow your uploads, their verification, receipts and links.' },
  { path: '/insight/', label: 'Insight', needs: 'wallet', what: 'The live catalogue of events: sign-ins, uploads, payments, feedback.' },
  { path: '/registry/', label: 'Registry', needs: 'wallet', what: 'The AI agents, with their model, capabilities, status and revision.' },
  { path: '/dojo', label: 'Dojo', needs: 'wallet', what: 'Chat with an agent or a model, its answer streamed as it is written.' },
  { path: '/boardroom', label: 'Boardroom', needs: 'wallet', what: "Put a motion to a company's cabinet of eight agent wallets and see each member's weighted vote." },
  { path: '/journal', label: 'Journal', needs: 'wallet', what: 'Your sign-ins, the calls left today, your uploads and payments.' },
  { path: '/coreterm/', label: 'Core terminal', needs: 'wallet', what: 'A terminal to the core agent, which remembers what you tell it.' },
  { path: '/book', label: 'Book', needs: 'wallet', what: "The operator's handbook: the README and the docs, rendered by this server." },
  { path: '/docs', label: 'API docs', needs: 'wallet', what: 'The API explorer (Swagger UI): try each operation with your session.' },
  { path: '/feedback.html', label: 'Feedback', needs: 'wallet', what: 'Tell us what works and what does not.' },
  { path: '/docs.html', label: 'API documents', needs: 'nothing', what: 'The OpenAPI and AsyncAPI documents, to read or to generate a client from.' },
]
