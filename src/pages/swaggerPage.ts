import { contentSecurityPolicy, NAV_SCRIPT, NAV_STYLE, navHtml } from './html.js'

/** Where the swagger-ui assets are mounted (a public static prefix; see `src/app.ts`). */
export const SWAGGER_ASSETS = '/static/swagger-ui'

/** Both API documents, served locally under the public `/doc/` prefix. */
export const apiDocuments = [
  { url: '/doc/openapi/gateway.yaml', name: 'Gateway API' },
  { url: '/doc/openapi/modelserver.yaml', name: 'Model server API' },
]

/**
 * `/docs`: swagger-ui with every asset served by the gateway itself (no CDN, no online validator), under the
 * site's shared navigation (so the explorer is not a dead end). `wallet` is the session's, as on the other pages.
 */
export function swaggerPage(wallet?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>API explorer · Gateway</title>
<link rel="stylesheet" href="${SWAGGER_ASSETS}/swagger-ui.css">
<link rel="icon" type="image/png" href="${SWAGGER_ASSETS}/favicon-32x32.png">
<style>body{margin:0;font-family:system-ui,sans-serif}.site-nav{color:#e6e6e6}.site-nav code{background:#0f1115;color:#e6e6e6;padding:2px 6px;border-radius:4px}.site-nav button{border-radius:6px;border:1px solid #3a3f4b;background:#2b6cb0;color:#fff;cursor:pointer;font:inherit}${NAV_STYLE}</style>
</head>
<body>
${navHtml(wallet)}
<main><h1 class="visually-hidden" style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)">API explorer</h1><div id="swagger-ui"></div></main>
<script>${NAV_SCRIPT}</script>
<script src="${SWAGGER_ASSETS}/swagger-ui-bundle.js"></script>
<script src="${SWAGGER_ASSETS}/swagger-ui-standalone-preset.js"></script>
<script src="${SWAGGER_ASSETS}/swagger-ui-init.js"></script>
</body>
</html>
`
}

/**
 * The Content-Security-Policy of `/docs`, as every other page has: scripts only from this origin (swagger-ui's
 * bundle, preset and `swagger-ui-init.js` are served by the gateway) plus the one inline script by its hash,
 * requests (the documents, "Try it out") to this origin only, no framing. swagger-ui sets inline styles on the
 * elements it renders, which the shared policy's `style-src 'unsafe-inline'` allows; it needs no `eval`.
 */
export function swaggerPageCsp(html: string): string {
  return contentSecurityPolicy(html)
}

/** Options for swagger-ui-express's `serveFiles` (it writes `swagger-ui-init.js` from them). */
export const swaggerUiOptions = {
  swaggerUrl: apiDocuments[0]!.url,
  swaggerUrls: apiDocuments,
  swaggerOptions: { validatorUrl: null, persistAuthorization: true },
}
