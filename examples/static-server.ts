// A small static file server on node:http, serving one directory: with smartread's confined
// reader (the kernel keeps every read beneath the root), or, for comparison, with
// fs.promises.readFile behind a path check in JavaScript. ETag and If-None-Match, single byte
// ranges, and 404/403 from the error codes.
//
//   node build/examples/static-server.js --root DIR [--port 0] [--backend smartread|fs]
//
// It prints `listening on http://127.0.0.1:PORT` once it accepts connections.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { createReader, type ConfinedStats } from 'smartread';

/** What the server needs of a file: its metadata, its bytes, and a range of them. */
export interface Backend {
  readonly name: string;
  stat(rel: string): ConfinedStats | fs.Stats | Promise<ConfinedStats | fs.Stats>;
  read(rel: string): Promise<Buffer>;
  /** Bytes [start, end] (inclusive, as in a Range header) of a file of at least end + 1 bytes. */
  readRange(rel: string, start: number, end: number): Promise<Buffer>;
  close(): void;
}

/** smartread: every lookup and read resolved beneath the root by openat2 (RESOLVE_BENEATH). */
export function smartreadBackend(root: string): Backend {
  const reader = createReader({ root });
  return {
    name: 'smartread',
    stat: (rel) => reader.statSync(rel),
    read: (rel) => reader.smartRead(rel) as Promise<Buffer>,
    readRange: (rel, start, end) => reader.readRange(rel, start, end - start + 1),
    close: () => reader.close(),
  };
}

/** node:fs: the path is resolved in JavaScript and refused if it leaves the root (symbolic links
 * inside the root that point out are not caught: only the kernel could). */
export function fsBackend(root: string): Backend {
  const base = path.resolve(root);
  const resolve = (rel: string) => {
    const full = path.resolve(base, rel);
    if (full !== base && !full.startsWith(base + path.sep)) {
      throw Object.assign(new Error(`'${rel}' resolves outside the root`), { code: 'ERR_OUTSIDE_ROOT' });
    }
    return full;
  };
  return {
    name: 'fs',
    stat: (rel) => fs.promises.stat(resolve(rel)),
    read: (rel) => fs.promises.readFile(resolve(rel)),
    async readRange(rel, start, end) {
      const handle = await fs.promises.open(resolve(rel), 'r');
      try {
        const buffer = Buffer.allocUnsafe(end - start + 1);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    },
    close() {},
  };
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.wasm': 'application/wasm',
};

// What an error code means to a client. A path that leaves the root, a link the confinement
// refuses (ELOOP) and a permission problem are all "forbidden"; a name that is not there is
// "not found".
function statusOf(err: unknown): number {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ENOENT':
    case 'ENOTDIR':
    case 'ENAMETOOLONG':
    case 'EISDIR':
      return 404;
    case 'EACCES':
    case 'EPERM':
    case 'ELOOP':
    case 'ERR_SMARTREAD_OUTSIDE_ROOT':
    case 'ERR_OUTSIDE_ROOT':
    case 'ERR_INVALID_ARG_VALUE': // a NUL byte in the name
      return 403;
    default:
      return 500;
  }
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` against a size: [start, end], 'unsatisfiable', or null
 * for a header this server ignores (several ranges, another unit), which gets the whole file. */
export function parseRange(header: string, size: number): [number, number] | 'unsatisfiable' | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return [start, end];
}

export function createServer(backend: Backend): http.Server {
  return http.createServer(async (req, res) => {
    const send = (status: number, body: string | Buffer = '', headers: http.OutgoingHttpHeaders = {}) => {
      res.writeHead(status, { 'content-length': Buffer.byteLength(body), ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, '', { allow: 'GET, HEAD' });
    let rel: string;
    try {
      rel = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, '');
    } catch {
      return send(400, 'bad request\n');
    }
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    try {
      const st = await backend.stat(rel);
      if (!st.isFile()) return send(404, 'not found\n');
      const etag = `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
      const headers: http.OutgoingHttpHeaders = {
        etag,
        'accept-ranges': 'bytes',
        'content-type': contentTypes[path.extname(rel)] ?? 'application/octet-stream',
      };
      if (req.headers['if-none-match'] === etag) return send(304, '', { etag });
      const range = req.headers.range ? parseRange(req.headers.range, st.size) : null;
      if (range === 'unsatisfiable') return send(416, '', { 'content-range': `bytes */${st.size}` });
      if (range) {
        const body = await backend.readRange(rel, range[0], range[1]);
        return send(206, body, { ...headers, 'content-range': `bytes ${range[0]}-${range[0] + body.length - 1}/${st.size}` });
      }
      return send(200, await backend.read(rel), headers);
    } catch (err) {
      const status = statusOf(err);
      return send(status, status === 404 ? 'not found\n' : status === 403 ? 'forbidden\n' : 'error\n');
    }
  });
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      root: { type: 'string' },
      port: { type: 'string', default: '0' },
      backend: { type: 'string', default: 'smartread' },
    },
  });
  if (!values.root || (values.backend !== 'smartread' && values.backend !== 'fs')) {
    process.stderr.write('usage: static-server --root DIR [--port N] [--backend smartread|fs]\n');
    process.exit(2);
  }
  const backend = values.backend === 'fs' ? fsBackend(values.root) : smartreadBackend(values.root);
  const server = createServer(backend);
  server.listen(Number(values.port), '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`listening on http://127.0.0.1:${port} (${backend.name}, root ${values.root})\n`);
  });
  const stop = () => server.close(() => backend.close());
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
