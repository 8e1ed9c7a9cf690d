// smartread/serve and smartread/serve/fastify as typed for a CommonJS user: the handler fits
// node:http and Express-style middleware, the plugin fits fastify.register, and bad options
// are refused by the compiler.
import * as http from 'node:http';
import Fastify from 'fastify';
import { serveStatic, type ServeStaticHandler, type ServeStaticOptions } from 'smartread/serve';
import serveStaticPlugin, { type FastifyServeStaticOptions } from 'smartread/serve/fastify';
import { expectType } from './assert';

const handler = serveStatic('public', { maxAge: 3_600_000, immutable: true, precompressed: ['br'], dotfiles: 'deny' });
expectType<ServeStaticHandler>()(handler);
http.createServer(handler);
const middleware: (req: http.IncomingMessage, res: http.ServerResponse, next: (err?: unknown) => void) => void = handler;
void middleware;
expectType<string>()(handler.root);
handler.close();
const options: ServeStaticOptions = { index: ['index.html', 'index.htm'], etag: 'weak', cache: { maxBytes: 1 << 20 } };
void options;
// @ts-expect-error: not a dotfiles policy
serveStatic('public', { dotfiles: 'hide' });
// @ts-expect-error: maxAge is a number of milliseconds
serveStatic('public', { maxAge: '1d' });

const app = Fastify();
app.register(serveStaticPlugin, { root: 'public', prefix: '/assets/', precompressed: true });
app.get('/', (_request, reply) => reply.sendFile('index.html'));
const pluginOptions: FastifyServeStaticOptions = { root: new URL('file:///srv/www/') };
void pluginOptions;
