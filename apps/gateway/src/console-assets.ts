import { createReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { markRoute } from './metrics.js';

/** Paths the gateway's own routes answer (each with everything below it): the console never shadows them, not even with its fallback page. */
export const RESERVED_PATHS = ['/v1', '/docs', '/metrics', '/health'] as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Built assets carry a content hash in their name (`app-N7RX5LXF.js`): they never change, so browsers keep them. */
const HASHED = /-[A-Z0-9]{8}\.[a-z0-9]+(\.map)?$/;

function reserved(pathname: string): boolean {
  return RESERVED_PATHS.some((p) => pathname === p || pathname.startsWith(`${p}/`));
}

/**
 * Serves the web console (the files `npm run build` writes to apps/console/dist/public) at `/`:
 * GET and HEAD only; hashed assets cached for a year (immutable), index.html and everything else
 * revalidated (no-cache); any other path without a file extension that a browser asks for as a
 * page (`/tribunal`, `/dialectic/<id>`) gets index.html, so page addresses can be reloaded and
 * bookmarked. The gateway's own routes (/v1, /docs, /metrics, /health) are never taken; neither
 * is anything when the console is not built (`/` then explains how to build it).
 */
export function consoleAssets(dir: string | undefined): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const root = dir === undefined ? undefined : normalize(dir.endsWith(sep) ? dir : `${dir}${sep}`);
  return (req, res, next) => {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') return next();
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://gateway').pathname);
    } catch {
      return next();
    }
    if (reserved(pathname) || pathname.includes('\0')) return next();
    void serve(root, pathname, req, res).then((served) => {
      if (!served) next();
    }, next);
  };
}

async function fileAt(root: string, pathname: string): Promise<{ path: string; stats: Stats } | undefined> {
  const path = normalize(join(root, pathname));
  // `..` never leaves the console's directory.
  if (!path.startsWith(root)) return undefined;
  try {
    const stats = await stat(path);
    return stats.isFile() ? { path, stats } : undefined;
  } catch {
    return undefined;
  }
}

/** A browser navigating to a page asks for text/html; an API client (any type, JSON) keeps getting the gateway's JSON 404. */
function wantsPage(req: IncomingMessage, pathname: string): boolean {
  return extname(pathname) === '' && (req.headers.accept ?? '').includes('text/html');
}

async function serve(root: string | undefined, pathname: string, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (root === undefined) {
    if (pathname !== '/') return false;
    markRoute(req, '/');
    const text = 'The web console is not built: run `npm run build` (or `npm start`, which builds), then reload.\n';
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'content-length': String(Buffer.byteLength(text)) });
    res.end(req.method === 'HEAD' ? undefined : text);
    return true;
  }
  let file = pathname === '/' ? undefined : await fileAt(root, pathname);
  let page = false;
  if (!file) {
    if (pathname !== '/' && !wantsPage(req, pathname)) return false;
    file = await fileAt(root, '/index.html');
    page = true;
    if (!file) return false;
  }
  markRoute(req, page ? '/' : '/<console asset>');
  const etag = `W/"${file.stats.size.toString(16)}-${Math.floor(file.stats.mtimeMs).toString(16)}"`;
  const headers: Record<string, string> = {
    'content-type': CONTENT_TYPES[extname(file.path)] ?? 'application/octet-stream',
    'cache-control': !page && HASHED.test(file.path) ? 'public, max-age=31536000, immutable' : 'no-cache',
    etag,
    'x-content-type-options': 'nosniff',
  };
  if (page) {
    // The console talks only to this gateway; nothing is loaded from elsewhere.
    headers['content-security-policy'] = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
    headers['referrer-policy'] = 'no-referrer';
  }
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    res.end();
    return true;
  }
  headers['content-length'] = String(file.stats.size);
  res.writeHead(200, headers);
  if (req.method === 'HEAD') {
    res.end();
    return true;
  }
  await new Promise<void>((resolve) => {
    const stream = createReadStream(file.path);
    stream.once('error', () => {
      res.destroy();
      resolve();
    });
    stream.once('end', resolve);
    stream.pipe(res);
  });
  return true;
}
