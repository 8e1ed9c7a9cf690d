/**
 * smartread/serve: `serveStatic(root, options)`, a static file handler for node:http and
 * Express/Connect on the confined reader (every path resolved beneath the root by the kernel).
 * @module
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FileRangeStream } from './file_stream';
import type { PathLike } from '../common/args';
import { StaticSite, type Decision, type ServeStaticOptions } from './static_site';
import type { FileEntry } from './file_cache';
import { redirectTarget } from './http_rules';

export type { ServeStaticOptions } from './static_site';
export type { ConfinedStats } from '../read/confine';

/**
 * Express/Connect's continuation, as serveStatic calls it.
 * @param err Nothing: the request is not this handler's (not found, another method); or an
 *   {@link HttpError}.
 */
export type NextFunction = (err?: unknown) => void;

/** serveStatic's handler: a node:http request listener, or middleware with `next`. */
export interface ServeStaticHandler {
  /**
   * Answers one request.
   * @param req The request (GET and HEAD are served; others get 405, or go to `next`).
   * @param res Its response.
   * @param next Express/Connect's continuation: what is not found goes there (with
   *   `fallthrough`), and errors as an {@link HttpError}.
   */
  (req: IncomingMessage, res: ServerResponse, next?: NextFunction): void;
  /** The root directory, resolved. */
  readonly root: string;
  /** Releases the root's descriptor and what is cached; requests after it get 503. */
  close(): void;
  /** close(), for `using`. */
  [Symbol.dispose](): void;
}

/** An error passed to next(): http-errors' shape (status, statusCode, expose, headers). */
export interface HttpError extends Error {
  /** The HTTP status the error stands for (404, 403, 405, 412, 416...). */
  status: number;
  /** The same, under the name Express also reads. */
  statusCode: number;
  /** Whether the message may be shown to the client (true for 4xx). */
  expose: boolean;
  /** Headers the response should carry (Allow for a 405, Content-Range for a 416). */
  headers?: Record<string, string>;
}

// How many times a request is decided again when its file changes between the stat and the read.
const kAttempts = 3;

function httpError(status: number, headers?: string[], cause?: Error): HttpError {
  const err = new Error(STATUS_CODES[status] ?? String(status), cause ? { cause } : undefined) as HttpError;
  err.status = err.statusCode = status;
  err.expose = status < 500;
  if (headers !== undefined && headers.length > 0) {
    err.headers = {};
    for (let i = 0; i < headers.length; i += 2) err.headers[headers[i]] = headers[i + 1];
  }
  return err;
}

/** A short plain-text response for an error status, with nothing the handler before set. */
function sendError(res: ServerResponse, status: number, head: boolean, extra: string[] = []): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  const body = `${STATUS_CODES[status] ?? 'Error'}\n`;
  res.writeHead(status, [
    'content-type', 'text/plain; charset=utf-8',
    'content-length', String(Buffer.byteLength(body)),
    'x-content-type-options', 'nosniff',
    ...extra,
  ]);
  res.end(head ? undefined : body);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A handler that serves the files beneath `root`: `http.createServer(serveStatic('public'))`, or
 * `app.use(serveStatic('public'))` in Express. GET and HEAD; Content-Type from mime-types;
 * ETag and Last-Modified, 304 and 412 on the conditional headers; single byte ranges (206, 416,
 * If-Range); Cache-Control; index.html for a URL ending in `/` and a redirect for a directory
 * named without it; dotfiles ignored; precompressed siblings on request; fallthrough to next()
 * as serve-static does. Every lookup is openat2(RESOLVE_BENEATH) under the root's descriptor: a
 * path that leaves the root (`..`, a symbolic link out) is refused by the kernel (403).
 * @param root The directory to serve (a path, Buffer or file: URL), opened once here.
 * @param options What to serve and how ({@link ServeStaticOptions}).
 */
export function serveStatic(root: PathLike, options?: ServeStaticOptions): ServeStaticHandler {
  const site = new StaticSite(root, options, serveStatic);
  const { setHeaders } = site;

  // The file's headers: straight to writeHead when nothing was set before (node:http's case),
  // else merged so that what a handler before (or setHeaders) set is kept, as send does; the
  // lengths and ranges are always this file's.
  const writeHead = (res: ServerResponse, status: number, headers: string[], entry: FileEntry) => {
    if (setHeaders === undefined && res.getHeaderNames().length === 0) {
      res.writeHead(status, headers);
      return;
    }
    if (setHeaders !== undefined) {
      const [file, stats] = site.describe(entry);
      setHeaders(res, file, stats);
    }
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i];
      if (name === 'content-length' || name === 'content-range' || name === 'content-encoding' || !res.hasHeader(name)) {
        res.setHeader(name, headers[i + 1]);
      }
    }
    res.writeHead(status);
  };

  const fail = (req: IncomingMessage, res: ServerResponse, next: ((err?: unknown) => void) | undefined, d: Extract<Decision, { kind: 'error' }>) => {
    // 405 (with Allow), 412 and 416 are answers about this file, not errors for the
    // application's handler: they are sent as they are.
    if (next !== undefined && d.status !== 405 && d.status !== 412 && d.status !== 416) {
      if (d.fallThrough && site.fallthrough) return next();
      return next(httpError(d.status, d.headers, d.cause));
    }
    if (next !== undefined && d.status === 405 && site.fallthrough) return next();
    sendError(res, d.status, req.method === 'HEAD', d.headers);
  };

  const serve = (req: IncomingMessage, res: ServerResponse, next: ((err?: unknown) => void) | undefined, attempt: number): void => {
    // Under an Express mount, req.url is the part after the mount point, and redirects are made
    // from req.originalUrl; the mount point itself named without its slash is a directory too.
    const url = req.url ?? '/';
    const original = (req as { originalUrl?: string }).originalUrl;
    if (original !== undefined && original !== url && site.redirect && splitUrl(url)[0] === '/' && !splitUrl(original)[0].endsWith('/') &&
        (req.method === 'GET' || req.method === 'HEAD')) {
      return respond(req, res, next, attempt, { kind: 'redirect', location: '' });
    }
    const d = site.decide(req.method, url, req.headers);
    if (!(d instanceof Promise)) return respond(req, res, next, attempt, d);
    // Decided on the thread pool (a cold name, a server's mount): the client may have gone.
    d.then((later) => {
      if (!res.destroyed) respond(req, res, next, attempt, later);
    }).catch((err: Error) => fail(req, res, next, { kind: 'error', status: 500, fallThrough: false, cause: err }));
  };

  const respond = (req: IncomingMessage, res: ServerResponse, next: ((err?: unknown) => void) | undefined, attempt: number, d: Decision): void => {
    const original = (req as { originalUrl?: string }).originalUrl;
    switch (d.kind) {
      case 'error':
        return fail(req, res, next, d);
      case 'redirect': {
        let location = d.location;
        if (original !== undefined && original !== (req.url ?? '/')) {
          const [pathname, search] = splitUrl(original);
          location = redirectTarget(pathname + '/', search);
        }
        const body = `Redirecting to <a href="${escapeHtml(location)}">${escapeHtml(location)}</a>\n`;
        res.writeHead(301, [
          'location', location,
          'content-type', 'text/html; charset=utf-8',
          'content-length', String(Buffer.byteLength(body)),
          'content-security-policy', "default-src 'none'",
          'x-content-type-options', 'nosniff',
        ]);
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      case 'not-modified':
        writeHead(res, 304, d.headers, d.entry);
        res.end();
        return;
      case 'file':
        break;
    }
    const { entry, status, start, end, headers } = d;
    if (req.method === 'HEAD' || end < start) {
      writeHead(res, status, headers, entry);
      res.end();
      return;
    }
    if (entry.body !== null) {
      writeHead(res, status, headers, entry);
      res.end(status === 200 ? entry.body : entry.body.subarray(start, end + 1));
      return;
    }
    const retry = () => {
      if (attempt + 1 < kAttempts) serve(req, res, next, attempt + 1);
      else fail(req, res, next, { kind: 'error', status: 500, fallThrough: false, cause: new Error(`'${entry.rel}' kept changing while it was read`) });
    };
    if (entry.size < site.streamFrom) {
      site.readWhole(entry).then((body) => {
        if (res.destroyed) return;
        if (body === 'changed') return retry();
        writeHead(res, status, headers, entry);
        res.end(status === 200 ? body : body.subarray(start, end + 1));
      }).catch((err: Error) => fail(req, res, next, { kind: 'error', status: 500, fallThrough: false, cause: err }));
      return;
    }
    site.openStream(entry, start, end).then((stream) => {
      if (stream === 'changed') return retry();
      // The client went away while the file was opened (a server's mount): nothing to send.
      if (res.destroyed) return stream.destroy();
      writeHead(res, status, headers, entry);
      sendStream(stream, res);
    }).catch((err: Error) => fail(req, res, next, { kind: 'error', status: 500, fallThrough: false, cause: err }));
  };

  const handler = ((req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => {
    try {
      serve(req, res, next, 0);
    } catch (err) {
      fail(req, res, next, { kind: 'error', status: 500, fallThrough: false, cause: err as Error });
    }
  }) as ServeStaticHandler;
  Object.defineProperty(handler, 'root', { value: site.rootPath, enumerable: true });
  handler.close = () => site.close();
  handler[Symbol.dispose] = handler.close;
  return handler;
}

/**
 * Writes the stream to the response, pausing it while the response is full; each chunk goes back
 * to the stream for its next reads once the socket has written it. A client that goes away
 * closes the response, which destroys the stream: the reads in flight come back and the
 * descriptor is closed. A read that fails cuts the response short (its length was promised).
 */
function sendStream(stream: FileRangeStream, res: ServerResponse): void {
  const resume = () => stream.resume();
  stream.on('data', (chunk: Buffer) => {
    if (!res.write(chunk, () => stream.recycle(chunk))) stream.pause();
  });
  res.on('drain', resume);
  stream.once('end', () => res.end());
  stream.once('error', (err) => res.destroy(err));
  res.once('close', () => {
    res.off('drain', resume);
    stream.destroy();
  });
}

/** The original URL's path and query (Express keeps it as req.originalUrl under a mount). */
function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  return q === -1 ? [url, ''] : [url.slice(0, q), url.slice(q)];
}
