import { createHash } from 'node:crypto'

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** A value embedded in an inline script: JSON with `<` escaped, so `</script>` can never close the tag. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

const style = `
  body{font-family:system-ui,sans-serif;margin:0;background:#0f1115;color:#e6e6e6}
  header{padding:12px 20px;background:#181b22;display:flex;gap:16px;align-items:center}
  header a{color:#9ecbff;text-decoration:none} main{padding:24px 20px;max-width:860px}
  button{padding:8px 14px;border-radius:6px;border:1px solid #3a3f4b;background:#2b6cb0;color:#fff;cursor:pointer}
  code,pre{background:#181b22;padding:2px 6px;border-radius:4px} .muted{color:#9aa3b2} .error{color:#ff8a8a}
`

export type PageParameters = { title: string; body: string; script?: string | undefined }

/** The shared page shell (no external assets). */
export function page({ title, body, script }: PageParameters): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Gateway</title>
<link rel="icon" href="data:,">
<style>${style}</style>
</head>
<body>
<header><strong>Gateway</strong><a href="/public">Home</a><a href="/journal">Journal</a><a href="/insight/">Insight</a><a href="/docs">API docs</a><a href="/login">Login</a></header>
<main>
${body}
</main>
${script ? `<script>${script}</script>` : ''}
</body>
</html>
`
}

/**
 * Content-Security-Policy for a server-rendered page: only this origin, and inline scripts only by the
 * SHA-256 of the exact scripts the page carries (no other inline script can run — an injected one fails).
 * Framing is refused (no clickjacking of the login button).
 */
export function contentSecurityPolicy(html: string): string {
  const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`)
  return [
    "default-src 'self'",
    `script-src 'self'${hashes.length ? ` ${hashes.join(' ')}` : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}
