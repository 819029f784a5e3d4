import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildDocuments, SIGNING_SPEC } from '@agora/contracts';
import { GatewayError, sendJson } from './http-reply.js';
import { markRoute } from './metrics.js';

/**
 * /docs for people: the OpenAPI document rendered by Swagger UI (the `swagger-ui-dist` package,
 * served from node_modules: no CDN, it works offline), with links to the AsyncAPI document, the
 * JSON Schemas and the signing specification, all served by the gateway itself. API clients (any
 * Accept without text/html) keep getting the OpenAPI JSON at /docs, as before.
 */
export class DocsSite {
  private files: Record<string, string> | undefined;
  private readonly swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

  /** @param openApi the gateway's OpenAPI document (its catalog), made on first use. */
  constructor(private readonly openApi: () => unknown) {}

  /** Answers GET /docs and everything below it; a path it does not know is `not_found`. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (path === '/docs' && (req.headers.accept ?? '').includes('text/html')) {
      markRoute(req, '/docs');
      return this.send(res, 'text/html; charset=utf-8', this.page(), 'no-cache', PAGE_SECURITY);
    }
    if (path === '/docs' || path === '/docs/openapi.json') {
      markRoute(req, path);
      return sendJson(res, 200, this.openApi(), { 'cache-control': 'public, max-age=60' });
    }
    if (path === '/docs/asyncapi.json' || path.startsWith('/docs/json-schema/')) {
      markRoute(req, path === '/docs/asyncapi.json' ? path : '/docs/json-schema/<file>');
      const content = this.generated()[path.slice('/docs/'.length)];
      if (content === undefined) throw new GatewayError('not_found', `no document at ${path}; /docs lists them`, { path });
      return this.send(res, 'application/json; charset=utf-8', content, 'public, max-age=60');
    }
    if (path === '/docs/signing.md') {
      markRoute(req, path);
      // text/plain: a browser shows it rather than offering a download.
      return this.send(res, 'text/plain; charset=utf-8', SIGNING_SPEC, 'public, max-age=60');
    }
    if (path === '/docs/assets/docs.js') {
      markRoute(req, '/docs/assets/<file>');
      return this.send(res, 'text/javascript; charset=utf-8', INIT_SCRIPT, 'no-cache');
    }
    const asset = VIEWER_ASSETS[path.slice('/docs/assets/'.length)];
    if (path.startsWith('/docs/assets/') && asset !== undefined) {
      markRoute(req, '/docs/assets/<file>');
      res.writeHead(200, { 'content-type': asset, 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' });
      createReadStream(join(this.swaggerDir, path.slice('/docs/assets/'.length)))
        .once('error', () => res.destroy())
        .pipe(res);
      return;
    }
    throw new GatewayError('not_found', `no route GET ${path}; /docs lists the documents`, { path });
  }

  /** The documents `npm run contracts` writes (AsyncAPI, JSON Schemas), made once on first use. */
  private generated(): Record<string, string> {
    return (this.files ??= buildDocuments().files);
  }

  private page(): string {
    const schemas = Object.keys(this.generated())
      .filter((p) => p.startsWith('json-schema/'))
      .sort();
    const groups = new Map<string, string[]>();
    for (const p of schemas) {
      const parts = p.split('/');
      const group = parts.length > 2 ? parts[1]! : 'envelope';
      groups.set(group, [...(groups.get(group) ?? []), p]);
    }
    const list = [...groups]
      .map(([group, paths]) => `<details><summary>${escape(group)} (${paths.length})</summary><ul>${paths.map((p) => `<li><a href="/docs/${escape(p)}">${escape(p.split('/').pop()!.replace(/\.json$/, ''))}</a></li>`).join('')}</ul></details>`)
      .join('');
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agora API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<style>.agora-docs{font-family:sans-serif;max-width:1420px;margin:0 auto;padding:12px 20px 0}.agora-docs details{display:inline-block;margin-right:14px;vertical-align:top}.agora-docs details ul{max-height:260px;overflow:auto}</style>
</head>
<body>
<header class="agora-docs">
<h1>Agora API reference</h1>
<p>HTTP below (OpenAPI 3.1, <a href="/docs/openapi.json">openapi.json</a>). For agents on NATS and clients in other languages:</p>
<ul>
<li><a href="/docs/asyncapi.json">AsyncAPI 3 document</a>: every command, query and event subject</li>
<li><a href="/docs/signing.md">Signing specification</a>: how to sign a command in any language</li>
<li>JSON Schemas (draft 2020-12): ${list}</li>
</ul>
</header>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
`;
  }

  private send(res: ServerResponse, contentType: string, body: string, cacheControl: string, extra: Record<string, string> = {}): void {
    res.writeHead(200, { 'content-type': contentType, 'cache-control': cacheControl, 'content-length': String(Buffer.byteLength(body)), 'x-content-type-options': 'nosniff', ...extra });
    res.end(body);
  }
}

/** The files of swagger-ui-dist the page loads, and their types. */
const VIEWER_ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** Nothing from elsewhere; Swagger UI sets inline styles, hence 'unsafe-inline' for styles only. */
const PAGE_SECURITY = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'referrer-policy': 'no-referrer',
};

const INIT_SCRIPT = `// Renders /docs/openapi.json with Swagger UI (swagger-ui-dist, served by the gateway).
window.ui = SwaggerUIBundle({
  url: '/docs/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  defaultModelsExpandDepth: 1,
  docExpansion: 'list',
  validatorUrl: null,
  tryItOutEnabled: false,
});
`;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
