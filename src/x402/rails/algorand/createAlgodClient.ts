import algosdk from 'algosdk'

/** algosdk wants the port apart from the base URL (an empty port would drop it). */
export function createAlgodClient(url: string, token: string): algosdk.Algodv2 {
  const u = new URL(url)
  const port = u.port
  u.port = ''
  const base = u.toString().replace(/\/+$/, '')
  return new algosdk.Algodv2(token, base, port || undefined)
}
