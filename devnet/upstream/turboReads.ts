/**
 * The payment service's remaining read routes the Turbo SDK calls (`@ardrive/turbo-sdk` 1.43:
 * `getSupportedCurrencies`, `getSupportedCountries`, `getWincForFiat`, `getWincForToken`,
 * `getTokenPriceForBytes`), with Turbo's reply shapes:
 *   GET /v1/currencies                → {supportedCurrencies, limits: {<c>: {minimumPaymentAmount, …}}}
 *   GET /v1/countries                 → ["United States", …]
 *   GET /v1/price/{currency}/{amount} → fiat in minor units (cents; yen for JPY):
 *                                       {winc, adjustments, fees, actualPaymentAmount, quotedPaymentAmount}
 *   GET /v1/price/{token}/{amount}    → token in base units (winston; USDC atomic units for `usdc` and
 *                                       `base-usdc`): {winc, adjustments, fees, actualPaymentAmount}
 * Prices follow the same pricing as the rest of the upstream: `fiat[c]` buys one GiB (`wincPerGiB`), one
 * winston is one winc, one USDC is worth `fiat.usd / wincPerGiB` like a top-up. Registered after
 * `/v1/price/bytes/{n}`, which keeps that path.
 */
import { HttpError, sendJson, type Router } from '../http.js'
import { wincForUsdAtomic, type Pricing } from './pricing.js'

const ZERO_DECIMAL = new Set(['jpy'])
const TOKENS = new Set(['arweave', 'usdc', 'base-usdc'])
const COUNTRIES = ['United States', 'United Kingdom', 'Canada', 'Australia', 'Germany', 'France', 'Japan', 'India', 'Singapore', 'Hong Kong', 'Brazil']

const textError = (status: number, text: string) => new HttpError(status, text, { __text: text })

/** Payment limits in minor units, Turbo's: $5 … $10,000 with suggestions $25/$50/$100, scaled by rate. */
function limitsFor(pricing: Pricing, currency: string) {
  const zero = ZERO_DECIMAL.has(currency)
  const unit = zero ? 1 : 100
  const scale = (pricing.fiat[currency] ?? 0) / (pricing.fiat.usd ?? 1)
  const minor = (usd: number) => Math.ceil(usd * scale * unit)
  return {
    minimumPaymentAmount: minor(5),
    maximumPaymentAmount: minor(10_000),
    suggestedPaymentAmounts: [minor(25), minor(50), minor(100)],
    zeroDecimalCurrency: zero,
  }
}

/** Winc bought by `amount` minor units of `currency` at `fiat[currency]` per GiB. */
export function wincForFiat(pricing: Pricing, currency: string, amount: bigint): bigint {
  const rate = pricing.fiat[currency]
  if (rate === undefined || rate <= 0) throw new Error(`no rate for ${currency}`)
  const microMinorPerGiB = BigInt(Math.round(rate * (ZERO_DECIMAL.has(currency) ? 1 : 100) * 1_000_000))
  return (amount * 1_000_000n * pricing.wincPerGiB) / microMinorPerGiB
}

export function addTurboReadRoutes(router: Router, pricing: Pricing): void {
  router.get('/v1/currencies', (_req, res) => {
    const supportedCurrencies = Object.keys(pricing.fiat)
    sendJson(res, 200, { supportedCurrencies, limits: Object.fromEntries(supportedCurrencies.map((c) => [c, limitsFor(pricing, c)])) })
  })
  router.get('/v1/countries', (_req, res) => sendJson(res, 200, COUNTRIES))
  router.get('/v1/price/{type}/{amount}', (req, res) => {
    const type = (req.params.type as string).toLowerCase()
    const raw = req.params.amount as string
    if (!/^\d+$/.test(raw)) throw textError(400, `Invalid payment amount: ${raw}`)
    const amount = BigInt(raw)
    if (TOKENS.has(type)) {
      const winc = type === 'arweave' ? amount : wincForUsdAtomic(pricing, amount)
      sendJson(res, 200, { winc: winc.toString(), adjustments: [], fees: [], actualPaymentAmount: raw })
      return
    }
    if (pricing.fiat[type] === undefined) throw textError(400, `Invalid currency: ${type}`)
    const { minimumPaymentAmount, maximumPaymentAmount } = limitsFor(pricing, type)
    if (amount < BigInt(minimumPaymentAmount) || amount > BigInt(maximumPaymentAmount)) {
      throw textError(400, `The provided payment amount (${raw}) is outside the ${type} limits ${minimumPaymentAmount}–${maximumPaymentAmount}`)
    }
    const n = Number(amount)
    sendJson(res, 200, { winc: wincForFiat(pricing, type, amount).toString(), adjustments: [], fees: [], actualPaymentAmount: n, quotedPaymentAmount: n })
  })
}
