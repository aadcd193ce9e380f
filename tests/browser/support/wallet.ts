import type { Page } from 'playwright-core'
import { type Address, type Hex, type TypedDataDefinition } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/**
 * What a test wallet does in Node. `address` is what the page sees (for a smart-contract wallet: the contract,
 * while `signMessage` returns the owner's EIP-1271 or EIP-6492-wrapped signature).
 */
export type TestWallet = {
  address: Address
  /** EIP-191 over the raw bytes the page passed to `personal_sign`. */
  signMessage: (raw: Hex) => Promise<Hex>
  signTypedData: (data: TypedDataDefinition) => Promise<Hex>
  /** EIP-6963 provider info; defaults to "Test Wallet" / `org.pay2store.testwallet`. */
  info?: { name: string; rdns: string }
}

/** A plain EOA wallet backed by a private key (viem account). */
export function walletFromKey(privateKey: Hex, info?: TestWallet['info']): TestWallet {
  const account = privateKeyToAccount(privateKey)
  return {
    address: account.address,
    signMessage: (raw) => account.signMessage({ message: { raw } }),
    signTypedData: (data) => account.signTypedData(data),
    info,
  }
}

/** Every wallet request the page made, in order (tests assert e.g. that `eth_signTypedData_v4` was used). */
export type WalletLog = { method: string; provider: number }[]

/**
 * Injects EIP-1193 providers into every document of `page` (before any page script runs): the first wallet is
 * `window.ethereum`, and each wallet is announced through EIP-6963 (`eip6963:announceProvider`, answered again
 * on every `eip6963:requestProvider`). Requests cross to Node through `page.exposeFunction`, where the key
 * signs; the key itself never enters the page. Supported: eth_requestAccounts, eth_accounts, eth_chainId,
 * net_version, personal_sign, eth_signTypedData_v4, wallet_switchEthereumChain (emits `chainChanged`).
 * Unknown methods reject with EIP-1193 code 4200.
 */
export async function injectWallets(page: Page, wallets: TestWallet[], options: { chainId?: number } = {}): Promise<WalletLog> {
  const log: WalletLog = []
  let chainId = options.chainId ?? 8453
  await page.exposeFunction('__testWalletRequest', async (provider: number, method: string, params: unknown[] = []) => {
    log.push({ method, provider })
    const w = wallets[provider]
    if (!w) throw new Error(`no wallet ${provider}`)
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [w.address]
      case 'eth_chainId':
        return `0x${chainId.toString(16)}`
      case 'net_version':
        return String(chainId)
      case 'personal_sign': {
        const [raw, address] = params as [Hex, Address]
        if (address.toLowerCase() !== w.address.toLowerCase()) throw new Error(`personal_sign for ${address}, wallet is ${w.address}`)
        return w.signMessage(raw)
      }
      case 'eth_signTypedData_v4': {
        const [address, json] = params as [Address, string]
        if (address.toLowerCase() !== w.address.toLowerCase()) throw new Error(`eth_signTypedData_v4 for ${address}, wallet is ${w.address}`)
        const parsed = (typeof json === 'string' ? JSON.parse(json) : json) as TypedDataDefinition & { types: Record<string, unknown> }
        const { EIP712Domain: _ignored, ...types } = parsed.types
        return w.signTypedData({ ...parsed, types } as TypedDataDefinition)
      }
      case 'wallet_switchEthereumChain': {
        chainId = Number.parseInt((params[0] as { chainId: string }).chainId, 16)
        return null
      }
      default:
        throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 })
    }
  })
  const infos = wallets.map((w, i) => ({
    uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    name: w.info?.name ?? (i === 0 ? 'Test Wallet' : `Test Wallet ${i + 1}`),
    rdns: w.info?.rdns ?? (i === 0 ? 'org.pay2store.testwallet' : `org.pay2store.testwallet${i + 1}`),
    // A 1×1 transparent PNG: EIP-6963 requires a data: URI icon.
    icon: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  }))
  await page.addInitScript((infos) => {
    type Listener = (...args: unknown[]) => void
    const w = window as unknown as Record<string, unknown> & { __testWalletRequest: (p: number, m: string, params?: unknown[]) => Promise<unknown> }
    const providers = infos.map((_info, index) => {
      const listeners = new Map<string, Set<Listener>>()
      const emit = (event: string, value: unknown) => listeners.get(event)?.forEach((l) => l(value))
      return Object.freeze({
        isTestWallet: true,
        async request({ method, params }: { method: string; params?: unknown[] }) {
          try {
            const result = await w.__testWalletRequest(index, method, params)
            if (method === 'wallet_switchEthereumChain') emit('chainChanged', (params?.[0] as { chainId: string }).chainId)
            return result
          } catch (e) {
            const message = e instanceof Error ? e.message : String(e)
            throw Object.assign(new Error(message), { code: /unsupported method/.test(message) ? 4200 : -32603 })
          }
        },
        on(event: string, listener: Listener) {
          if (!listeners.has(event)) listeners.set(event, new Set())
          listeners.get(event)!.add(listener)
        },
        removeListener(event: string, listener: Listener) {
          listeners.get(event)?.delete(listener)
        },
      })
    })
    if (providers[0]) Object.defineProperty(window, 'ethereum', { value: providers[0], configurable: true })
    const announce = () =>
      infos.forEach((info, i) => window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info: Object.freeze(info), provider: providers[i] }) })))
    window.addEventListener('eip6963:requestProvider', announce)
    announce()
  }, infos)
  return log
}
