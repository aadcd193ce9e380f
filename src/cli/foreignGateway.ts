/**
 * `store --devnet B --gateway A`: the link is devnet B's Arweave gateway, but A stores the bytes wherever A is
 * configured to. A gateway started from B's devnet.json asks to be paid at B's service address (random per
 * devnet, `service.payToEvm` / `service.payToAlgorand`); one that asks for another address is another system,
 * and B's Arweave gateway is most likely not where its bytes go. No answer of a gateway names its Arweave
 * gateway, so the right link cannot be derived: the result says so instead of printing the other system's link
 * without a word.
 */
import type { ArweaveChoice } from './devnetFile.js'

/** An EVM address in any letter case is one address; an Algorand address is compared as written. */
const sameAddress = (a: string, b: string) => (a.startsWith('0x') ? a.toLowerCase() === b.toLowerCase() : a === b)

/** The warning for a link taken from a devnet whose gateway is not `gateway` (paid at `payTo`), else undefined. */
export function foreignGatewayWarning(choice: ArweaveChoice, gateway: string, payTo: string): string | undefined {
  const devnet = choice.devnet
  // a devnet file without its service addresses (written by hand, or older) gives nothing to compare
  if (!devnet || devnet.payTo.length === 0 || devnet.payTo.some((a) => sameAddress(a, payTo))) return undefined
  return (
    `${gateway} is not the gateway of devnet ${devnet.path} (it is paid at ${payTo}, that devnet's gateway at ${devnet.payTo.join(' or ')}): ` +
    `the link is that devnet's Arweave gateway ${choice.url}, which is likely not where ${gateway} stored it — ` +
    `pass --arweave with the Arweave gateway ${gateway} stores to (verify needs it too)`
  )
}
