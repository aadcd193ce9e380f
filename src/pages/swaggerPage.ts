/** Where the swagger-ui assets are mounted (a public static prefix; see `src/app.ts`). */
export const SWAGGER_ASSETS = '/static/swagger-ui'

/** Both API documents, served locally under the public `/doc/` prefix. */
export const apiDocuments = [
  { url: '/doc/openapi/gateway.yaml', name: 'Gateway API' },
  { url: '/doc/openapi/modelserver.yaml', name: 'Model server API' },
]

/** `/docs`: swagger-ui with every asset served by the gateway itself (no CDN, no online validator). */
export function swaggerPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>API explorer · Gateway</title>
<link rel="stylesheet" href="${SWAGGER_ASSETS}/swagger-ui.css">
<link rel="icon" type="image/png" href="${SWAGGER_ASSETS}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${SWAGGER_ASSETS}/swagger-ui-bundle.js"></script>
<script src="${SWAGGER_ASSETS}/swagger-ui-standalone-preset.js"></script>
<script src="${SWAGGER_ASSETS}/swagger-ui-init.js"></script>
</body>
</html>
`
}

/** Options for swagger-ui-express's `serveFiles` (it writes `swagger-ui-init.js` from them). */
export const swaggerUiOptions = {
  swaggerUrl: apiDocuments[0]!.url,
  swaggerUrls: apiDocuments,
  swaggerOptions: { validatorUrl: null, persistAuthorization: true },
}
