// A static file server for one directory on node:http: serveStatic from smartread/serve, which
// resolves every path beneath the root in the kernel (openat2 RESOLVE_BENEATH) and answers as
// send, serve-static and sirv do (ETag, 304, ranges, index.html, redirects, dotfiles...).
//
//   node build/examples/static-server.js --root DIR [--port 0] [--max-age SECONDS] [--precompressed]
//
// It prints `listening on http://127.0.0.1:PORT` once it accepts connections.
import * as http from 'node:http';
import { parseArgs } from 'node:util';
import { serveStatic } from 'smartread/serve';

const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    port: { type: 'string', default: '0' },
    'max-age': { type: 'string', default: '0' },
    precompressed: { type: 'boolean', default: false },
  },
});
if (!values.root) {
  process.stderr.write('usage: static-server --root DIR [--port N] [--max-age SECONDS] [--precompressed]\n');
  process.exit(2);
}
const handler = serveStatic(values.root, { maxAge: Number(values['max-age']) * 1000, precompressed: values.precompressed });
const server = http.createServer(handler);
server.listen(Number(values.port), '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${port} (root ${handler.root})\n`);
});
const stop = () => server.close(() => handler.close());
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
